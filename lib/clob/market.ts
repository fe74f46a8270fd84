/**
 * Protected market-style order-book orders: a FOK / FAK order without a typed price is sent
 * at the best level ± the slippage cap (BUY: the best ask raised by the cap, rounded down to the tick,
 * at most 1 − tick; SELL: the best bid lowered by the cap, rounded up, at least one tick), and the
 * visible book gives the estimated average price and slippage before the click. Exact decimals
 * (8-decimal fixed point), never a binary float. Prices are USDC per share; a BUY market order's size
 * is the USDC to spend, a SELL's the shares (PROTOCOL.md §2, the official client's market orders).
 */
import { fromUnits, truncUnits } from '../decimal';

const S = 8;
const fx = (s: string) => truncUnits(s, S);
const ONE = 10n ** BigInt(S);

/**
 * The limit price of a protected market order from the best level of `levels` (the side it takes, best first);
 * `undefined` for an empty side.
 */
export function protectedClobPrice(
  levels: readonly (readonly [string, string])[],
  side: 'BUY' | 'SELL',
  capBps: number,
  tickSize: string,
): string | undefined {
  const best = levels[0]?.[0];
  if (!best) return undefined;
  const t = fx(tickSize);
  const cap = BigInt(Math.max(0, Math.floor(capBps)));
  const moved = (fx(best) * (10_000n + (side === 'BUY' ? cap : -cap))) / 10_000n;
  if (t === 0n) return fromUnits(moved, S);
  const snapped = side === 'BUY' ? moved - (moved % t) : moved + ((t - (moved % t)) % t);
  const lo = t;
  const hi = ONE - t;
  return fromUnits(snapped < lo ? lo : snapped > hi ? hi : snapped, S);
}

/** What a market-style order fills on the visible book within its limit. */
export type ClobMarketEstimate = {
  /** Average price (USDC per share, 4 decimals), `null` when nothing fills. */
  avgPrice: string | null;
  /** Against the best level, basis points (2 decimals), `null` without a fill. */
  slippageBps: string | null;
  /** Shares bought or sold, and the USDC paid or received. */
  shares: string;
  usdc: string;
  /** The whole size fills within the limit (a FOK order is otherwise killed). */
  complete: boolean;
};

/**
 * Walks `levels` (the side the order takes, best first) for a BUY of `size` USDC or a SELL of `size`
 * shares, within `limit` (USDC per share). A market BUY is sized by collateral (PROTOCOL.md §3.2): the
 * venue spends the whole `size` at the makers' prices, so a better price buys more shares than the order
 * signs for (`takerAmount` is only its minimum).
 */
export function estimateClobMarket(
  levels: readonly (readonly [string, string])[],
  side: 'BUY' | 'SELL',
  size: string,
  limit: string,
): ClobMarketEstimate {
  const lim = fx(limit);
  let left = fx(size);
  let shares = 0n;
  let usdc = 0n;
  for (const [ps, qs] of levels) {
    const p = fx(ps);
    if (left <= 0n || p === 0n || (side === 'BUY' ? p > lim : p < lim)) break;
    const q = fx(qs);
    if (side === 'BUY') {
      const cost = (q * p) / ONE;
      const spend = cost < left ? cost : left;
      shares += (spend * ONE) / p;
      usdc += spend;
      left -= spend;
    } else {
      const take = q < left ? q : left;
      shares += take;
      usdc += (take * p) / ONE;
      left -= take;
    }
  }
  const best = fx(levels[0]?.[0] ?? '0');
  const avg = shares === 0n ? undefined : (usdc * ONE) / shares;
  const slip =
    avg === undefined || best === 0n ? null : ((side === 'BUY' ? avg - best : best - avg) * 1_000_000n) / best;
  const cut = 10n ** 4n;
  return {
    avgPrice: avg === undefined ? null : fromUnits(((avg + cut / 2n) / cut) * cut, S),
    slippageBps: slip === null ? null : fromUnits(slip, 2),
    shares: fromUnits(shares, S),
    usdc: fromUnits(usdc, S),
    complete: left <= 0n && shares > 0n,
  };
}
