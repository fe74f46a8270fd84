/**
 * The sandbox perps venue's reads: an order as the venue's order reads answer it, and a book's
 * aggregated levels (`@polymarket/bindings/perps` shapes, `lib/perps/wire`). Pure: they read the
 * engine's records (`./model.ts`) and change nothing.
 */
import { fromUnits } from '../../decimal';
import type { Book, OrderView } from '../../perps/wire';
import { PX_SCALE, type PerpsOrder } from './model';

/**
 * The order as the venue's reads answer it (`@polymarket/bindings/perps` `PerpsOrderSchema`): status
 * `open` / `partial` / `filled` / `cancelled` / `auto_cancelled` / `ioc_expired` / `ioc_no_fill` /
 * `post_only_rejected` / `fok_unfilled` / `reduce_only_invalid`; a trigger order `untriggered` /
 * `armed` / `triggered` / `reduce_only_invalid_at_trigger` / `cancelled` (`triggerStatus`). Market orders show price
 * `0`; trigger orders carry `tpsl`.
 */
export function orderView(o: PerpsOrder): OrderView {
  const STATUS: Record<string, string> = {
    cancelled_by_user: 'cancelled',
    auto_cancel: 'auto_cancelled',
    ioc_remainder_cancelled: 'ioc_expired',
    no_liquidity: 'ioc_no_fill',
    post_only_would_cross: 'post_only_rejected',
    fok_not_filled: 'fok_unfilled',
    reduce_only_would_increase_position: 'reduce_only_invalid',
  };
  const status = o.trigger
    ? triggerStatus(o)
    : o.status === 'open'
      ? o.filled > 0n
        ? 'partial'
        : 'open'
      : o.status === 'filled'
        ? 'filled'
        : (STATUS[o.reason ?? ''] ?? (o.status === 'rejected' ? 'rejected' : 'cancelled'));
  return {
    order_id: o.oid,
    instrument_id: o.iid,
    buy: o.buy,
    price: o.price === undefined ? '0' : fromUnits(o.price, PX_SCALE),
    quantity: fromUnits(o.qty, PX_SCALE),
    tif: o.tif ?? 'gtc',
    post_only: o.po,
    ro: o.ro,
    status,
    resting_quantity: o.status === 'open' ? fromUnits(o.qty - o.filled, PX_SCALE) : '0',
    filled_quantity: fromUnits(o.filled, PX_SCALE),
    created_timestamp: o.created,
    updated_timestamp: o.updated,
    ...(o.coid ? { client_order_id: o.coid } : {}),
    ...(o.trigger
      ? {
          tpsl: {
            kind: o.trigger.tpsl,
            scope: o.trigger.scope,
            trp: fromUnits(o.trigger.trp, PX_SCALE),
            ...(o.trigger.armedQty ? { armed_qty: fromUnits(o.trigger.armedQty, PX_SCALE) } : {}),
          },
        }
      : {}),
  };
}

/**
 * Aggregated levels of a book (`bids` best first, `asks` best first), at most `depth` a side: `[price, qty]` as decimal
 * strings (the `Book` of `GET /v1/info/book`, lib/perps/wire).
 */
export function bookLevels(b: { bids: readonly PerpsOrder[]; asks: readonly PerpsOrder[] }, depth = 20): Book {
  const agg = (side: readonly PerpsOrder[]) => {
    const out: [string, string][] = [];
    let last: bigint | undefined;
    let sum = 0n;
    for (const o of side) {
      if (o.price !== last && last !== undefined) {
        out.push([fromUnits(last, PX_SCALE), fromUnits(sum, PX_SCALE)]);
        sum = 0n;
        if (out.length >= depth) break;
      }
      last = o.price;
      sum += o.qty - o.filled;
    }
    if (last !== undefined && out.length < depth) out.push([fromUnits(last, PX_SCALE), fromUnits(sum, PX_SCALE)]);
    return out;
  };
  return { bids: agg(b.bids), asks: agg(b.asks) };
}

/**
 * The read status of a trigger order: waiting (`untriggered` / `armed`), `triggered` once fired (its fill in
 * `filled_quantity`), or why it ended.
 */
function triggerStatus(o: PerpsOrder): string {
  if (o.status === 'untriggered') return o.trigger?.armedQty ? 'armed' : 'untriggered';
  if (o.trigger?.fired) return o.status === 'rejected' ? 'reduce_only_invalid_at_trigger' : 'triggered';
  return o.reason === 'auto_cancel'
    ? 'auto_cancelled'
    : o.reason === 'position_closed'
      ? 'position_closed'
      : 'cancelled';
}
