/**
 * The perps ticket's plain values: size presets, client order ids, status words, tick steps, the
 * notional and slippage-cap checks, TP / SL sides, the 24 h change and the spread. Pure functions over
 * decimal strings; the ticket's state is `./ticket.ts`.
 */
import { fromUnits, toUnits } from '../../../lib/decimal';
import { type OrderView } from './perps';

/** The size presets, fractions of what the free margin allows (keys 1-4). */
export const PRESETS = ['0.25', '0.5', '0.75', '1'] as const;

/** A fresh client order id: 32 lowercase hex characters (16 random bytes). */
export function newCoid(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Plain words for a venue order status (`filled_quantity` a decimal string). */
export function describeStatus(o: Pick<OrderView, 'status' | 'filled_quantity'>): string {
  const filled = Number(o.filled_quantity) > 0;
  switch (o.status) {
    case 'open':
      return 'Resting on the book';
    case 'partial':
      return `Resting (${o.filled_quantity} filled)`;
    case 'filled':
      return `Filled ${o.filled_quantity}`;
    case 'accepted':
    case 'untriggered':
      return 'Accepted, waiting for its trigger';
    case 'armed':
      return 'Armed: fires when the mark crosses its trigger';
    case 'triggered':
      return `Triggered${filled ? `, filled ${o.filled_quantity}` : ''}`;
    case 'ioc_expired':
    case 'cancelled':
    case 'auto_cancelled':
      return filled
        ? `Partly filled (${o.filled_quantity}), rest cancelled`
        : `Cancelled${o.status === 'auto_cancelled' ? ' by the dead-man switch' : ''}`;
    case 'ioc_no_fill':
      return 'Cancelled: no liquidity at that price';
    default:
      return `Rejected: ${o.status.replace(/_/g, ' ')}`;
  }
}

/** `price` moved by `steps` ticks (exact decimals, snapping to the tick grid); never below one tick. */
export function stepPrice(price: string, tick: string, steps: number): string {
  const scale = Math.max((tick.split('.')[1] ?? '').length, (price.split('.')[1] ?? '').length);
  const t = toUnits(tick, scale) ?? 0n;
  const p = toUnits(price || '0', scale) ?? 0n;
  const next = p - (p % t) + BigInt(steps) * t + (steps < 0 && p % t !== 0n ? t : 0n);
  return fromUnits(next < t ? t : next, scale);
}

/** `|size| × price` exceeds `limitUsdc` (decimal strings, 8 decimals of precision; a negative size is short). */
export function exceedsNotional(size: string, price: string, limitUsdc: number): boolean {
  const notional = ((toUnits(size.replace('-', ''), 8) ?? 0n) * (toUnits(price, 8) ?? 0n)) / 10n ** 8n;
  return notional > BigInt(limitUsdc) * 10n ** 8n;
}

/** Mark price against the 24 h open as a percentage, or undefined without a positive open. */
export function changePct(mark: string, open: string): number | undefined {
  return Number(open) > 0 ? ((Number(mark) - Number(open)) / Number(open)) * 100 : undefined;
}

/** Best ask minus best bid (decimal strings, 8 decimals), or undefined when a side is empty. */
export function spreadOf(
  book: { bids: readonly [string, string][]; asks: readonly [string, string][] } | undefined,
): string | undefined {
  const ask = book?.asks[0]?.[0];
  const bid = book?.bids[0]?.[0];
  return ask && bid ? fromUnits((toUnits(ask, 8) ?? 0n) - (toUnits(bid, 8) ?? 0n), 8) : undefined;
}

/** The slippage cap in force (per order when typed and valid, else Settings), basis points 0-1000. */
export function capBps(typed: string, fallback: number): number {
  const n = /^\d{1,4}$/.test(typed) ? Number(typed) : fallback;
  return Math.min(1_000, Math.max(0, n));
}

/**
 * Why TP / SL prices do not fit the order's side (a long's take-profit above the price, its stop-loss below), or
 * undefined.
 */
export function tpslProblem(buy: boolean, ref: string, tp: string, sl: string): string | undefined {
  const r = toUnits(ref, 8);
  if (r === undefined) return undefined;
  const tpU = tp ? toUnits(tp, 8) : undefined;
  const slU = sl ? toUnits(sl, 8) : undefined;
  if (tp && (tpU === undefined || (buy ? tpU <= r : tpU >= r)))
    return `Take-profit must be ${buy ? 'above' : 'below'} ${ref} for a ${buy ? 'long' : 'short'}.`;
  if (sl && (slU === undefined || (buy ? slU >= r : slU <= r)))
    return `Stop-loss must be ${buy ? 'below' : 'above'} ${ref} for a ${buy ? 'long' : 'short'}.`;
  return undefined;
}
