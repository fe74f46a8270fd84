/**
 * Scoped standing grants (deny by default): "this site may
 * trade BTC-PERP on the perps venue, at most 2 000 USDC notional per order and 20 000 per 24 h, at
 * prices within 2 % of the mark, for 8 hours".
 *
 * `evaluateGrant` decides, for one decoded request, whether a live grant covers it, and if not which
 * limit it exceeds — in plain words for the approval window. Pure: the caller passes the clock, the
 * grant's past uses and the reference prices. Decimals are compared as bigints, never floats.
 *
 * Rules:
 * - A grant names exactly one venue and a non-empty list of its instruments (perps ids) or markets
 *   (order-book token ids). A request for the other venue, or another instrument / market, is not
 *   covered. There is no "any".
 * - Per-order notional cap, rolling-24 h notional cap and a price band around the reference price
 *   (perps: the mark price, the mid price when the venue shows no mark; order book: the midpoint) are
 *   required. With no reference price nothing is covered.
 * - Notional = size × the highest of: the limit price, the trigger price, the reference price, and —
 *   for market and trigger orders — the reference price moved against the trader by the grant's
 *   slippage allowance (a buy counts at ref × (1 + slippage), a sell never counts below ref). An
 *   order-book order also counts at least the collateral it commits (its signed USDC amount).
 * - The band applies to limit prices and trigger prices: |price − ref| ≤ band % × ref.
 * - Market orders (no limit price) are covered only with `allow.market`; trigger orders (`tr`, market
 *   or limit) are market orders for that rule and need `allow.triggers` as well.
 * - Cancels are covered only for orders placed under this grant (their ids are recorded in the
 *   grant's uses, `GrantUse.orders`); anything else that cancels — cancel-all, cancel by market, the
 *   venue's auto-cancel (dead-man) timer — is never grantable.
 *
 * Never grantable, whatever a grant says (`GrantRequest` kind `never`): anything that moves funds or
 * manages keys (withdraw, internal transfer, proxy issuance and deletion), isolated margin, cancel-all,
 * the auto-cancel timer, take-profit / stop-loss on a whole position (a `"position"` group: it closes a
 * size no grant bounds), `perps_signCommand` and `clob_signRequest` (see `lib/grants/requests.ts`).
 */
import { fromUnits, toUnits } from '../decimal';
import { SITE_SHARE_WORDS } from '../ratelimit/reserve';
import { perpsGrantOrderWords } from '../perps/words';
import { clobGrantOrderWords } from '../clob/words';

/** Most a grant may last: 24 h. */
export const MAX_GRANT_MS = 24 * 3_600_000;
/** The rolling window of the daily notional cap: 24 h in ms. */
export const DAY_MS = 24 * 3_600_000;
/** Price band the approval window proposes, in percent of the reference price. */
export const DEFAULT_PRICE_BAND_PCT = '2';
/** Slippage allowance the approval window proposes for market and trigger orders, in percent. */
export const DEFAULT_SLIPPAGE_PCT = '1';
/** Widest price band a grant may have (percent). */
export const MAX_PRICE_BAND_PCT = '20';
/** Widest slippage allowance a grant may have (percent). */
export const MAX_SLIPPAGE_PCT = '10';
/** Most order ids a grant remembers as its own (older ones fall off: cancelling those asks). */
export const MAX_OWNED_ORDERS = 1_000;

/** The two venues. */
export type GrantVenue = 'perps' | 'clob';

/**
 * Allowed kinds of request. `order`: place orders (limit orders; see `market` and `triggers`).
 * `cancel` (perps): cancel orders placed under this grant, by order id or client order id.
 * `leverage` (perps): set cross-margin leverage up to `maxLeverage`. `market` (perps): orders without
 * a limit price. `triggers` (perps): stop / take-profit orders (needs `market` too). Absent = false.
 */
export type GrantAllow = { order: boolean; cancel?: boolean; leverage?: boolean; market?: boolean; triggers?: boolean };

/** Limits every grant carries. Notional amounts are USDC decimal strings; percentages decimal strings. */
type CommonLimits = {
  allow: GrantAllow;
  /** Required: maximum notional per order (USDC). */
  maxNotional: string;
  /** Required: maximum notional over any rolling 24 h (USDC). */
  dailyNotional: string;
  /** Required: limit and trigger prices must lie within this percentage of the reference price. */
  priceBandPct: string;
  /** Maximum size per order: contracts (perps) or shares (order book), decimal string. */
  maxSize?: string;
  /** Every order must be post-only. */
  postOnly?: boolean;
  /** Maximum requests per rolling minute. */
  ratePerMinute?: number;
};

/** A perps grant: instrument ids (non-empty), slippage allowance, optional leverage and reduce-only limits. */
export type PerpsGrantLimits = CommonLimits & {
  venue: 'perps';
  instruments: number[];
  /** Slippage allowance (percent) at which market and trigger orders are counted. */
  slippagePct: string;
  /** Maximum leverage an updateLeverage may set (required when `allow.leverage`). */
  maxLeverage?: number;
  /** Every order must be reduce-only. */
  reduceOnly?: boolean;
};

/** An order-book grant: token ids (non-empty). Orders only (order-book cancels always ask). */
export type ClobGrantLimits = CommonLimits & { venue: 'clob'; markets: string[] };

/** What a grant allows (validated by `grantLimitsSchema` in `./schema`). */
export type GrantLimits = PerpsGrantLimits | ClobGrantLimits;

/**
 * A standing grant of one origin for one account on one venue. Times Unix ms. `names`: display names
 * of its instruments / markets (id → name), captured when it was created.
 */
export type Grant = GrantLimits & {
  id: string;
  origin: string;
  account: string;
  createdAt: number;
  expiresAt: number;
  names?: Record<string, string>;
};

/** An order the venue accepted under a grant: its order id and, when given, its client order id. */
export type OwnedOrder = { oid: number; coid?: string };

/**
 * One use of a grant: when (Unix ms), the notional it committed (USDC decimal string), its sequence
 * number within the grant, and the orders the venue answered for it (recorded after the answer).
 */
export type GrantUse = { at: number; notional: string; seq?: number; orders?: OwnedOrder[] };

/**
 * A grant's usage at the time of a request, when the caller keeps it running (`lib/grants/usage.ts`):
 * `used24h` the notional of the last 24 h in 18-decimal units, `lastMinute` the uses of the last 60 s.
 * Without it `evaluateGrant` counts them from `uses`.
 */
export type GrantUsage = { used24h: bigint; lastMinute: number };

/**
 * One order as the evaluator sees it: `price` the limit price (absent = market order); `trigger` the
 * trigger price of a stop / take-profit order (`market`: it executes as a market order); `quote` the
 * collateral the signed order commits (order book, USDC), counted as a floor of the notional.
 */
export type GrantOrder = {
  market: string;
  buy: boolean;
  size: string;
  price?: string;
  trigger?: { price: string; market: boolean };
  postOnly?: boolean;
  reduceOnly?: boolean;
  quote?: string;
};

/** A decoded request (see `lib/grants/requests.ts` for how page requests map to these). */
export type GrantRequest =
  | { kind: 'order'; venue: GrantVenue; orders: GrantOrder[] }
  | { kind: 'cancel'; venue: 'perps'; oids: number[]; coids: string[] }
  | { kind: 'leverage'; venue: 'perps'; market: string; leverage: number }
  | { kind: 'never'; what: string };

/**
 * A reference price and where it came from (the words name it). `conflict`: the venue's reads disagree
 * on it (`lib/grants/reference.ts`), in words — then no order is covered and the window says why.
 */
export type RefPrice = { price: string; source: 'mark' | 'mid' | 'midpoint'; conflict?: string };

/** The verdict: covered (with the notional to count), or the limit it exceeds in plain words. */
export type GrantVerdict = { ok: true; notional: string } | { ok: false; limit: string };

/** Fixed-point scale of the evaluator: 18 decimals; a value with more decimals is not covered. */
const S = 18;
const ONE = 10n ** BigInt(S);
const fx = (s: string): bigint | undefined => toUnits(s, S);
/** a × b at scale S, rounded up (notional never under-counts). */
const mulUp = (a: bigint, b: bigint) => (a * b + ONE - 1n) / ONE;
const fmt = (v: bigint) => fromUnits(v, S);

/** The venue in words. */
export const venueName = (v: GrantVenue) => (v === 'perps' ? 'the perps venue' : 'the order book');

/** The reference price in words, by venue (what `describeGrant` and the limits say). */
export const referenceName = (v: GrantVenue) =>
  v === 'perps' ? 'the mark price (the mid price when the venue shows no mark)' : 'the midpoint';

const refWord = (r: RefPrice) =>
  r.source === 'mark' ? 'the mark price' : r.source === 'mid' ? 'the mid price' : 'the midpoint';

/** The instruments (perps, as strings) or markets (order book) of a grant. */
export const grantScope = (g: GrantLimits): string[] => (g.venue === 'perps' ? g.instruments.map(String) : g.markets);

/** The display name of instrument / market `m` of grant `g`. */
export function marketName(g: Pick<Grant, 'venue' | 'names'>, m: string): string {
  const n = g.names?.[m];
  if (n) return n;
  return g.venue === 'perps' ? `instrument #${m}` : `market ${m.length > 12 ? `${m.slice(0, 6)}…${m.slice(-4)}` : m}`;
}

/** Orders placed under a grant, from its uses. */
export function ownedOrders(uses: readonly GrantUse[]): { oids: Set<number>; coids: Set<string> } {
  const oids = new Set<number>();
  const coids = new Set<string>();
  for (const u of uses)
    for (const o of u.orders ?? []) {
      oids.add(o.oid);
      if (o.coid) coids.add(o.coid);
    }
  return { oids, coids };
}

/**
 * Decides whether `grant` covers `req` at `now`. `uses` are the grant's past uses (any age; only the
 * last 24 h / 60 s count for the caps, every one for owned orders; with `usage` the caps read it
 * instead and `uses` need only hold the uses that placed orders); `ref(market)` gives the reference
 * price (undefined when unknown: then no order is covered). Never throws.
 */
export function evaluateGrant(
  grant: Grant,
  req: GrantRequest,
  ctx: { now: number; uses: readonly GrantUse[]; ref: (market: string) => RefPrice | undefined; usage?: GrantUsage },
): GrantVerdict {
  const { now, uses } = ctx;
  const no = (limit: string): GrantVerdict => ({ ok: false, limit });
  if (now >= grant.expiresAt) return no('the permission has expired');
  if (req.kind === 'never') return no(`${req.what} always needs your approval`);
  if (req.venue !== grant.venue) return no(`this permission covers only ${venueName(grant.venue)}`);
  if (
    grant.ratePerMinute !== undefined &&
    (ctx.usage?.lastMinute ?? uses.filter((u) => u.at > now - 60_000).length) >= grant.ratePerMinute
  ) {
    return no(`more than ${grant.ratePerMinute} requests in a minute`);
  }
  const scope = grantScope(grant);
  const name = (m: string) => marketName(grant, m);
  if (req.kind === 'cancel') {
    if (grant.venue !== 'perps' || !grant.allow.cancel) return no('cancels are not allowed');
    if (!req.oids.length && !req.coids.length) return no('a cancel must name the orders it cancels');
    const owned = ownedOrders(uses);
    for (const oid of req.oids)
      if (!owned.oids.has(oid)) return no(`order ${oid} was not placed under this permission`);
    for (const coid of req.coids)
      if (!owned.coids.has(coid)) return no(`order ${coid} was not placed under this permission`);
    return { ok: true, notional: '0' };
  }
  if (req.kind === 'leverage') {
    if (grant.venue !== 'perps' || !grant.allow.leverage || grant.maxLeverage === undefined)
      return no('leverage changes are not allowed');
    if (!scope.includes(req.market)) return no(`${name(req.market)} is not in this permission`);
    if (req.leverage > grant.maxLeverage)
      return no(`leverage ${req.leverage}× is above the ${grant.maxLeverage}× allowed`);
    return { ok: true, notional: '0' };
  }
  if (!grant.allow.order) return no('placing orders is not allowed');
  const band = fx(grant.priceBandPct);
  const maxNotional = fx(grant.maxNotional);
  const daily = fx(grant.dailyNotional);
  const slip = grant.venue === 'perps' ? fx(grant.slippagePct) : 0n;
  if (band === undefined || maxNotional === undefined || daily === undefined || slip === undefined)
    return no('the permission has unreadable limits');
  let total = 0n;
  for (const o of req.orders) {
    if (!scope.includes(o.market)) return no(`${name(o.market)} is not in this permission`);
    const isTrigger = o.trigger !== undefined;
    const isMarket = o.price === undefined || (o.trigger?.market ?? false);
    if (isTrigger && (grant.venue !== 'perps' || !grant.allow.triggers || !grant.allow.market))
      return no('trigger (stop / take-profit) orders are not allowed');
    if (isMarket && (grant.venue !== 'perps' || !grant.allow.market)) return no('market orders are not allowed');
    if (grant.postOnly && !o.postOnly) return no('orders must be post-only');
    if (grant.venue === 'perps' && grant.reduceOnly && !o.reduceOnly) return no('orders must be reduce-only');
    const size = fx(o.size);
    const price = o.price === undefined ? undefined : fx(o.price);
    const trp = o.trigger === undefined ? undefined : fx(o.trigger.price);
    const quote = o.quote === undefined ? undefined : fx(o.quote);
    if (
      size === undefined ||
      (price === undefined && o.price !== undefined) ||
      (trp === undefined && o.trigger !== undefined) ||
      (quote === undefined && o.quote !== undefined)
    ) {
      return no(`an amount has more than ${S} decimals`);
    }
    if (grant.maxSize !== undefined) {
      const max = fx(grant.maxSize);
      if (max === undefined || size > max) return no(`size ${o.size} is above the ${grant.maxSize} allowed per order`);
    }
    const r = ctx.ref(o.market);
    if (r?.conflict) return no(r.conflict);
    const ref = r === undefined ? undefined : fx(r.price);
    if (r === undefined || ref === undefined || ref <= 0n)
      return no(`the reference price of ${name(o.market)} is unknown, so the order cannot be checked`);
    // Band: |x − ref| / ref ≤ band / 100  ⇔  |x − ref| × 100 × ONE ≤ band × ref.
    for (const [x, what] of [
      [price, 'price'],
      [trp, 'trigger price'],
    ] as const) {
      if (x === undefined) continue;
      const diff = x > ref ? x - ref : ref - x;
      if (diff * 100n * ONE > band * ref)
        return no(`${what} ${fmt(x)} is more than ${grant.priceBandPct}% from ${refWord(r)} ${r.price}`);
    }
    let worst = ref;
    if (price !== undefined && price > worst) worst = price;
    if (trp !== undefined && trp > worst) worst = trp;
    if ((isMarket || isTrigger) && o.buy) {
      const moved = ref + (ref * slip + 100n * ONE - 1n) / (100n * ONE); // ref × (1 + slip %), rounded up
      if (moved > worst) worst = moved;
    }
    let notional = mulUp(size, worst);
    if (quote !== undefined && quote > notional) notional = quote;
    if (notional > maxNotional)
      return no(`notional ${fmt(notional)} USDC is above the ${grant.maxNotional} USDC allowed per order`);
    total += notional;
  }
  const used =
    ctx.usage?.used24h ?? uses.filter((u) => u.at > now - DAY_MS).reduce((a, u) => a + (fx(u.notional) ?? 0n), 0n);
  if (used + total > daily)
    return no(
      `the daily notional would reach ${fmt(used + total)} USDC, above the ${grant.dailyNotional} USDC allowed`,
    );
  return { ok: true, notional: fmt(total) };
}

/**
 * Plain words for a grant's limits (the approval window and the popup list show them). Every line
 * states a rule `evaluateGrant` enforces, and nothing it does not.
 */
export function describeGrant(g: GrantLimits & { names?: Record<string, string>; expiresAt?: number }): string[] {
  const names = grantScope(g).map((m) => marketName(g, m));
  const lines = [`${g.venue === 'perps' ? 'Perps venue' : 'Order book'} only: ${names.join(', ')}.`];
  const kinds: string[] = [];
  if (g.allow.order) kinds.push('place orders');
  if (g.venue === 'perps' && g.allow.cancel) kinds.push('cancel the orders it placed under this permission');
  if (g.venue === 'perps' && g.allow.leverage && g.maxLeverage !== undefined)
    kinds.push(`set cross-margin leverage up to ${g.maxLeverage}×`);
  lines.push(
    `May ${kinds.length ? kinds.join(', ') : 'do nothing'}. Never: move funds, manage keys, ` +
      `cancel all orders or orders it did not place, change the auto-cancel timer, isolated margin.`,
  );
  lines.push(`Reference price: ${referenceName(g.venue)}.`);
  lines.push(
    `${g.venue === 'perps' && g.allow.triggers && g.allow.market ? 'Limit and trigger prices' : 'Prices'} ` +
      `within ${g.priceBandPct}% of the reference price.`,
  );
  lines.push(
    `At most ${g.maxNotional} USDC notional per order and ${g.dailyNotional} USDC ` +
      `per 24 h; an order counts at the higher of its price and the reference price.`,
  );
  // The orders it covers, in each venue's order words.
  lines.push(...(g.venue === 'perps' ? perpsGrantOrderWords(g) : clobGrantOrderWords(g)));
  if (g.ratePerMinute !== undefined) lines.push(`At most ${g.ratePerMinute} requests a minute.`);
  if (g.venue === 'perps') lines.push(SITE_SHARE_WORDS);
  if (g.expiresAt !== undefined)
    lines.push(`Until ${new Date(g.expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`);
  return lines;
}
