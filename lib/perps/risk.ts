/**
 * Pre-trade risk for a perps order: what the order does to the account before anyone
 * signs it. Pure bigint arithmetic over decimal strings — never a binary float. Every parameter comes
 * from the venue's own reads (`/v1/account/portfolio`, `/v1/account/config`, `/v1/info/fees`,
 * `/v1/info/instruments`, the book); nothing here is shared with the sandbox's engine (`lib/sandbox/**`).
 *
 * Units: sizes and prices are decimal strings (contracts and USDC per contract); every USDC amount is a
 * decimal string of USDC. Internally all values are fixed-point at 8 decimals (`S`).
 *
 * The venue's rules as we apply them (the preview equals what the venue records):
 * - leverage and margin mode are the account's for the instrument (`config` read / the position row);
 *   a leverage typed but not applied is never used here (the ticket shows it as pending);
 * - fee = notional × rate: the maker rate for post-only, the taker rate for market / IOC / FOK, and
 *   "up to" the taker rate for a GTC limit that may rest or cross (`liquidity: 'either'`);
 * - the margin the order adds: the growing part × price ÷ leverage; on a flip, the whole new side;
 *   a reduction adds none and realises PnL; a resting order holds quantity × price ÷ leverage;
 * - acceptance: an order that is not reduce-only needs `quantity × margin price ÷ leverage` (+ fee) of
 *   free collateral, where the margin price is the limit price — for a protected market order the
 *   IOC limit, the worst price the order may reach (`marginPrice`). A flip or a reduction sent without
 *   reduce-only is charged in full: we do not assume the venue nets it;
 * - maintenance margin = notional × the maintenance rate. The venue publishes no rate: we take it from
 *   the portfolio read (the position's `maintenance_margin ÷ position_value`) where one exists, else
 *   1 ÷ (2 × max leverage). So the liquidation price is always an estimate (`liquidationEstimated`):
 *   it solves `R + s'·(P − e') = m·|s'|·P`, where `s'`, `e'` are size and entry after the fill and
 *   R = account value − this position's unrealised PnL − the fee + realised PnL − the other positions'
 *   maintenance margin (other positions held at their mark).
 */
import { abs, divUnits, fromUnits, mulUnits, truncUnits } from '../decimal';

const SCALE = 8;
const ONE = 10n ** BigInt(SCALE);

/** Decimal string → fixed-point bigint at 8 decimals (extra decimals truncated toward zero). */
const fx = (s: string): bigint => truncUnits(s, SCALE);
const mul = (a: bigint, b: bigint) => mulUnits(a, b, SCALE);
const div = (a: bigint, b: bigint) => divUnits(a, b, SCALE);
/** A fixed-point value as a decimal string rounded to `dp` decimals (toward zero, or away from it with `up`). */
function out(v: bigint, dp: number, up = false): string {
  const cut = 10n ** BigInt(SCALE - Math.min(SCALE, dp));
  const q = v / cut;
  const bump = up && v % cut !== 0n ? (v > 0n ? 1n : -1n) : 0n;
  return fromUnits((q + bump) * cut, SCALE);
}
/** Half-up rounding to `dp` decimals (prices shown to the tick's decimals). */
function roundOut(v: bigint, dp: number): string {
  const cut = 10n ** BigInt(SCALE - Math.min(SCALE, dp));
  const half = cut / 2n;
  return fromUnits(((v + (v < 0n ? -half : half)) / cut) * cut, SCALE);
}

/** Decimals of a tick or lot (`"0.5"` → 1, `"0.001"` → 3, `"1"` → 0). */
export const decimalsOf = (step: string): number => (step.split('.')[1] ?? '').replace(/0+$/, '').length;

/** The account's current position in the instrument (absent when flat). Size signed: + long, − short. */
export type RiskPosition = { size: string; entryPrice: string };

/** Which side of the book the order's fills take: `either` for a GTC limit that may rest or cross. */
export type Liquidity = 'taker' | 'maker' | 'either';

/** Inputs of `previewOrder`. */
export type OrderPreviewInput = {
  buy: boolean;
  qty: string;
  /** The expected average fill price (limit price, or the book walk for a market order). */
  price: string;
  /**
   * For an order that walks the book and reduces: the average price of the reducing contracts (the first
   * ones to fill: realised PnL) and of the rest (a flip's new entry). Default `price` for both.
   */
  closePrice?: string;
  openPrice?: string;
  /**
   * The price the venue charges margin at when it accepts the order (limit price; a protected market order's IOC
   * limit). Default `price`.
   */
  marginPrice?: string;
  /** The venue's leverage for the instrument (`config` read), never a typed-but-unapplied value. */
  leverage: number;
  /** Fee rates as fractions (`"0.0005"` = 5 bp), from `GET /v1/info/fees`. */
  fees: { taker: string; maker: string };
  liquidity: Liquidity;
  /** The order rests on the book (a post-only or a non-crossing GTC limit): its margin is held while it rests. */
  resting?: boolean;
  reduceOnly?: boolean;
  markPrice: string;
  maxLeverage: number;
  /** Maintenance margin as a fraction of notional (portfolio read); default 1 ÷ (2 × `maxLeverage`). */
  maintenanceRate?: string;
  /** Decimals prices are shown with (the instrument's tick); default the input price's, at least 2. */
  priceDecimals?: number;
  /** Account value (balance + unrealised PnL of every position), USDC. */
  accountValue: string;
  /** Free collateral, USDC (portfolio `withdrawable`: already net of resting orders' margin). */
  withdrawable: string;
  position?: RiskPosition;
  /** Σ maintenance margin of the account's other positions, USDC. */
  otherMaintenance?: string;
};

/** What the order would do. USDC amounts at 2 decimals except `fee` (4); prices at `priceDecimals`. */
export type OrderPreview = {
  notional: string;
  /**
   * Initial margin the order adds: growth × price ÷ leverage, the whole new side on a flip, held by a resting order; 0
   * on a reduction.
   */
  marginRequired: string;
  /** Free collateral the venue needs to accept the order (0 for reduce-only), USDC. */
  marginCheck: string;
  fee: string;
  /** The fee rate used (fraction) and whether it is a ceiling (`upTo`: a limit that may fill as maker). */
  feeRate: string;
  feeUpTo: boolean;
  /** Position size and entry after a full fill (size exact; entry at `priceDecimals`). */
  newSize: string;
  newEntry: string;
  /** PnL realised by the reducing part at the expected price, USDC (0 when nothing is reduced). */
  realizedPnl: string;
  /** Estimated liquidation price after the fill; `null` when flat or none is reachable (≤ 0). */
  liquidationPrice: string | null;
  /** The liquidation price rests on a maintenance rule the venue does not publish: always shown as "est.". */
  liquidationEstimated: true;
  /** The order reverses the position's direction. */
  flips: boolean;
  /** The order increases the absolute position. */
  grows: boolean;
  /** Reduce-only and nothing to reduce: the venue rejects it. */
  reduceOnlyInvalid: boolean;
  /** The margin check plus the fee exceeds the free collateral: the venue refuses the order. */
  insufficientMargin: boolean;
};

/** Position after adding a signed `qty` at `price` (average entry on growth; kept on reduction; new on flip). */
export function positionAfter(
  pos: RiskPosition | undefined,
  signedQty: bigint,
  price: bigint,
): { size: bigint; entry: bigint } {
  const size = pos ? fx(pos.size) : 0n;
  const entry = pos ? fx(pos.entryPrice) : 0n;
  const next = size + signedQty;
  if (size === 0n || size > 0n === signedQty > 0n) {
    const total = abs(size) + abs(signedQty);
    return { size: next, entry: total === 0n ? 0n : (abs(size) * entry + abs(signedQty) * price) / total };
  }
  if (next === 0n) return { size: 0n, entry: 0n };
  return { size: next, entry: next > 0n === size > 0n ? entry : price };
}

/**
 * Liquidation price for size `s` at entry `e` with the rest of the account worth `rest`, maintenance rate `m` (all
 * fixed-point).
 */
export function liquidationPriceFor(s: bigint, e: bigint, rest: bigint, m: bigint): bigint | null {
  if (s === 0n) return null;
  // s·P − m·|s|·P = s·e − R  →  P = (s·e − R) / (s − m·|s|)
  const den = s - mul(abs(s), m);
  if (den === 0n) return null;
  const p = ((mul(s, e) - rest) * ONE) / den;
  return p > 0n ? p : null;
}

/** The maintenance rate 1 ÷ (2 × max leverage) as a decimal fraction (the fallback when the portfolio shows none). */
export const defaultMaintenanceRate = (maxLeverage: number): string =>
  fromUnits(ONE / BigInt(2 * Math.max(1, maxLeverage)), SCALE);

/** The fee rate an order pays: maker for post-only, taker otherwise (a ceiling when it may do either). */
function feeRateFor(fees: { taker: string; maker: string }, liquidity: Liquidity): { rate: string; upTo: boolean } {
  return liquidity === 'maker' ? { rate: fees.maker, upTo: false } : { rate: fees.taker, upTo: liquidity === 'either' };
}

/** Computes the pre-trade numbers of an order. Throws nothing; bad decimals count as zero. */
export function previewOrder(i: OrderPreviewInput): OrderPreview {
  const cur = i.position ? fx(i.position.size) : 0n;
  const ro = i.reduceOnly === true;
  const reducing = cur !== 0n && cur > 0n !== i.buy;
  // The venue clamps a reduce-only order to the position (and rejects one that would grow it).
  const qty = ro && reducing && fx(i.qty) > abs(cur) ? abs(cur) : fx(i.qty);
  const price = fx(i.price);
  const marginPrice = fx(i.marginPrice ?? i.price);
  const mark = fx(i.markPrice);
  const notional = mul(qty, price);
  const lev = BigInt(Math.max(1, i.leverage));
  const { rate, upTo } = feeRateFor(i.fees, i.liquidity);
  const fee = mul(notional, fx(rate));
  const signed = i.buy ? qty : -qty;
  const closeAt = fx(i.closePrice ?? i.price);
  const openAt = fx(i.openPrice ?? i.price);
  const after =
    ro && !reducing
      ? { size: cur, entry: i.position ? fx(i.position.entryPrice) : 0n }
      : positionAfter(i.position, signed, reducing ? openAt : price);
  const grows = abs(after.size) > abs(cur);
  const flips = cur !== 0n && after.size !== 0n && after.size > 0n !== cur > 0n;
  const closing = reducing ? (qty < abs(cur) ? qty : abs(cur)) : 0n;
  const entry = i.position ? fx(i.position.entryPrice) : 0n;
  const realized = reducing ? mul(closing, closeAt - entry) * (cur > 0n ? 1n : -1n) : 0n;
  const growing = flips ? abs(after.size) : grows ? abs(after.size) - abs(cur) : 0n;
  const marginCheck = ro ? 0n : mul(qty, marginPrice) / lev;
  const marginRequired = ro ? 0n : i.resting ? mul(qty, price) / lev : mul(growing, flips ? openAt : price) / lev;
  const currentUpnl = i.position ? mul(cur, mark - entry) : 0n;
  const m = fx(i.maintenanceRate ?? defaultMaintenanceRate(i.maxLeverage));
  const rest = fx(i.accountValue) - currentUpnl - fee + realized - fx(i.otherMaintenance ?? '0');
  const liq = liquidationPriceFor(after.size, after.entry, rest, m);
  const dp = i.priceDecimals ?? Math.max(2, (i.price.split('.')[1] ?? '').length);
  return {
    notional: out(notional, 2),
    marginRequired: out(marginRequired, 2, true),
    marginCheck: out(marginCheck, 2, true),
    fee: out(fee, 4, true),
    feeRate: rate,
    feeUpTo: upTo,
    newSize: fromUnits(after.size, SCALE),
    newEntry: roundOut(after.entry, dp),
    realizedPnl: out(realized, 2),
    // Rounded toward the entry, the conservative side: up for a long, down for a short.
    liquidationPrice: liq === null ? null : out(liq, dp, after.size > 0n),
    liquidationEstimated: true,
    flips,
    grows,
    reduceOnlyInvalid: ro && !reducing,
    insufficientMargin: !ro && marginCheck + fee > fx(i.withdrawable),
  };
}

/**
 * The largest order size the venue accepts for margin: free collateral ÷ (margin
 * price ÷ leverage + margin price × fee rate), rounded down to the lot (contracts). `price` is the
 * margin price of the order kind (the limit price; a market order's protected IOC limit — the worst
 * price it may reach). `fraction` (0-1, a decimal string) takes a share of it (size presets); the
 * share is rounded down to the lot too, so a preset is never refused for margin.
 */
export function maxOrderSize(i: {
  withdrawable: string;
  price: string;
  leverage: number;
  feeRate: string;
  lot: string;
  fraction?: string;
}): string {
  const price = fx(i.price);
  const lot = fx(i.lot);
  if (price === 0n || lot === 0n) return '0';
  // margin + fee per contract = price/lev + price×rate, rounded up so the product never exceeds the collateral
  const perContract = price / BigInt(Math.max(1, i.leverage)) + mul(price, fx(i.feeRate)) + 1n;
  let size = div(mul(fx(i.withdrawable), fx(i.fraction ?? '1')), perContract);
  size -= size % lot;
  return fromUnits(size > 0n ? size : 0n, SCALE);
}

/** Contracts for a USDC amount at `price`, rounded down to the lot (the size-unit toggle). */
export function contractsForUsdc(usdc: string, price: string, lot: string): string {
  const p = fx(price);
  const l = fx(lot);
  if (p === 0n || l === 0n) return '0';
  let size = div(fx(usdc), p);
  size -= size % l;
  return fromUnits(size > 0n ? size : 0n, SCALE);
}

/**
 * Average fill price of `qty` contracts against book levels (`[price, quantity]`, best first), or
 * `null` when the book is too thin. Used to estimate a market order's price.
 */
export function bookAveragePrice(levels: readonly (readonly [string, string])[], qty: string): string | null {
  const w = walkBook(levels, qty);
  return w.filled === fx(qty) && w.avg !== undefined ? fromUnits(w.avg, SCALE) : null;
}

/** Fixed-point result of walking the book: filled size, average price, last level reached. */
function walkBook(
  levels: readonly (readonly [string, string])[],
  qty: string,
  limit?: bigint,
  buy = true,
): { filled: bigint; avg?: bigint; worst?: bigint } {
  let want = fx(qty);
  let cost = 0n;
  let filled = 0n;
  let worst: bigint | undefined;
  for (const [ps, q] of levels) {
    if (want <= 0n) break;
    const p = fx(ps);
    if (limit !== undefined && (buy ? p > limit : p < limit)) break;
    const take = fx(q) < want ? fx(q) : want;
    cost += mul(take, p);
    filled += take;
    want -= take;
    worst = p;
  }
  return filled === 0n ? { filled } : { filled, avg: div(cost, filled), ...(worst === undefined ? {} : { worst }) };
}

/** The default slippage cap of a protected market order, basis points (1 %; Settings and per order). */
export const DEFAULT_SLIPPAGE_BPS = 100;

/**
 * The limit price of a protected market order: the reference price moved by the
 * slippage cap against the trader (up to buy, down to sell), snapped to the tick inside the cap (down
 * to buy, up to sell). `ref` and `tick` decimal strings; `capBps` basis points (integer ≥ 0).
 */
function protectedLimit(ref: string, buy: boolean, capBps: number, tick: string): string {
  const r = fx(ref);
  const t = fx(tick);
  const moved = (r * BigInt(10_000 + (buy ? 1 : -1) * Math.max(0, Math.floor(capBps)))) / 10_000n;
  if (t === 0n) return fromUnits(moved, SCALE);
  const snapped = buy ? moved - (moved % t) : moved + ((t - (moved % t)) % t);
  return fromUnits(snapped < t ? t : snapped, SCALE);
}

/** A market order's estimate from the visible book: what fills within the limit, at what average, and the slippage. */
export type MarketEstimate = {
  /** The IOC limit sent (reference ± cap, on the tick). */
  limit: string;
  /** The reference price: the best level on the side the order takes. */
  reference: string;
  /** Contracts the visible book fills within the limit (may be less than asked: the rest is cancelled). */
  fillable: string;
  /**
   * Average fill price of `fillable` at the tick's decimals (half up), or `null` when nothing fills within the limit.
   */
  avgPrice: string | null;
  /** The same average at 8 decimals, for the maths (`previewOrder`'s `price`). */
  avgExact: string | null;
  /** (average − reference) ÷ reference against the trader, basis points at 2 decimals; `null` without a fill. */
  slippageBps: string | null;
  /** The whole size fills within the cap on the visible book. */
  complete: boolean;
};

/**
 * Estimates a protected market order from the visible book: `levels` the side it takes (asks to buy,
 * bids to sell, best first), `qty` contracts, `capBps` the slippage cap, `tick` the instrument's tick.
 * Returns `undefined` when the side is empty (no reference price: the ticket asks for a limit price).
 */
export function estimateMarket(
  levels: readonly (readonly [string, string])[],
  buy: boolean,
  qty: string,
  capBps: number,
  tick: string,
): MarketEstimate | undefined {
  const ref = levels[0]?.[0];
  return ref ? estimateWithin(levels, buy, qty, protectedLimit(ref, buy, capBps, tick), tick) : undefined;
}

/**
 * What an order taking `levels` (best first) fills now within `limit` (any price when undefined): the
 * same estimate as `estimateMarket` for an order whose limit is already known (an IOC / FOK or a
 * crossing GTC limit, e.g. from a command being approved). `undefined` when the side is empty.
 */
export function estimateWithin(
  levels: readonly (readonly [string, string])[],
  buy: boolean,
  qty: string,
  limit: string | undefined,
  tick: string,
): MarketEstimate | undefined {
  const ref = levels[0]?.[0];
  if (!ref) return undefined;
  const w = walkBook(levels, qty, limit === undefined ? undefined : fx(limit), buy);
  const r = fx(ref);
  const slip = w.avg === undefined || r === 0n ? null : ((buy ? w.avg - r : r - w.avg) * 10_000n * 100n) / r;
  return {
    limit: limit ?? levels[levels.length - 1]?.[0] ?? ref,
    reference: ref,
    fillable: fromUnits(w.filled, SCALE),
    avgPrice: w.avg === undefined ? null : roundOut(w.avg, decimalsOf(tick)),
    avgExact: w.avg === undefined ? null : fromUnits(w.avg, SCALE),
    slippageBps: slip === null ? null : fromUnits(slip, 2),
    complete: w.filled === fx(qty) && w.filled > 0n,
  };
}

/**
 * Splits a book walk of `qty` contracts (within `limit` when given) into the average price of its first
 * `first` contracts and of the rest, at 8 decimals (`null` for an empty part): a reducing order's
 * closing part and the new side of a flip (`previewOrder`'s `closePrice` / `openPrice`).
 */
export function splitWalk(
  levels: readonly (readonly [string, string])[],
  buy: boolean,
  qty: string,
  first: string,
  limit?: string,
): { close: string | null; open: string | null } {
  const lim = limit === undefined ? undefined : fx(limit);
  let want = fx(qty);
  let head = fx(first) < want ? fx(first) : want;
  const sums = { close: [0n, 0n], open: [0n, 0n] };
  for (const [ps, q] of levels) {
    const p = fx(ps);
    if (want <= 0n || (lim !== undefined && (buy ? p > lim : p < lim))) break;
    let avail = fx(q) < want ? fx(q) : want;
    want -= avail;
    const h = head < avail ? head : avail;
    if (h > 0n) {
      sums.close = [(sums.close[0] ?? 0n) + mul(h, p), (sums.close[1] ?? 0n) + h];
      head -= h;
      avail -= h;
    }
    if (avail > 0n) sums.open = [(sums.open[0] ?? 0n) + mul(avail, p), (sums.open[1] ?? 0n) + avail];
  }
  const avg = ([c, n]: bigint[]) => (n ? fromUnits(div(c ?? 0n, n), SCALE) : null);
  return { close: avg(sums.close), open: avg(sums.open) };
}
