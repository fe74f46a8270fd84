/**
 * Scoped standing grants (issue #11 §1): "this site may trade ETH-PERP and BTC-PERP up to 2 000 USDC
 * notional per order and 20 000 per day, may cancel anything, may never move funds, for 8 hours".
 *
 * `evaluateGrant` decides, for one decoded request, whether a live grant covers it, and if not which
 * limit it exceeds — in plain words for the approval window. Pure: the caller passes the clock, the
 * rolling usage and the market context (mid prices). Decimals are compared as bigints, never floats.
 *
 * Never grantable, whatever a grant says: anything that moves funds or manages keys (withdraw,
 * internal transfer, proxy issuance and deletion, isolated margin changes), and L2 headers for
 * requests the site sends itself. Those always open a window.
 */
import { fromUnits, mulUnits, truncUnits } from '../decimal';

/** Most a grant may last: 24 h. */
export const MAX_GRANT_MS = 24 * 3_600_000;

/** What a grant allows. Absent limits are not checked; instruments / markets absent = any. */
export type GrantLimits = {
  /** Allowed kinds of command. Fund-moving commands can never be granted. */
  allow: { order: boolean; cancel: boolean; leverage: boolean };
  /** Perps instrument ids the site may trade. */
  instruments?: number[];
  /** Order-book token ids the site may trade. */
  markets?: string[];
  /** Maximum size per order: contracts (perps) or shares (order book), decimal string. */
  maxSize?: string;
  /** Maximum notional per order, USDC decimal string. */
  maxNotional?: string;
  /** Maximum notional over any rolling 24 h, USDC decimal string. */
  dailyNotional?: string;
  /** Maximum leverage an updateLeverage may set. */
  maxLeverage?: number;
  /** Limit prices must lie within this percentage of the mid (decimal string, e.g. "2"). */
  priceBandPct?: string;
  /** Every order must be post-only. */
  postOnly?: boolean;
  /** Every order must be reduce-only (perps). */
  reduceOnly?: boolean;
  /** Maximum requests per rolling minute. */
  ratePerMinute?: number;
};

/** A standing grant of one origin for one account. Times Unix ms. */
export type Grant = GrantLimits & { id: string; origin: string; account: string; createdAt: number; expiresAt: number };

/** One use of a grant: when, and the notional it committed (USDC decimal string). */
export type GrantUse = { at: number; notional: string };

/** One order as the evaluator sees it. `price` absent = market; `refPrice` = the mid used for notional and band. */
export type GrantOrder = { market: string; buy: boolean; size: string; price?: string; postOnly?: boolean; reduceOnly?: boolean };

/** A decoded request. */
export type GrantRequest =
  | { kind: 'order'; venue: 'perps' | 'clob'; orders: GrantOrder[] }
  | { kind: 'cancel' }
  | { kind: 'leverage'; market: string; leverage: number }
  | { kind: 'never'; what: string };

/** The verdict: covered (with the notional to count), or the limit it exceeds in plain words. */
export type GrantVerdict = { ok: true; notional: string } | { ok: false; limit: string };

const S = 10;
const fx = (s: string): bigint => truncUnits(s, S);
const mul = (a: bigint, b: bigint) => mulUnits(a, b, S);
const fmt = (v: bigint) => fromUnits(v, S);

/**
 * Decides whether `grant` covers `req` at `now`. `uses` are the grant's past uses (any age; only the
 * last 24 h / 60 s count); `mid(market)` gives the mid price used for market orders' notional and for
 * the price band (undefined when unknown: then a band or a market order's notional cannot be checked,
 * and the request is not covered).
 */
export function evaluateGrant(grant: Grant, req: GrantRequest, ctx: { now: number; uses: readonly GrantUse[]; mid: (market: string) => string | undefined }): GrantVerdict {
  const { now, uses } = ctx;
  if (now >= grant.expiresAt) return { ok: false, limit: 'the permission has expired' };
  if (req.kind === 'never') return { ok: false, limit: `${req.what} always needs your approval` };
  if (grant.ratePerMinute !== undefined && uses.filter((u) => u.at > now - 60_000).length >= grant.ratePerMinute) {
    return { ok: false, limit: `more than ${grant.ratePerMinute} requests in a minute` };
  }
  if (req.kind === 'cancel') return grant.allow.cancel ? { ok: true, notional: '0' } : { ok: false, limit: 'cancels are not allowed' };
  if (req.kind === 'leverage') {
    if (!grant.allow.leverage) return { ok: false, limit: 'leverage changes are not allowed' };
    if (grant.instruments && !grant.instruments.includes(Number(req.market))) return { ok: false, limit: `instrument ${req.market} is not allowed` };
    if (grant.maxLeverage !== undefined && req.leverage > grant.maxLeverage) return { ok: false, limit: `leverage ${req.leverage}× is above the ${grant.maxLeverage}× allowed` };
    return { ok: true, notional: '0' };
  }
  if (!grant.allow.order) return { ok: false, limit: 'placing orders is not allowed' };
  let total = 0n;
  for (const o of req.orders) {
    const allowed = req.venue === 'perps' ? grant.instruments?.map(String) : grant.markets;
    if (allowed && !allowed.includes(o.market)) return { ok: false, limit: `${req.venue === 'perps' ? 'instrument' : 'market'} ${o.market.length > 12 ? `${o.market.slice(0, 6)}…` : o.market} is not allowed` };
    if (grant.postOnly && !o.postOnly) return { ok: false, limit: 'orders must be post-only' };
    if (grant.reduceOnly && !o.reduceOnly) return { ok: false, limit: 'orders must be reduce-only' };
    if (grant.maxSize !== undefined && fx(o.size) > fx(grant.maxSize)) return { ok: false, limit: `size ${o.size} is above the ${grant.maxSize} allowed per order` };
    const mid = ctx.mid(o.market);
    const ref = o.price ?? mid;
    if (ref === undefined) return { ok: false, limit: 'the market price is unknown, so the notional cannot be checked' };
    if (grant.priceBandPct !== undefined) {
      if (o.price === undefined) return { ok: false, limit: `market orders are outside the ${grant.priceBandPct}% price band` };
      if (mid === undefined) return { ok: false, limit: 'the mid price is unknown, so the price band cannot be checked' };
      const m = fx(mid);
      const diff = fx(o.price) > m ? fx(o.price) - m : m - fx(o.price);
      // diff / mid ≤ band / 100  ⇔  diff × 100 ≤ band × mid
      if (diff * 100n > mul(fx(grant.priceBandPct), m)) return { ok: false, limit: `price ${o.price} is more than ${grant.priceBandPct}% from the mid ${mid}` };
    }
    const notional = mul(fx(o.size), fx(ref));
    if (grant.maxNotional !== undefined && notional > fx(grant.maxNotional)) return { ok: false, limit: `notional ${fmt(notional)} USDC is above the ${grant.maxNotional} USDC allowed per order` };
    total += notional;
  }
  if (grant.dailyNotional !== undefined) {
    const used = uses.filter((u) => u.at > now - 24 * 3_600_000).reduce((a, u) => a + fx(u.notional), 0n);
    if (used + total > fx(grant.dailyNotional)) return { ok: false, limit: `the daily notional would reach ${fmt(used + total)} USDC, above the ${grant.dailyNotional} USDC allowed` };
  }
  return { ok: true, notional: fmt(total) };
}

/** Plain words for a grant's limits (the approval window and the popup list show them). */
export function describeGrant(g: GrantLimits & { expiresAt?: number }, names: { instrument: (iid: number) => string } = { instrument: (i) => `#${i}` }): string[] {
  const kinds = [g.allow.order ? 'place orders' : '', g.allow.cancel ? 'cancel orders' : '', g.allow.leverage ? 'change leverage' : ''].filter(Boolean);
  const lines = [`May ${kinds.length ? kinds.join(', ') : 'do nothing'}; never move funds or manage keys.`];
  if (g.instruments) lines.push(`Only ${g.instruments.map(names.instrument).join(', ')}.`);
  if (g.markets) lines.push(`Only ${g.markets.length} order-book market(s).`);
  if (g.maxSize) lines.push(`At most ${g.maxSize} per order.`);
  if (g.maxNotional) lines.push(`At most ${g.maxNotional} USDC notional per order.`);
  if (g.dailyNotional) lines.push(`At most ${g.dailyNotional} USDC notional per 24 h.`);
  if (g.maxLeverage !== undefined) lines.push(`Leverage up to ${g.maxLeverage}×.`);
  if (g.priceBandPct) lines.push(`Limit prices within ${g.priceBandPct}% of the mid; no market orders.`);
  if (g.postOnly) lines.push('Post-only orders only.');
  if (g.reduceOnly) lines.push('Reduce-only orders only.');
  if (g.ratePerMinute !== undefined) lines.push(`At most ${g.ratePerMinute} requests a minute.`);
  if (g.expiresAt !== undefined) lines.push(`Until ${new Date(g.expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`);
  return lines;
}
