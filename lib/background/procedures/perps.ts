/** Handlers of the perps procedures the popup calls (contract: lib/messaging/perps.ts). */
import { requireActiveAccount } from '../../accounts';
import type { PERPS_CONTRACT } from '../../messaging/perps';
import { commandFromBody } from '../../perps/commands';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** A signed command for the active account (`NotActiveAccountError` otherwise; the click is the consent) and the gateway's reads. */
export function perpsProcedures(d: ProcedureDeps): ContractHandlers<typeof PERPS_CONTRACT> {
  const { vault, db, service } = d;
  return {
    'perps.send': async ({ account, op, label, exp }) => {
      await requireActiveAccount(db, vault, account);
      const command = commandFromBody(op, label);
      return service.perpsSend(account, command, { origin: 'extension', ...(exp === undefined ? {} : { exp }) });
    },
    'perps.read': async ({ account, name, query }) => service.perpsRead(account, name, query),
  };
}
