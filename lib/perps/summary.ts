/**
 * The order summary a person reads before a perps order is signed: the same code for the
 * popup's ticket and the approval window, computed from the order as it will be signed (the
 * `createOrders` item: a market order is an IOC limit at the protected price) and the venue's reads
 * (instrument, book, portfolio, fees, the account's leverage). Pure; see `lib/perps/risk` for the rules.
 *
 * Expected price: a resting order (post-only, or a GTC limit that does not cross the best level) at its
 * limit; any other order walks the visible book up to its limit (an order with no limit walks it all).
 * A crossing GTC limit larger than the visible book within its limit fills that part now and rests the
 * rest at its limit, where any seller (or buyer) — the requesting page included — can fill it: the
 * numbers price the part that fills now at the book and the rest at the limit, the worst it can execute
 * at. An IOC / FOK order is bounded by its limit: the rest is cancelled.
 */
import type { PerpsOrderInput } from './commands';
import { orderFacts } from './words';
import { decimalsOf, estimateWithin, previewOrder, splitWalk, type Liquidity, type OrderPreview } from './risk';
import type { Book, Instrument, Portfolio } from './wire';
import { fromUnits, toUnits, truncUnits } from '../decimal';
import { instrumentLabel } from '../validation/venue-text';

/** The venue's reads a summary needs. `leverage`: the account's for the instrument (`config` read). */
export type SummaryReads = {
  instrument: Instrument;
  book: Book;
  portfolio: Portfolio;
  /** Fee rates as fractions, from `GET /v1/info/fees`. */
  fees: { taker: string; maker: string };
  leverage: number;
  /** The mark price (tickers read); default the best level on the order's side. */
  markPrice?: string;
};

/** The summary of one order: the risk preview, the expected average price, slippage and what fills, and its TP / SL. */
export type OrderSummary = {
  preview: OrderPreview;
  /** The order rests on the book (its margin is held while it rests). */
  rests: boolean;
  /** Average fill price from the visible book within the limit, at the tick's decimals (`null`: nothing fills now). */
  avgPrice: string | null;
  /** Slippage of that average against the best level, basis points (`null` for a resting order). */
  slippageBps: string | null;
  /** Contracts the visible book fills within the limit now (the whole size for a resting order). */
  fillable: string;
  /**
   * The part of a crossing GTC limit the visible book does not fill now: `qty` contracts (decimal string)
   * rest at `price` (the limit, USDC per contract) and the preview counts them filled there, the worst
   * case. `null` when the whole order fills now, rests whole (`rests`), or is IOC / FOK.
   */
  rest: { qty: string; price: string } | null;
};

/** The tick of an instrument (sandbox extra `tick_size`, else 10^-price_decimals). */
const tickOf = (i: Instrument) =>
  i.tick_size ?? (i.price_decimals > 0 ? `0.${'0'.repeat(i.price_decimals - 1)}1` : '1');
/** The instrument's size step (sandbox extra `lot_size`, else 10^-quantity_decimals). */
const lotOf = (i: Instrument) =>
  i.lot_size ?? (i.quantity_decimals > 0 ? `0.${'0'.repeat(i.quantity_decimals - 1)}1` : '1');

/** Whether a limit `p` on `buy` rests against the best opposite level `other`. */
function restsAt(buy: boolean, p: string, other: string | undefined): boolean {
  const pu = toUnits(p, 8);
  const ou = other === undefined ? undefined : toUnits(other, 8);
  return ou === undefined || pu === undefined || (buy ? pu < ou : pu > ou);
}

/** The leading `levels` (best first) an order on `buy` with limit `p` can take: prices at or better than the limit. */
function withinLimit(levels: Book['asks'], buy: boolean, p: string): Book['asks'] {
  const lim = truncUnits(p, 8);
  const out: Book['asks'] = [];
  for (const l of levels) {
    const lp = truncUnits(l[0], 8);
    if (buy ? lp > lim : lp < lim) break;
    out.push(l);
  }
  return out;
}

/** The liquidity an order takes: maker for post-only, taker for IOC / FOK, either for a GTC limit. */
export const liquidityOf = (o: Pick<PerpsOrderInput, 'tif' | 'po'>): Liquidity =>
  o.tif !== 'gtc' ? 'taker' : o.po ? 'maker' : 'either';

/**
 * Summarises a non-trigger order item against the venue's reads; `undefined` for a trigger order or
 * when the book cannot price an order without a limit. Throws nothing.
 */
export function summarizeOrder(o: PerpsOrderInput, r: SummaryReads): OrderSummary | undefined {
  if (o.tr) return undefined;
  const tick = tickOf(r.instrument);
  const levels = o.buy ? r.book.asks : r.book.bids;
  const rests = o.tif === 'gtc' && o.p !== undefined && (o.po === true || restsAt(o.buy, o.p, levels[0]?.[0]));
  let price = o.p;
  let avg: string | null = null;
  let slip: string | null = null;
  let fillable = o.qty;
  let marginPrice = o.p;
  const pos = r.portfolio.positions.find((p) => p.instrument_id === o.iid);
  const cur = pos ? (toUnits(pos.size, 8) ?? 0n) : 0n;
  let split: { close: string | null; open: string | null } = { close: null, open: null };
  let rest: OrderSummary['rest'] = null;
  if (!rests) {
    const walk = estimateWithin(levels, o.buy, o.qty, o.p, tick);
    avg = walk?.avgPrice ?? null;
    slip = walk?.slippageBps ?? null;
    fillable = walk?.fillable ?? '0';
    price = walk?.avgExact ?? o.p;
    // What a GTC limit does not fill now rests at its limit: priced there (a level of the rest at the limit, after the
    // book within it).
    let priced = levels;
    const left = truncUnits(o.qty, 8) - truncUnits(fillable, 8);
    if (o.tif === 'gtc' && o.p !== undefined && left > 0n) {
      rest = { qty: fromUnits(left, 8), price: o.p };
      priced = [...withinLimit(levels, o.buy, o.p), [o.p, rest.qty]];
      price = estimateWithin(priced, o.buy, o.qty, o.p, tick)?.avgExact ?? o.p;
    }
    if (cur !== 0n && cur > 0n !== o.buy)
      split = splitWalk(priced, o.buy, o.qty, fromUnits(cur < 0n ? -cur : cur, 8), o.p);
    marginPrice = o.p ?? walk?.limit;
  }
  if (!price) return undefined;
  const others = r.portfolio.positions.filter((p) => p.instrument_id !== o.iid);
  const pv = pos ? (toUnits(pos.position_value, 8) ?? 0n) : 0n;
  const rate = pos && pv > 0n ? fromUnits(((toUnits(pos.maintenance_margin, 8) ?? 0n) * 10n ** 8n) / pv, 8) : undefined;
  const preview = previewOrder({
    buy: o.buy,
    qty: o.qty,
    price,
    ...(marginPrice ? { marginPrice } : {}),
    ...(split.close ? { closePrice: split.close } : {}),
    ...(split.open ? { openPrice: split.open } : {}),
    leverage: r.leverage,
    fees: r.fees,
    liquidity: liquidityOf(o),
    resting: rests,
    reduceOnly: o.ro === true,
    markPrice: r.markPrice ?? levels[0]?.[0] ?? price,
    maxLeverage: r.instrument.max_leverage,
    ...(rate ? { maintenanceRate: rate } : {}),
    priceDecimals: decimalsOf(tick),
    accountValue: r.portfolio.margin.total_account_value,
    withdrawable: r.portfolio.withdrawable,
    ...(pos ? { position: { size: pos.size, entryPrice: pos.entry_price } } : {}),
    otherMaintenance: fromUnits(
      others.reduce((a, p) => a + (toUnits(p.maintenance_margin, 8) ?? 0n), 0n),
      8,
    ),
  });
  return { preview, rests, avgPrice: rests ? null : avg, slippageBps: rests ? null : slip, fillable, rest };
}

/**
 * One order of a command as the approval window and the ticket summarise it; trigger orders listed with their trigger.
 * Its words: `perpsOrderWords` (`./words`), which takes it as it is.
 */
export type CommandOrderSummary = {
  /** The instrument as every surface names it: the venue's symbol beside its id (`instrumentLabel`). */
  symbol: string;
  buy: boolean;
  qty: string;
  /** The order's limit (`undefined`: none) and time in force / post-only / reduce-only as signed. */
  p?: string;
  tif?: string;
  po: boolean;
  ro: boolean;
  /**
   * TP / SL trigger (`tp` / `sl` at `trp`), when the item is a trigger order; `market`: it executes at market; `whole`:
   * it closes the whole position (`isWholePositionLeg`).
   */
  trigger?: { kind: 'tp' | 'sl'; trp: string; market?: boolean; whole?: boolean };
  /** The numbers (absent for a trigger order, or when the venue's reads could not price it). */
  summary?: OrderSummary;
  /**
   * The instrument's tick and lot (decimal strings, the `instruments` read) to format prices and sizes; absent for an
   * unknown instrument.
   */
  tick?: string;
  lot?: string;
};

/** Reads the venue's data for a summary (through the background: the caller never holds a secret). */
export type SummaryReader = {
  instruments: () => Promise<Instrument[]>;
  fees: () => Promise<{ taker: string; maker: string } | undefined>;
  book: (iid: number) => Promise<Book>;
  portfolio: () => Promise<Portfolio>;
  /** The account's leverage for the instrument (`config` read). */
  leverage: (iid: number) => Promise<number | undefined>;
  /** The mark price (tickers read). */
  mark: (iid: number) => Promise<string | undefined>;
};

/**
 * Summarises every item of a `createOrders` command for the approval window: the numbers of each order
 * computed from the venue's reads by `summarizeOrder` — the same code as the ticket — applied one after
 * another is not modelled: each is summarised against the account as it is now. Rejects when a read fails
 * (the window then says the numbers are unavailable).
 */
export async function summarizeCommand(
  orders: readonly PerpsOrderInput[],
  read: SummaryReader,
): Promise<CommandOrderSummary[]> {
  const [instruments, fees, portfolio] = await Promise.all([read.instruments(), read.fees(), read.portfolio()]);
  const out: CommandOrderSummary[] = [];
  for (const o of orders) {
    const instrument = instruments.find((i) => i.instrument_id === o.iid);
    // The order's facts as every surface words them (`orderFacts`, ./words.ts), with the instrument's steps.
    const steps = instrument ? { tick: tickOf(instrument), lot: lotOf(instrument) } : {};
    const row: CommandOrderSummary = orderFacts(o, instrumentLabel(o.iid, instrument?.symbol), steps);
    if (!o.tr && instrument && fees) {
      const [book, leverage, mark] = await Promise.all([read.book(o.iid), read.leverage(o.iid), read.mark(o.iid)]);
      const s =
        leverage === undefined
          ? undefined
          : summarizeOrder(o, { instrument, book, portfolio, fees, leverage, ...(mark ? { markPrice: mark } : {}) });
      if (s) row.summary = s;
    }
    out.push(row);
  }
  return out;
}
