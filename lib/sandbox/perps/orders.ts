/**
 * The sandbox perps venue's new records: an empty account, and an order input checked against its
 * instrument (quantity on the lot grid, limit and trigger prices on the tick grid, a client order id
 * not already open) and turned into a draft order, before the engine checks margin and matches it.
 * Refusals throw `VenueError` with the gateway's error code. Prices and quantities PX units, times Unix ms.
 */
import type { Address } from 'viem';
import type { PerpsOrderInput } from '../../perps/commands';
import { toUnits } from '../../decimal';
import { PX_SCALE, VenueError, type Account, type Instrument, type PerpsOrder } from './model';

const px = (s: string) => toUnits(s, PX_SCALE);

/** A new account of `owner` with nothing in it; funding counts from the hour `now` (Unix ms) is in. */
export function emptyAccount(owner: Address, now: number): Account {
  return {
    owner,
    balance: 0n,
    positions: new Map(),
    config: new Map(),
    proxies: new Map(),
    deposits: [],
    transfers: [],
    withdrawals: [],
    children: 0,
    fills: [],
    funding: [],
    fundingSettledTo: Math.floor(now / 3_600_000) * 3_600_000,
    history: [],
    realized: 0n,
  };
}

/**
 * The draft of order input `o` on instrument `inst` for `owner` (lower-case) at `now`, in a batch of
 * group `group` (`op.grp`): `oid` and `seq` 0 until admitted, status `open`. Quantity 0 only on a
 * `"position"` group's trigger leg (it protects the whole position). Throws `VenueError`
 * `invalid_quantity`, `invalid_price`, `duplicate_client_order_id` (`coidOpen(c)`: an open or
 * untriggered order of `owner` has `c`) or `invalid_trigger_price`.
 */
export function draftOrder(
  o: PerpsOrderInput,
  inst: Instrument,
  owner: string,
  now: number,
  coidOpen: (coid: string) => boolean,
  group?: string,
): PerpsOrder {
  const qty = px(o.qty);
  const price = o.p === undefined ? undefined : px(o.p);
  const whole = group === 'position';
  if (qty === undefined || qty % inst.lot !== 0n || (qty === 0n) !== (whole && o.tr !== undefined))
    throw new VenueError('invalid_quantity');
  if (o.p !== undefined && (price === undefined || price % inst.tick !== 0n)) throw new VenueError('invalid_price');
  if (o.c && coidOpen(o.c)) throw new VenueError('duplicate_client_order_id');
  const trp = o.tr ? px(o.tr.trp) : undefined;
  if (o.tr && (trp === undefined || trp % inst.tick !== 0n)) throw new VenueError('invalid_trigger_price');
  return {
    oid: 0,
    owner,
    iid: o.iid,
    buy: o.buy,
    qty,
    filled: 0n,
    po: o.po ?? false,
    ro: o.ro ?? false,
    status: 'open',
    seq: 0,
    created: now,
    updated: now,
    ...(o.c ? { coid: o.c } : {}),
    ...(price === undefined ? {} : { price }),
    ...(o.tif ? { tif: o.tif } : {}),
    ...(o.tr && trp !== undefined
      ? { trigger: { tpsl: o.tr.tpsl, trp, market: o.tr.market === true, scope: whole ? 'position' : 'order' } }
      : {}),
  };
}
