/** Handlers of the perps procedures the popup calls (contract: lib/messaging/perps.ts). */
import { requireActiveAccount } from '../../accounts';
import type { PERPS_CONTRACT } from '../../messaging/perps';
import { commandFromBody } from '../../perps/commands';
import { InvalidFieldError } from '../../validation';
import { parseCommandAnswer } from '../../perps/wire';
import { PERSON_SCOPES } from '../../authority/epoch';
import type { ContractHandlers, ProcedureDeps } from './deps';

/**
 * A signed command for the active account (`NotActiveAccountError` otherwise; the click is the consent) and the
 * gateway's reads. `createProxy` is refused (`InvalidFieldError` on `op.type`): its answer carries the proxy's secret,
 * which never reaches the popup — `proxy.issue` issues proxies. The approval window's reads draw on the sites' share of
 * the weight budget (they show a site's request), the popup's on the person's; a popup's read may be answered by the
 * same read started ahead of it (`../read-ahead.ts`).
 */
export function perpsProcedures(d: ProcedureDeps): ContractHandlers<typeof PERPS_CONTRACT> {
  const { vault, db, service } = d;
  return {
    'perps.send': async ({ account, op, label, exp }) => {
      // The authority of the click, from the start: a switch, lock or venue change while the account is checked sends
      // nothing.
      const authority = service.authority.capture(PERSON_SCOPES);
      await requireActiveAccount(db, vault, account);
      // Proxy issuance answers the proxy's secret: only `proxy.issue` issues proxies (the secret stays in the vault).
      if (op.type === 'createProxy')
        throw new InvalidFieldError({ field: 'op.type', reason: 'createProxy goes through proxy.issue' });
      const command = commandFromBody(op, label);
      return parseCommandAnswer(
        await service.perpsSend(account, command, {
          origin: 'extension',
          authority,
          ...(exp === undefined ? {} : { exp }),
        }),
      );
    },
    // The approval window reads to show a site's request: those reads are the site's (lib/ratelimit/reserve.ts).
    'perps.read': async ({ account, name, query }, sender) => {
      const draw = sender.kind === 'approval' ? 'site' : 'person';
      const fresh = () => d.reads.perpsRead(account, name, query, { draw });
      // The same read started ahead of the popup at its watch (drawn on the person's share): taken once.
      const ahead =
        draw === 'person'
          ? d.readAhead?.take({ ...(account ? { account } : {}), name, ...(query ? { query } : {}) })
          : undefined;
      if (!ahead) return fresh();
      ahead.catch(() => undefined); // answered below, or dropped when the key check throws
      // A proxy-header read answers only while the account's proxy key opens now, as a fresh read would need.
      if (account) await vault.proxyFor(account);
      return (ahead as ReturnType<typeof fresh>).catch(fresh);
    },
  };
}
