/**
 * The venue lookup the journal's reconciliation asks after a stop or a crash (`lib/audit/reconcile.ts`):
 * perps orders by client order id (`GET /v1/account/orders?client_order_id=&start_timestamp=`, the
 * account's orders of any status, PROTOCOL.md §3), order-book orders by order hash (`GET /data/order/{hash}`,
 * L2: the exchange's order id is the EIP-712 digest signed). Reads of the person's own account, drawn from
 * the person's share of the weight budget. A gateway is untrusted input: an answer counts as "held" only
 * when it names this very order — a perps order with the same id, instrument, side and quantity created
 * no earlier than `CLOCK_SKEW_MS` before the send (a client order id is unique only among open orders, so
 * an older order may carry it); an order-book order whose `id` is the hash (an empty or other body is not).
 */
import * as v from 'valibot';
import type { PerpsLookupOrder } from '../audit/journal';
import type { VenueLookup } from '../audit/reconcile';
import { ClobError } from '../clob/errors';
import type { PerpsReadAnswer } from '../perps/wire';
import type { VenueReads } from '../reads/venue-reads';

/** How far the venue's clock may run behind ours when dating an order (ms). */
export const CLOCK_SKEW_MS = 60_000;

/** `x` as a canonical decimal string (no leading or trailing zeros), or itself when it is not one. */
function decimal(x: string): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(x);
  if (!m) return x;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  return `${BigInt(m[1] ?? '0').toString()}${frac ? `.${frac}` : ''}`;
}

/** Whether the venue's order `o` is the journalled order `want`, sent at `sentAt` (Unix ms). */
function sameOrder(o: PerpsReadAnswer<'orders'>[number], want: PerpsLookupOrder, sentAt: number): boolean {
  return (
    o.client_order_id === want.c &&
    o.instrument_id === want.iid &&
    o.buy === want.buy &&
    decimal(o.quantity) === decimal(want.qty) &&
    (o.created_timestamp === undefined || o.created_timestamp >= sentAt - CLOCK_SKEW_MS)
  );
}

const clobOrder = v.looseObject({ id: v.string() });

/** `reads` for the perps reads, `clobRead` for the order-book L2 read (`SigningService.clobRead`). */
export function venueLookup(reads: Pick<VenueReads, 'perpsRead'>, clobRead: (account: string, requestPath: string) => Promise<unknown>): VenueLookup {
  return async (account, lookup, sentAt) => {
    if (lookup.venue === 'perps') {
      for (const want of lookup.orders) {
        const rows = await reads.perpsRead(account, 'orders', { client_order_id: want.c, start_timestamp: sentAt - CLOCK_SKEW_MS });
        if (rows.some((o) => sameOrder(o, want, sentAt))) return 'held';
      }
      return 'absent';
    }
    for (const hash of lookup.orderHashes) {
      try {
        const body = v.safeParse(clobOrder, await clobRead(account, `/data/order/${hash}`));
        if (body.success && body.output.id.toLowerCase() === hash.toLowerCase()) return 'held';
      } catch (err) {
        if (err instanceof ClobError && err.status === 404) continue;
        throw err;
      }
    }
    return 'absent';
  };
}
