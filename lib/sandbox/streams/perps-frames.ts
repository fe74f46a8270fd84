/**
 * The `data` of each perps stream channel, in the venue's compact wire names (PROTOCOL.md §5.1–§5.2;
 * `@polymarket/bindings/subscriptions` `PerpsSessionUpdateEventSchema` and `PerpsMarketDataEventSchema`
 * parse them). Decimals are strings, ids non-negative integers, times epoch ms. Pure functions of the
 * venue's state.
 */
import type { SandboxContext } from '../context';
import { px, usd } from '../perps/gateway';
import { candles, statisticsOf, tickerOf } from '../perps/info';
import type { Fill, FundingPayment, Instrument, PerpsOrder, PerpsVenue } from '../perps/engine';

/** Kline intervals a `klines::<iid>::<interval>` channel may name, in ms. */
export const STREAM_INTERVALS: Readonly<Record<string, number>> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
  '1w': 604_800_000,
};

/** An `orders` event's data: `{oid, iid, buy, p, qty, tif, po, ro, status, rest, fill, cts, uts, coid?, tpsl?}`. */
export function orderData(venue: PerpsVenue, o: PerpsOrder) {
  const v = venue.view(o);
  return {
    oid: v.order_id,
    iid: v.instrument_id,
    buy: v.buy,
    p: v.price,
    qty: v.quantity,
    tif: v.tif,
    po: v.post_only,
    ro: v.ro,
    // The venue's status enum has no bare `rejected`; an unexplained refusal reads as cancelled.
    status: v.status === 'rejected' ? 'cancelled' : v.status,
    rest: v.resting_quantity,
    fill: v.filled_quantity,
    cts: v.created_timestamp,
    uts: v.updated_timestamp,
    ...(v.client_order_id ? { coid: v.client_order_id } : {}),
    ...(v.tpsl ? { tpsl: v.tpsl } : {}),
  };
}

/**
 * One element of a `fills` event's data (an array): the account's side of a fill; `coid` of its order when it has one.
 */
export function fillData(f: Fill, coid: string | undefined) {
  return {
    tid: f.tradeId,
    oid: f.oid,
    iid: f.iid,
    side: f.buy ? 'long' : 'short',
    p: px(f.price),
    qty: px(f.qty),
    taker: f.taker,
    fee: usd(f.fee),
    fea: 'USDC',
    psz: px(f.prevSize),
    pep: px(f.prevEntry),
    pnl: usd(f.pnl),
    liq: false,
    ts: f.ts,
    ...(coid ? { coid } : {}),
  };
}

/** A `funding` event's data: one hourly payment (`fund` + received, − paid, USDC). */
export function fundingData(p: FundingPayment) {
  return { id: p.id, iid: p.iid, sz: px(p.size), fr: p.rate, fund: usd(p.amount), fua: 'USDC', ts: p.ts };
}

/** A `balances` event's data: the one collateral balance (an object, not an array). */
export function balanceData(balance: bigint) {
  return { asset: 'USDC', balance: usd(balance), value: usd(balance) };
}

/**
 * A `tpsl::<n>` event's data for a trigger order, as the bindings' `PerpsTpSlUpdateEventSchema` knows the
 * states (`untriggered` / `armed` / `cancelled` / `expired`): waiting without a position it reduces
 * `untriggered`, with one `armed`, cancelled (by the person, the kill switch, a liquidation) `cancelled`
 * with the reason. A trigger that fired has left the TP/SL book and the schema has no state for it:
 * `undefined` (no `tpsl` frame; the `orders` event says `triggered` — or
 * `reduce_only_invalid_at_trigger` — and `fills` carries its fill).
 */
export function tpslData(
  o: PerpsOrder,
): { oid: number; st: 'untriggered' | 'armed' | 'cancelled'; reason?: string } | undefined {
  if (o.trigger?.fired) return undefined;
  if (o.status === 'untriggered') return { oid: o.oid, st: o.trigger?.armedQty ? 'armed' : 'untriggered' };
  return { oid: o.oid, st: 'cancelled', ...(o.reason ? { reason: o.reason } : {}) };
}

/** A `book::<iid>` event's data: the top 50 levels each side, best first (`{b, a}` of `[price, qty]`). */
export function bookData(venue: PerpsVenue, iid: number) {
  const { bids, asks } = venue.levels(iid, 50);
  return { b: bids, a: asks };
}

/** A `bbo::<iid>` event's data: best bid and ask with their sizes ("0" for an empty side). */
export function bboData(venue: PerpsVenue, iid: number) {
  const { bids, asks } = venue.levels(iid, 1);
  const [bp, bq] = bids[0] ?? ['0', '0'];
  const [ap, aq] = asks[0] ?? ['0', '0'];
  return { iid, bp, bq, ap, aq };
}

/** One element of a `trades::<iid>` event's data (an array): a public trade, taker side. */
export function tradeData(t: PerpsVenue['trades'][number]) {
  return {
    tid: t.tradeId,
    iid: t.iid,
    side: t.buy ? 'long' : 'short',
    p: px(t.price),
    qty: px(t.qty),
    ts: t.ts,
    hash: '0x',
  };
}

/** A `tickers::` event's data for `inst` at `now` (ms), from the tickers read. */
export function tickerData(ctx: SandboxContext, inst: Instrument, now: number) {
  const t = tickerOf(ctx, inst, now);
  return {
    iid: t.instrument_id,
    idx: t.index_price,
    mark: t.mark_price,
    last: t.last_price,
    mid: t.mid_price,
    oi: t.open_interest,
    fr: t.funding_rate,
    nxf: t.next_funding,
  };
}

/** A `statistics::` event's data for `inst` at `now` (ms), from the statistics read. */
export function statisticsData(venue: PerpsVenue, inst: Instrument, now: number) {
  const s = statisticsOf(venue, inst, now);
  return { iid: s.instrument_id, vol: s.volume, open: s.open_price, klines: s.klines };
}

/** A `klines::<iid>::<interval>` event's data: the current candle of `stepMs` at `now` (ms), in an array. */
export function klinesData(venue: PerpsVenue, inst: Instrument, stepMs: number, now: number) {
  return candles(venue, inst, now, now, stepMs);
}
