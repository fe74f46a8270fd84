/**
 * The perps session's account events (PROTOCOL.md §5.1 "Frames, server → client"), validated with
 * valibot and turned into the shapes of the REST reads (`lib/perps/wire.ts`: `OrderView`, a fills row,
 * `Portfolio`), so the background and the popup merge a pushed event exactly as a polled answer.
 *
 * `@polymarket/bindings/subscriptions` parses the same frames but is built on zod, which the extension
 * bundle does not carry; these schemas name only the fields we use (objects drop the rest, so a field a
 * gateway adds — or a secret it echoes — never travels on). Decimals are strings; ids JS numbers; times Unix ms.
 */
import * as v from 'valibot';
import {
  PERPS_READ_ANSWERS,
  type Book,
  type OrderView,
  type Portfolio,
  type Statistic,
  type Ticker,
} from '../perps/wire';

const str = v.pipe(v.string(), v.maxLength(200));
/** A decimal string (sizes, prices: a venue frame's words never reach a notification or the popup as a number). */
const dec = v.pipe(v.string(), v.regex(/^\d{1,40}(\.\d{1,40})?$/));
/** A signed decimal string (fees, PnL, funding rates). */
const sdec = v.pipe(v.string(), v.regex(/^-?\d{1,40}(\.\d{1,40})?$/));
/** A price that a market order may leave empty. */
const price = v.union([dec, v.literal('')]);
const id = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const ms = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** The event envelope `{ch, ts, sq, data}`: channel name, Unix ms, per-channel sequence number. */
const envelopeSchema = v.object({
  ch: v.pipe(v.string(), v.maxLength(100)),
  ts: ms,
  sq: id,
  data: v.unknown(),
});

const orderSchema = v.object({
  oid: id,
  iid: id,
  buy: v.boolean(),
  p: price,
  qty: dec,
  tif: v.optional(str),
  po: v.optional(v.boolean()),
  ro: v.optional(v.boolean()),
  status: str,
  rest: dec,
  fill: dec,
  cts: v.optional(ms),
  uts: v.optional(ms),
  coid: v.optional(str),
  tpsl: PERPS_READ_ANSWERS.openOrders.item.entries.tpsl,
});

const fillSchema = v.object({
  tid: id,
  oid: id,
  iid: id,
  side: v.picklist(['long', 'short']),
  p: dec,
  qty: dec,
  taker: v.boolean(),
  fee: sdec,
  pnl: sdec,
  ts: ms,
  coid: v.optional(str),
});

/** The portfolio event's data: the REST portfolio read's shape (`lib/perps/wire.ts`), extra wire fields dropped. */
const portfolioSchema = PERPS_READ_ANSWERS.portfolio;

const balanceSchema = PERPS_READ_ANSWERS.balances.item;
const tpslSchema = v.object({ oid: id, st: str, reason: v.optional(str) });

const level = v.tuple([dec, dec]);
/** Public channels (PROTOCOL.md §5.2), in the venue's compact names. */
const bookSchema = v.object({
  b: v.pipe(v.array(level), v.maxLength(1_000)),
  a: v.pipe(v.array(level), v.maxLength(1_000)),
});
const bboSchema = v.object({ iid: id, bp: dec, bq: dec, ap: dec, aq: dec });
const tickerSchema = v.object({ iid: id, idx: dec, mark: dec, last: dec, mid: dec, fr: sdec });
const statisticSchema = v.object({ iid: id, vol: dec, open: dec });

/** A fill as the REST fills read returns it (`GET /v1/account/fills` row): USDC `fee` / `pnl`, `timestamp` Unix ms. */
export type FillRow = {
  trade_id: number;
  order_id: number;
  instrument_id: number;
  side: 'long' | 'short';
  price: string;
  quantity: string;
  fee: string;
  pnl: string;
  taker: boolean;
  timestamp: number;
};

/**
 * One account event, in REST shapes: an order's new state, the fills of one match, the portfolio, the
 * collateral balance, or a TP/SL leg's state. `at` is the gateway's `ts` (Unix ms). No event carries a
 * credential: the schemas keep only market data of the account.
 */
export type PerpsStreamEvent =
  | { kind: 'order'; at: number; order: OrderView }
  | { kind: 'fills'; at: number; fills: FillRow[] }
  | { kind: 'portfolio'; at: number; portfolio: Portfolio }
  | { kind: 'balance'; at: number; balance: { asset: string; balance: string } }
  | { kind: 'tpsl'; at: number; iid: number; oid: number; state: string; reason?: string }
  | PerpsMarketEvent;

/**
 * One public market-data event (PROTOCOL.md §5.2) in the REST reads' shapes: an instrument's book
 * (`GET /v1/info/book`: `[price, quantity]` best first), its best bid and offer (`["0","0"]` for an empty
 * side), a ticker row, a 24 h statistic row. `at` is the gateway's `ts` (Unix ms).
 */
export type PerpsMarketEvent =
  | { kind: 'book'; at: number; iid: number; book: Book }
  | { kind: 'bbo'; at: number; iid: number; bid: [string, string]; ask: [string, string] }
  | { kind: 'ticker'; at: number; ticker: Ticker }
  | { kind: 'statistic'; at: number; statistic: Statistic };

/** A parsed frame: an event (or `null` for a channel that carries nothing we use), with its channel and `sq`. */
type Parsed = { ch: string; sq: number; event: PerpsStreamEvent | null };

function toOrder(o: v.InferOutput<typeof orderSchema>): OrderView {
  return {
    order_id: o.oid,
    instrument_id: o.iid,
    buy: o.buy,
    price: o.p,
    quantity: o.qty,
    filled_quantity: o.fill,
    resting_quantity: o.rest,
    status: o.status,
    ...(o.coid === undefined ? {} : { client_order_id: o.coid }),
    ...(o.tif === undefined ? {} : { tif: o.tif }),
    ...(o.po === undefined ? {} : { post_only: o.po }),
    ...(o.ro === undefined ? {} : { ro: o.ro }),
    ...(o.cts === undefined ? {} : { created_timestamp: o.cts }),
    ...(o.uts === undefined ? {} : { updated_timestamp: o.uts }),
    ...(o.tpsl === undefined ? {} : { tpsl: o.tpsl }),
  };
}

const toFill = (f: v.InferOutput<typeof fillSchema>): FillRow => ({
  trade_id: f.tid,
  order_id: f.oid,
  instrument_id: f.iid,
  side: f.side,
  price: f.p,
  quantity: f.qty,
  fee: f.fee,
  pnl: f.pnl,
  taker: f.taker,
  timestamp: f.ts,
});

/** The event of channel `ch` from its `data`, `undefined` when `data` fails the channel's schema. */
function eventOf(ch: string, at: number, data: unknown): PerpsStreamEvent | null | undefined {
  const pub = /^(book|bbo|tickers|statistics|trades|klines)::/.exec(ch);
  if (pub) return marketEventOf(ch, at, data);
  const tpsl = /^tpsl::(\d{1,9})$/.exec(ch);
  if (tpsl) {
    const r = v.safeParse(tpslSchema, data);
    return r.success
      ? {
          kind: 'tpsl',
          at,
          iid: Number(tpsl[1]),
          oid: r.output.oid,
          state: r.output.st,
          ...(r.output.reason === undefined ? {} : { reason: r.output.reason }),
        }
      : undefined;
  }
  switch (ch) {
    case 'orders': {
      const r = v.safeParse(orderSchema, data);
      return r.success ? { kind: 'order', at, order: toOrder(r.output) } : undefined;
    }
    case 'fills': {
      const r = v.safeParse(v.array(fillSchema), data);
      return r.success ? { kind: 'fills', at, fills: r.output.map(toFill) } : undefined;
    }
    case 'portfolio': {
      const r = v.safeParse(portfolioSchema, data);
      return r.success ? { kind: 'portfolio', at, portfolio: r.output } : undefined;
    }
    case 'balances': {
      const r = v.safeParse(balanceSchema, data);
      return r.success ? { kind: 'balance', at, balance: r.output } : undefined;
    }
    default:
      // funding, deposits, withdrawals, notifications: sequenced, but nothing the extension shows yet.
      return null;
  }
}

/**
 * The event of public channel `ch` (`book::<iid>`, `bbo::<iid>`, `tickers::…`, `statistics::…`; trades and klines:
 * `null`).
 */
function marketEventOf(ch: string, at: number, data: unknown): PerpsMarketEvent | null | undefined {
  const [kind, which] = ch.split('::');
  const iid = Number(which);
  if (kind === 'book') {
    const r = v.safeParse(bookSchema, data);
    return r.success && Number.isSafeInteger(iid)
      ? { kind: 'book', at, iid, book: { bids: r.output.b, asks: r.output.a } }
      : undefined;
  }
  if (kind === 'bbo') {
    const r = v.safeParse(bboSchema, data);
    return r.success
      ? { kind: 'bbo', at, iid: r.output.iid, bid: [r.output.bp, r.output.bq], ask: [r.output.ap, r.output.aq] }
      : undefined;
  }
  if (kind === 'tickers') {
    const r = v.safeParse(tickerSchema, data);
    const t = r.success ? r.output : undefined;
    return t
      ? {
          kind: 'ticker',
          at,
          ticker: {
            instrument_id: t.iid,
            mark_price: t.mark,
            index_price: t.idx,
            mid_price: t.mid,
            last_price: t.last,
            funding_rate: t.fr,
          },
        }
      : undefined;
  }
  if (kind === 'statistics') {
    const r = v.safeParse(statisticSchema, data);
    return r.success
      ? {
          kind: 'statistic',
          at,
          statistic: { instrument_id: r.output.iid, open_price: r.output.open, volume: r.output.vol },
        }
      : undefined;
  }
  return null;
}

/**
 * Parses one event frame (already JSON-decoded). `undefined` when it is not a well-formed event of a
 * known shape (the caller counts it and drops it); otherwise its channel, `sq` and event (`null` for a
 * channel whose data is not used).
 */
export function parsePerpsEvent(frame: unknown): Parsed | undefined {
  const env = v.safeParse(envelopeSchema, frame);
  if (!env.success) return undefined;
  const event = eventOf(env.output.ch, env.output.ts, env.output.data);
  return event === undefined ? undefined : { ch: env.output.ch, sq: env.output.sq, event };
}
