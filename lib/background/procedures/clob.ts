/** Handlers of the order-book procedures the popup calls (contract: lib/messaging/clob.ts). */
import { requireActiveAccount } from '../../accounts';
import type { CLOB_CONTRACT } from '../../messaging/clob';
import { PERSON_SCOPES } from '../../authority/epoch';
import type { ContractHandlers, ProcedureDeps } from './deps';

/**
 * API credentials, orders (active account only: `NotActiveAccountError`), cancels, open orders. Each
 * signing procedure holds the person's authority from its start (`PERSON_SCOPES`).
 */
export function clobProcedures(d: ProcedureDeps): ContractHandlers<typeof CLOB_CONTRACT> {
  const { vault, db, service } = d;
  return {
    'clob.createOrDerive': async ({ account, nonce }) => {
      const authority = service.authority.capture(PERSON_SCOPES);
      const { info, derived } = await service.clobCreateOrDerive(account, {
        authority,
        ...(nonce === undefined ? {} : { nonce }),
      });
      return { account: info.account, nonce: info.nonce, derived };
    },
    'clob.rotateCredentials': async ({ account }) => {
      const authority = service.authority.capture(PERSON_SCOPES);
      const { info, oldDeleted } = await service.clobRotateCredentials(account, { authority });
      return { account: info.account, nonce: info.nonce, oldDeleted };
    },
    'clob.postOrders': async ({ account, orders }) => {
      // The authority of the click, from the start: a switch, lock or venue change while the account is checked sends
      // nothing.
      const authority = service.authority.capture(PERSON_SCOPES);
      await requireActiveAccount(db, vault, account);
      const results = await service.clobPostOrders(account, orders, { origin: 'extension', authority });
      return results.map((r) =>
        r.ok ? { ok: true, orderID: r.orderID, status: r.status } : { ok: false, error: r.error.shortMessage },
      );
    },
    'clob.cancel': async ({ account, orderIds }) =>
      service.clobCancel(account, orderIds, { authority: service.authority.capture(PERSON_SCOPES) }),
    'clob.openOrders': async ({ account }) => d.reads.clobOpenOrders(account),
  };
}
