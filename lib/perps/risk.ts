/**
 * Pre-trade risk for a perps order (issue #10): what the order does to the account before anyone
 * signs it. Pure bigint arithmetic over decimal strings — never a binary float. Inputs come from the
 * venue's reads (`/v1/account/portfolio`, `/v1/info/fees`, `/v1/info/instruments`, the book).
 *
 * Units: sizes and prices are decimal strings (contracts and USDC per contract); every USDC amount is a
 * decimal string of USDC. Internally all values are fixed-point at 8 decimals (`S`).
 *
 * Model (the venue's own formulas are unshown; these match the sandbox, README "Perps venue"):
 * - notional = |qty| × price; initial margin = notional ÷ leverage; fee = notional × fee rate;
 * - maintenance margin = notional at mark ÷ (2 × max leverage);
 * - liquidation price after the fill P solves `R + s'·(P − e') = |s'|·P ÷ (2L)`, where `s'`, `e'` are the
 *   position's size and entry after the fill and R = account value − this position's unrealised PnL −
 *   the fee − the other positions' maintenance margin (other positions held at their mark).
 */
import { abs, divUnits, fromUnits, mulUnits, truncUnits } from '../decimal';

const SCALE = 8;
const ONE = 10n ** BigInt(SCALE);

/** Decimal string → fixed-point bigint at 8 decimals (extra decimals truncated toward zero). */
const fx = (s: string): bigint => truncUnits(s, SCALE);
const mul = (a: bigint, b: bigint) => mulUnits(a, b, SCALE);
const div = (a: bigint, b: bigint) => divUnits(a, b, SCALE);
/** A fixed-point value as a decimal string rounded to `dp` decimals (toward zero). */
function out(v: bigint, dp: number): string {
  const cut = 10n ** BigInt(SCALE - dp);
  return fromUnits((v / cut) * cut, SCALE);
}

/** The account's current position in the instrument (absent when flat). Size signed: + long, − short. */
export type RiskPosition = { size: string; entryPrice: string };

/** Inputs of `previewOrder`. `price` is the expected average fill price (limit price or book walk). */
export type OrderPreviewInput = {
  buy: boolean;
  qty: string;
  price: string;
  leverage: number;
  /** Taker fee rate as a fraction (`"0.0005"` = 5 bp). */
  feeRate: string;
  markPrice: string;
  maxLeverage: number;
  /** Account value (balance + unrealised PnL of every position), USDC. */
  accountValue: string;
  /** Free collateral, USDC. */
  withdrawable: string;
  position?: RiskPosition;
  /** Σ maintenance margin of the account's other positions, USDC. */
  otherMaintenance?: string;
};

/** What the order would do. USDC amounts at 2 decimals except `fee` (4); prices at the input's precision. */
export type OrderPreview = {
  notional: string;
  marginRequired: string;
  fee: string;
  /** Position size and entry after a full fill. */
  newSize: string;
  newEntry: string;
  /** Estimated liquidation price after the fill; `null` when flat or none is reachable (≤ 0). */
  liquidationPrice: string | null;
  /** The order reverses the position's direction. */
  flips: boolean;
  /** The order increases the absolute position. */
  grows: boolean;
  /** The margin the order needs exceeds the free collateral. */
  insufficientMargin: boolean;
};

/** Position after adding a signed `qty` at `price` (average entry on growth; kept on reduction; new on flip). */
export function positionAfter(pos: RiskPosition | undefined, signedQty: bigint, price: bigint): { size: bigint; entry: bigint } {
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

/** Liquidation price for size `s` at entry `e` with the rest of the account worth `rest` (all fixed-point). */
export function liquidationPriceFor(s: bigint, e: bigint, rest: bigint, maxLeverage: number): bigint | null {
  if (s === 0n) return null;
  const twoL = BigInt(2 * maxLeverage);
  // s·P − |s|·P/(2L) = s·e − R  →  P = (s·e − R)·2L / (s·2L − |s|)
  const num = (mul(s, e) - rest) * twoL;
  const den = s * twoL - abs(s);
  const p = (num * ONE) / den;
  return p > 0n ? p : null;
}

/** Computes the pre-trade numbers of an order. Throws nothing; bad decimals count as zero. */
export function previewOrder(i: OrderPreviewInput): OrderPreview {
  const qty = fx(i.qty);
  const price = fx(i.price);
  const mark = fx(i.markPrice);
  const notional = mul(qty, price);
  const lev = BigInt(Math.max(1, i.leverage));
  const fee = mul(notional, fx(i.feeRate));
  const signed = i.buy ? qty : -qty;
  const cur = i.position ? fx(i.position.size) : 0n;
  const after = positionAfter(i.position, signed, price);
  const grows = abs(after.size) > abs(cur);
  const flips = cur !== 0n && after.size !== 0n && after.size > 0n !== cur > 0n;
  // Margin is needed for the part that grows the position (a reduction frees margin).
  const growing = grows ? (flips ? abs(after.size) : abs(after.size) - abs(cur)) : 0n;
  const marginRequired = mul(growing, price) / lev;
  const currentUpnl = i.position ? mul(cur, mark - fx(i.position.entryPrice)) : 0n;
  const rest = fx(i.accountValue) - currentUpnl - fee - fx(i.otherMaintenance ?? '0');
  const liq = liquidationPriceFor(after.size, after.entry, rest, i.maxLeverage);
  const priceDp = Math.max(2, (i.price.split('.')[1] ?? '').length);
  return {
    notional: out(notional, 2),
    marginRequired: out(marginRequired, 2),
    fee: out(fee, 4),
    newSize: out(after.size, 8),
    newEntry: out(after.entry, priceDp),
    liquidationPrice: liq === null ? null : out(liq, priceDp),
    flips,
    grows,
    insufficientMargin: marginRequired + fee > fx(i.withdrawable),
  };
}

/**
 * The largest order size the free collateral allows at `price` and `leverage`, after the fee, rounded
 * down to the lot (contracts). `fraction` (0-1, as a decimal string) takes a share of it (size presets).
 */
export function maxOrderSize(i: { withdrawable: string; price: string; leverage: number; feeRate: string; lot: string; fraction?: string }): string {
  const price = fx(i.price);
  const lot = fx(i.lot);
  if (price === 0n || lot === 0n) return '0';
  // margin + fee per contract = price/lev + price×rate
  const perContract = price / BigInt(Math.max(1, i.leverage)) + mul(price, fx(i.feeRate));
  let size = div(mul(fx(i.withdrawable), fx(i.fraction ?? '1')), perContract);
  size -= size % lot;
  return out(size > 0n ? size : 0n, SCALE).replace(/\.?0+$/, '') || '0';
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
  let want = fx(qty);
  if (want <= 0n) return null;
  const total = want;
  let cost = 0n;
  for (const [p, q] of levels) {
    const take = fx(q) < want ? fx(q) : want;
    cost += mul(take, fx(p));
    want -= take;
    if (want === 0n) break;
  }
  if (want > 0n) return null;
  return out(div(cost, total), 8);
}
