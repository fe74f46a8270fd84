/**
 * The venue lookup the journal's reconciliation asks after a stop or a crash (`lib/audit/reconcile.ts`):
 * perps orders by client order id (`GET /v1/account/orders?client_order_id=`, the account's orders of any
 * status, PROTOCOL.md §3), order-book orders by order hash (`GET /data/order/{hash}`, L2: the exchange's
 * order id is the EIP-712 digest signed; 404 when it holds none). Reads of the person's own account, drawn
 * from the person's share of the weight budget.
 */
import type { VenueLookup } from '../audit/reconcile';
import { ClobError } from '../clob/errors';
import type { VenueReads } from '../reads/venue-reads';

/** `reads` for the perps reads, `clobRead` for the order-book L2 read (`SigningService.clobRead`). */
export function venueLookup(reads: Pick<VenueReads, 'perpsRead'>, clobRead: (account: string, requestPath: string) => Promise<unknown>): VenueLookup {
  return async (account, lookup) => {
    if (lookup.venue === 'perps') {
      for (const c of lookup.coids) {
        const rows = await reads.perpsRead(account, 'orders', { client_order_id: c });
        if (rows.some((o) => o.client_order_id === c)) return 'held';
      }
      return 'absent';
    }
    for (const hash of lookup.orderHashes) {
      try {
        await clobRead(account, `/data/order/${hash}`);
        return 'held';
      } catch (err) {
        if (err instanceof ClobError && err.status === 404) continue;
        throw err;
      }
    }
    return 'absent';
  };
}
