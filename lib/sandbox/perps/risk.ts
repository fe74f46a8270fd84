/**
 * The sandbox perps venue's position arithmetic (the values the venue leaves unshown, chosen here and
 * documented in `lib/sandbox/README.md`, "Sandbox gateway", the "Perps venue" paragraph): unrealised PnL,
 * maintenance margin (half the initial margin at the instrument's maximum leverage), the liquidation price,
 * an hourly funding payment, a fill's effect on a position and its fee (taker 5 bp, maker 1 bp), and when a
 * trigger fires. Pure: prices and quantities bigint PX units (`PX_SCALE` decimals), amounts USDC base units.
 */
import { abs, minB, toUnits } from '../../decimal';
import { MAKER_FEE, NOTIONAL_DIV, TAKER_FEE, type Instrument, type PerpsOrder, type Position } from './model';

/** Unrealised PnL of `p` at `mark` (USDC base units). */
export function unrealizedPnl(p: Position, mark: bigint): bigint {
  return (p.size * (mark - p.entry)) / NOTIONAL_DIV;
}

/** Maintenance margin of `p`: notional at the instrument's mark / (2 × its max leverage), base units. */
export function maintenanceMargin(p: Position, inst: Pick<Instrument, 'mark' | 'maxLeverage'>): bigint {
  return (abs(p.size) * inst.mark) / NOTIONAL_DIV / BigInt(2 * inst.maxLeverage);
}

/**
 * Liquidation price of `p` (PX units; 0 when none is reachable), where `rest` is the account's balance
 * plus, for every other position, its unrealised PnL minus its maintenance margin (base units).
 * Solves `rest + s·(P − e) = |s|·P/(2L)` for P: `P = (s·e − rest·DIV) / (s − |s|/(2L))`.
 */
export function liquidationPriceOf(p: Position, maxLeverage: number, rest: bigint): bigint {
  if (p.size === 0n) return 0n;
  const twoL = BigInt(2 * maxLeverage);
  const num = (p.size * p.entry - rest * NOTIONAL_DIV) * twoL;
  const den = p.size * twoL - abs(p.size);
  const price = num / den;
  return price > 0n ? price : 0n;
}

/**
 * One hourly funding payment of `p` at `mark` and `rate` (decimal string): positive rate, longs pay and shorts receive
 * (base units, + received).
 */
export function fundingAmount(p: Position, mark: bigint, rate: string): bigint {
  const r = toUnits(rate.replace(/^-/, ''), 8) ?? 0n;
  const value = (abs(p.size) * mark) / NOTIONAL_DIV;
  const paid = (value * r) / 10n ** 8n;
  return (rate.startsWith('-') ? 1n : -1n) * (p.size > 0n ? 1n : -1n) * paid;
}

/**
 * Applies a fill of `signed` quantity (+ buy, − sell) at `price` to `p` (changed in place): a fill that
 * grows the position averages the entry; one that reduces it realises PnL on the closed part, and one
 * that flips it enters the new side at `price`. Returns the realised PnL (base units).
 */
export function applyFill(p: Position, signed: bigint, price: bigint): bigint {
  const qty = abs(signed);
  if (p.size === 0n || p.size > 0n === signed > 0n) {
    const size = abs(p.size) + qty;
    p.entry = (abs(p.size) * p.entry + qty * price) / size;
    p.size += signed;
    return 0n;
  }
  const closing = minB(qty, abs(p.size));
  const pnl = (closing * (price - p.entry) * (p.size > 0n ? 1n : -1n)) / NOTIONAL_DIV;
  const newSize = p.size + signed;
  if (newSize === 0n) p.entry = 0n;
  else if (newSize > 0n !== p.size > 0n) p.entry = price;
  p.size = newSize;
  return pnl;
}

/** The fee of a fill of `qty` at `price` (base units): taker 5 bp, maker 1 bp of notional. */
export function fillFee(qty: bigint, price: bigint, taker: boolean): bigint {
  const rate = taker ? TAKER_FEE : MAKER_FEE;
  return (((qty * price) / NOTIONAL_DIV) * rate.num) / rate.den;
}

/**
 * Whether `mark` crossed `o`'s trigger: an exit that sells fires at or above its TP / at or below its SL; an exit that
 * buys the reverse.
 */
export function triggerCrossed(o: PerpsOrder, mark: bigint): boolean {
  const t = o.trigger;
  if (!t) return false;
  const up = o.buy ? t.tpsl === 'sl' : t.tpsl === 'tp';
  return up ? mark >= t.trp : mark <= t.trp;
}
