/**
 * The venue lookup the journal's reconciliation asks after a stop or a crash (`lib/audit/reconcile.ts`):
 * perps orders by client order id (`GET /v1/account/orders?client_order_id=&start_timestamp=`, the
 * account's orders of any status, PROTOCOL.md §3), order-book orders by order hash (`GET /data/order/{hash}`,
 * L2: the exchange's order id is the EIP-712 digest signed). Reads of the person's own account, drawn from the person's
 * share of the weight budget. A gateway is untrusted input: an answer counts as "held" only when it names this very
 * order — a perps order with the same id, instrument, side and quantity created no earlier than `CLOCK_SKEW_MS` before
 * the send (a client order id is unique only among open orders, so an older order may carry it); an order-book order
 * whose `id` is the hash (an empty or other body is not).
 */
import * as v from 'valibot';
import type { PerpsLookupOrder } from '../audit/journal';
import type { FoundOrder, OrderFinder } from '../audit/lost-storage';
import type { VenueLookup } from '../audit/reconcile';
import { ClobError } from '../clob/errors';
import { clobFoundOrderWords } from '../clob/words';
import { perpsFoundOrderWords } from '../perps/words';
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
    o.created_timestamp !== undefined &&
    o.created_timestamp >= sentAt - CLOCK_SKEW_MS
  );
}

const clobOrder = v.looseObject({ id: v.string() });

/**
 * The lookup (`VenueLookup`): `reads` for the perps reads, `clobRead` for the order-book L2 read
 * (`SigningService.clobRead`: the 2xx body, unvalidated). Rejects with what a read throws (a perps read's
 * error, the exchange's `ClobError` other than 404, `Http.NetworkError`): the caller records "could not
 * be asked".
 */
export function venueLookup(
  reads: Pick<VenueReads, 'perpsRead'>,
  clobRead: (account: string, requestPath: string) => Promise<unknown>,
): VenueLookup {
  return async (account, lookup, sentAt) => {
    if (lookup.venue === 'perps') {
      for (const want of lookup.orders) {
        const rows = await reads.perpsRead(account, 'orders', {
          client_order_id: want.c,
          start_timestamp: sentAt - CLOCK_SKEW_MS,
        });
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

/**
 * The venues' orders of an account for the sweep after a lost database (`lib/audit/lost-storage.ts`):
 * perps orders of any status since `since` (needs the account's proxy key, dated when the venue created
 * them); the order book's open orders (any age) and the orders of its newest page of trades (needs its API
 * credentials; the exchange's reads take no start time, so these are dated when found). An account
 * without a venue's keys has no orders there to find (answers none); a read that fails rejects.
 */
export function orderFinders(
  reads: Pick<VenueReads, 'perpsRead' | 'clobOpenOrders' | 'clobTrades'>,
  hasKeys: (account: string) => Promise<{ proxy: boolean; clob: boolean }>,
): OrderFinder[] {
  return [
    {
      venue: 'perps',
      find: async (account, since) => {
        if (!(await hasKeys(account)).proxy) return [];
        const rows = await reads.perpsRead(account, 'orders', { start_timestamp: since });
        return rows.map((o) => ({
          venue: 'perps' as const,
          account,
          at: o.created_timestamp,
          words: perpsFoundOrderWords(o),
          id: o.client_order_id ?? String(o.order_id),
        }));
      },
    },
    {
      venue: 'clob',
      find: async (account) => {
        if (!(await hasKeys(account)).clob) return [];
        const found = new Map<string, FoundOrder>();
        for (const o of (await reads.clobOpenOrders(account)).data) {
          found.set(o.id, {
            venue: 'clob',
            account,
            at: undefined,
            words: clobFoundOrderWords({ ...o, size: o.original_size }, 'open'),
            id: o.id,
          });
        }
        for (const t of (await reads.clobTrades(account)).data) {
          for (const f of t.own) {
            if (f.order_id && !found.has(f.order_id))
              found.set(f.order_id, {
                venue: 'clob',
                account,
                at: undefined,
                words: clobFoundOrderWords(f, 'traded'),
                id: f.order_id,
              });
          }
        }
        return [...found.values()];
      },
    },
  ];
}
