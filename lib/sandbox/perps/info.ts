/**
 * Sandbox perps `/v1/info/*` reads — public, metered on the shared `public` budget (the official
 * client's `info` module; `PERPS_READS` in `lib/perps/reads.ts` gives paths and weights, and
 * `@polymarket/bindings/perps` fixes the answers): exchange (signing domains), instruments, book,
 * tickers, statistics, klines, trades, funding rates and fees.
 */
import type { Context, Hono } from 'hono';
import { fromUnits } from '../../decimal';
import { HOUR, INTERVALS, PAGE, px, qInt, timeRange, windowRange, type PerpsGateway } from './gateway';
import type { SandboxContext } from '../context';
import { MAKER_FEE, TAKER_FEE, VenueError, type Instrument, type PerpsVenue } from './engine';

/** A candle: `[ts ms, open, high, low, close, volume, trades]`, prices and volume as decimal strings. */
export type Candle = [number, string, string, string, string, string, number];

/**
 * Candles of `inst` from its public trades over `[start, end]` by `stepMs` (the last close when a step had none); at
 * most 1000.
 */
export function candles(venue: PerpsVenue, inst: Instrument, start: number, end: number, stepMs: number): Candle[] {
  const out: Candle[] = [];
  let prev = inst.mark;
  for (let t = Math.floor(start / stepMs) * stepMs; t <= end && out.length < 1000; t += stepMs) {
    const ts = venue.trades.filter((x) => x.iid === inst.iid && x.ts >= t && x.ts < t + stepMs);
    const ps = ts.map((x) => x.price);
    const open = ps[0] ?? prev;
    const close = ps[ps.length - 1] ?? prev;
    const hi = ps.reduce((a, b) => (b > a ? b : a), open);
    const lo = ps.reduce((a, b) => (b < a ? b : a), open);
    const vol = ts.reduce((a, x) => a + x.qty, 0n);
    out.push([t, px(open), px(hi), px(lo), px(close), px(vol), ts.length]);
    prev = close;
  }
  return out;
}

/** A fee rate fraction as a 6-decimal string. */
const rate = (fee: { num: bigint; den: bigint }) => fromUnits((fee.num * 10n ** 6n) / fee.den, 6);

/** Mounts the `/v1/info/*` reads of `gw` on `app`. */
export function infoRoutes(app: Hono, gw: PerpsGateway): void {
  const { venue, config } = gw.ctx;
  const now = () => gw.now();

  /** The instrument named by `instrument_id` (required); `VenueError('unknown_instrument')` otherwise. */
  const instrumentOf = (c: Context): Instrument => {
    const iid = qInt(c, 'instrument_id');
    const inst = iid === undefined ? undefined : venue.instruments.get(iid);
    if (!inst) throw new VenueError('unknown_instrument');
    return inst;
  };
  /** The instrument named by `instrument_id`, or every instrument when absent. */
  const instrumentsOf = (c: Context): Instrument[] =>
    qInt(c, 'instrument_id') === undefined ? [...venue.instruments.values()] : [instrumentOf(c)];

  gw.infoRead(app, 'funding', (c) => {
    const inst = instrumentOf(c);
    const { start, end } = windowRange(c, now(), 7 * 24 * HOUR);
    const data: { funding_rate: string; timestamp: number }[] = [];
    let ts = Math.ceil(start / HOUR) * HOUR;
    for (; ts <= end && data.length < PAGE; ts += HOUR)
      data.push({ funding_rate: gw.ctx.fundingRate(inst.iid, ts), timestamp: ts });
    return c.json({ data, more: ts <= end });
  });

  gw.infoRead(app, 'exchange', (c) =>
    c.json({
      name: config.perpsDomain.name,
      version: config.perpsDomain.version,
      chain_id: config.perpsDomain.chainId,
      contract: config.perpsWithdrawDomain.verifyingContract,
    }),
  );

  gw.infoRead(app, 'instruments', (c) =>
    c.json(
      [...venue.instruments.values()].map((i) => ({
        instrument_id: i.iid,
        instrument_type: 'perpetual',
        category: 'crypto',
        symbol: i.symbol,
        base_asset: i.symbol.replace(/-PERP$/, ''),
        quote_asset: 'USDC',
        funding_interval: '1h',
        quantity_decimals: (px(i.lot).split('.')[1] ?? '').length,
        price_decimals: (px(i.tick).split('.')[1] ?? '').length,
        price_bounds: '0.1',
        liquidation_fee: '0.01',
        max_order_count: 1000,
        min_notional: '10',
        max_market_notional: '1000000',
        max_limit_notional: '5000000',
        max_leverage: i.maxLeverage,
        isolated_only: false,
        risk_tiers: [{ lower_bound: '0', max_leverage: i.maxLeverage }],
        // Sandbox extras (not in the venue's schema, which ignores unknown keys): exact tick and lot.
        tick_size: px(i.tick),
        lot_size: px(i.lot),
        mark_price: px(i.mark),
      })),
    ),
  );

  /** `GET /v1/info/book?instrument_id=&depth=`: `[price, quantity]` levels, best first. */
  gw.infoRead(app, 'book', (c) => {
    const inst = instrumentOf(c);
    const depth = qInt(c, 'depth') ?? 100;
    return c.json({
      instrument_id: inst.iid,
      ...venue.levels(inst.iid, Math.min(depth, 1000)),
      timestamp: now(),
      sequence: venue.bookSequence,
    });
  });

  /**
   * `GET /v1/info/tickers`: index (= mark here), mark, last, mid, open interest, funding rate and next funding time.
   */
  gw.infoRead(app, 'tickers', (c) => c.json(instrumentsOf(c).map((i) => tickerOf(gw.ctx, i, now()))));

  /** `GET /v1/info/statistics`: 24 h volume, open price and hourly candles per instrument. */
  gw.infoRead(app, 'statistics', (c) => c.json(instrumentsOf(c).map((i) => statisticsOf(venue, i, now()))));

  /**
   * `GET /v1/info/klines?instrument_id=&interval=&start_timestamp=&end_timestamp=`: `{ data: [ts, o, h, l, c, volume,
   * trades][], more }`.
   */
  gw.infoRead(app, 'klines', (c) => {
    const inst = instrumentOf(c);
    const step = INTERVALS[c.req.query('interval') ?? '1h'];
    if (!step) throw new VenueError('invalid_interval');
    const { start, end } = windowRange(c, now(), 24 * HOUR);
    const data = candles(venue, inst, start, end, step);
    return c.json({ data, more: data.length >= 1000 });
  });

  /** `GET /v1/info/trades?instrument_id=`: public trades, newest first, `{ data, more }`. */
  gw.infoRead(app, 'trades', (c) => {
    const iid = qInt(c, 'instrument_id');
    const { start, end } = timeRange(c, now());
    const rows = venue.trades
      .filter((t) => (iid === undefined || t.iid === iid) && t.ts >= (start ?? 0) && t.ts <= end)
      .reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((t) => ({
        trade_id: t.tradeId,
        instrument_id: t.iid,
        side: t.buy ? 'long' : 'short',
        price: px(t.price),
        quantity: px(t.qty),
        timestamp: t.ts,
        hash: '0x',
      })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/info/fees`: the sandbox's flat schedule (taker 5 bp, maker 1 bp) with one volume tier. */
  gw.infoRead(app, 'fees', (c) =>
    c.json({
      fee_schedule: [
        {
          instrument_type: 'perpetual',
          category: 'crypto',
          taker_fee_rate: rate(TAKER_FEE),
          maker_fee_rate: rate(MAKER_FEE),
          tiers: [{ min_volume_30d: '0', taker_fee_rate: rate(TAKER_FEE), maker_fee_rate: rate(MAKER_FEE) }],
        },
      ],
    }),
  );
}

/**
 * The ticker of `inst` at `now` (ms) as `GET /v1/info/tickers` answers it: index (= mark here), mark,
 * last trade, mid of the best bid and ask (the mark when a side is empty), open interest, hourly funding
 * rate and next funding time (ms). Prices decimal strings. Also the `tickers::` stream channel's source.
 */
export function tickerOf(ctx: SandboxContext, inst: Instrument, now: number) {
  const { venue } = ctx;
  const last = [...venue.trades].reverse().find((t) => t.iid === inst.iid)?.price ?? inst.mark;
  let oi = 0n;
  for (const a of venue.accounts.values()) {
    const p = a.positions.get(inst.iid);
    if (p && p.size > 0n) oi += p.size;
  }
  const b = venue.book(inst.iid);
  const bid = b.bids[0]?.price;
  const ask = b.asks[0]?.price;
  const mid = bid !== undefined && ask !== undefined ? (bid + ask) / 2n : inst.mark;
  return {
    instrument_id: inst.iid,
    symbol: inst.symbol,
    index_price: px(inst.mark),
    mark_price: px(inst.mark),
    last_price: px(last),
    mid_price: px(mid),
    open_interest: px(oi),
    funding_rate: ctx.fundingRate(inst.iid, now),
    next_funding: Math.floor(now / HOUR) * HOUR + HOUR,
    timestamp: now,
  };
}

/** 24 h volume, open price and hourly candles of `inst` at `now` (ms), as `GET /v1/info/statistics` answers them. */
export function statisticsOf(venue: PerpsVenue, inst: Instrument, now: number) {
  const k = candles(venue, inst, now - 24 * HOUR, now, HOUR);
  const vol = venue.trades.filter((x) => x.iid === inst.iid && x.ts >= now - 24 * HOUR).reduce((a, x) => a + x.qty, 0n);
  return {
    instrument_id: inst.iid,
    symbol: inst.symbol,
    volume: px(vol),
    open_price: k[0]?.[1] ?? px(inst.mark),
    klines: k,
  };
}
