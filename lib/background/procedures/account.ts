/** Handler of the account switch (contract: lib/messaging/accounts.ts). */
import { selectAccount } from '../../accounts';
import { appendAudit } from '../../audit';
import type { ACCOUNT_CONTRACT } from '../../messaging/accounts';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/**
 * `account.select`: switches the active account; when it changed, audits it and tells the background
 * (`onAccountChanged`).
 */
export function accountProcedures(d: ProcedureDeps): ContractHandlers<typeof ACCOUNT_CONTRACT> {
  const { vault, db } = d;
  return {
    'account.select': async ({ address }) => {
      const { active, changed } = await selectAccount(db, vault, address);
      if (changed) {
        // First: what was started for the previous account ends before anything else awaits.
        const told = d.onAccountChanged(active.address);
        await appendAudit(auditOf(d), {
          at: Date.now(),
          origin: 'extension',
          account: active.address.toLowerCase(),
          kind: 'account.switch',
          summary: `Switched the active account to ${active.address}`,
          result: 'ok',
        });
        await told;
      }
      return { activeAccount: active.address, changed };
    },
  };
}
