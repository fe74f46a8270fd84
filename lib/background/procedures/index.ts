/**
 * Handlers of the popup / approval-window procedures, one module per domain beside this file (the
 * contract — names, input and output schemas, senders — lives in `lib/messaging/`). Replies carry
 * addresses, labels, expiries and gateway answers — never a private key, proxy secret or API secret
 * (except `vault.revealOwnerKey`).
 */
import type { Handlers } from '../../messaging/router';
import type { ProcedureName } from '../../messaging/protocol';
import { accountProcedures } from './account';
import { approvalProcedures } from './approvals';
import { auditProcedures } from './audit';
import { clobProcedures } from './clob';
import { depositProcedures } from './deposit';
import type { ProcedureDeps } from './deps';
import { grantProcedures } from './grants';
import { perpsProcedures } from './perps';
import { proxyProcedures } from './proxy';
import { gatewayReads } from './reads';
import { sessionProcedures } from './session';
import { settingsProcedures } from './settings';
import { vaultProcedures } from './vault';

export type { ProcedureDeps } from './deps';

/**
 * What an extension page may call during a trading session: the vault's status, unlock and lock, the grants list and
 * revoke, the dead-man status, panic, the approval window's own calls, a person's presence (`session.activity`), the
 * settings read (`settings.get`) and the streams' status (`streams.status`). Everything else (owner-key commands,
 * reveal, backup, settings changes, new grants, popup trading, audit) needs the password again: `VaultLockedError`
 * (4900).
 */
export const SESSION_PROCEDURES: ReadonlySet<string> = new Set<ProcedureName>([
  'vault.status',
  'vault.unlock',
  'vault.lock',
  'grant.list',
  'grant.revoke',
  'deadman.status',
  'panic.run',
  'approval.list',
  'approval.showing',
  'approval.empty',
  'approval.decide',
  'session.activity',
  'settings.get',
  'streams.status',
]);

/**
 * Builds every procedure's handler from `deps` (each domain module gets the same typed object); `streams.status` /
 * `streams.watch` are the composition's (lib/background/compose.ts, over lib/background/streams.ts) and
 * `notifications.*` are lib/background/notifications.ts's.
 */
export function createProcedures(
  deps: ProcedureDeps,
): Omit<Handlers, 'streams.status' | 'streams.watch' | 'notifications.get' | 'notifications.set'> {
  return {
    ...vaultProcedures(deps),
    ...accountProcedures(deps),
    ...settingsProcedures(deps),
    ...proxyProcedures(deps),
    ...clobProcedures(deps),
    ...depositProcedures(deps),
    ...perpsProcedures(deps),
    ...gatewayReads(deps),
    ...auditProcedures(deps),
    ...approvalProcedures(deps),
    ...grantProcedures(deps),
    ...sessionProcedures(deps),
  };
}
