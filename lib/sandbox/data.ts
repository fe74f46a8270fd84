/**
 * Sandbox data service v2 (`/data`; seed `order-book-exchange-api.md` "Data service routes"): a user's
 * positions, portfolio value and activity, in the `{ data, pagination }` envelope, snake_case, from the
 * order book's fills and token balances (exact base-unit maths). Public, keyed by `user=`.
 */
import { Hono, type Context } from 'hono';
import { isAddress, keccak256, toHex } from 'viem';
import { fromUnits } from '../decimal';
import { CATALOGUE_CREATED } from './catalogue';
import type { SandboxContext } from './context';
import { cursorOf, fromCursor, iso } from './http';
import { PRICE_SCALE } from './clob/venue';

const ISO = iso;

/** The data service app of `ctx` (paths relative to its `/data` mount). */
export function dataRoutes(ctx: SandboxContext): Hono {
  const venue = ctx.clob;
  const created = CATALOGUE_CREATED;
  const data = new Hono();
  const userOf = (c: Context) => {
    const u = c.req.query('user') ?? '';
    return isAddress(u, { strict: false }) ? u.toLowerCase() : undefined;
  };

  /** Exact decimal of base units (6 decimals). */
  const dec = (units: bigint) => fromUnits(units, 6);
  const mid6 = (tokenId: string): bigint => {
    const b = venue.book(tokenId);
    return b.bids[0] && b.asks[0] ? (b.bids[0].price + b.asks[0].price) / 2n : PRICE_SCALE / 2n;
  };
  /** The data service's page envelope: `limit`, `offset`, `has_more` and `next_cursor` agree. */
  const pageOf = <T>(rows: T[], offset: number, limit: number) => ({
    data: rows.slice(offset, offset + limit),
    pagination: {
      limit,
      offset,
      has_more: offset + limit < rows.length,
      next_cursor: offset + limit < rows.length ? cursorOf(offset + limit) : null,
    },
  });
  const limitOf = (c: Context) => {
    const t = c.req.query('limit') ?? '100';
    return /^\d{1,3}$/.test(t) && Number(t) >= 1 && Number(t) <= 500 ? Number(t) : undefined;
  };

  /**
   * `GET /v2/positions?user=&status=OPEN|CLOSED&condition_id=`: one row per held outcome token, with the
   * average entry price and cost from the user's fills (exact base-unit maths), mark = book midpoint.
   */
  data.get('/v2/positions', (c) => {
    const user = userOf(c);
    const limit = limitOf(c);
    const offset = fromCursor(c.req.query('cursor'));
    if (!limit || offset === undefined) return c.json({ error: 'invalid limit or cursor' }, 400);
    if (!user) return c.json(pageOf([], 0, limit));
    const status = (c.req.query('status') ?? 'OPEN').toUpperCase();
    const condition = c.req.query('condition') ?? c.req.query('condition_id') ?? c.req.query('conditionId');
    const conds = condition
      ? condition
          .split(',')
          .slice(0, 20)
          .map((x) => x.toLowerCase())
      : undefined;
    const rows = [...(venue.tokens.get(user) ?? new Map<string, bigint>())]
      .filter(([, size]) => (status === 'CLOSED' ? size === 0n : size > 0n))
      .flatMap(([tokenId, size]) => {
        const m = venue.tokenIndex.get(tokenId);
        if (!m) return [];
        const i = m.tokenIds.indexOf(tokenId);
        const fills = venue.trades.filter((t) => t.address === user && t.tokenId === tokenId);
        const bought = fills.filter((t) => t.side === 'BUY');
        const boughtSize = bought.reduce((a, t) => a + t.size, 0n);
        const boughtCost = bought.reduce((a, t) => a + (t.size * t.price) / PRICE_SCALE, 0n);
        const avg = boughtSize === 0n ? 0n : (boughtCost * PRICE_SCALE) / boughtSize;
        const cost = (size * avg) / PRICE_SCALE;
        const price = mid6(tokenId);
        const value = (size * price) / PRICE_SCALE;
        const upnl = value - cost;
        const lastFill = fills.at(-1);
        const last = lastFill ? Math.floor(lastFill.at / 1000) : 0;
        return [
          {
            proxy_wallet: user,
            token_id: tokenId,
            condition_id: m.conditionId,
            current_size: dec(size),
            avg_price: dec(avg),
            entry_cost_usdc: dec(cost),
            entry_fees_usdc: '0',
            total_cost_usdc: dec(cost),
            current_price: dec(price),
            current_value: dec(value),
            total_size: dec(size),
            realized_pnl: '0',
            unrealized_pnl: dec(upnl),
            total_pnl: dec(upnl),
            percent_pnl: cost === 0n ? '0' : dec((upnl * 100n * 1_000_000n) / cost),
            percent_realized_pnl: '0',
            status: size > 0n ? 'OPEN' : 'CLOSED',
            // Resolved by `/admin/resolve`: the holder may redeem (a deposit-wallet batch, PROTOCOL.md §4.6).
            redeemable: ctx.relayerChain.resolutions.has(m.conditionId.toLowerCase()),
            mergeable: false,
            negative_risk: m.negRisk,
            archived: false,
            title: m.question,
            slug: m.slug,
            icon: '',
            event_id: String(m.eventId),
            event_slug: m.slug,
            outcome: m.outcomes[i],
            outcome_index: i,
            opposite_outcome: m.outcomes[1 - i],
            opposite_token_id: m.tokenIds[1 - i],
            end_date: ISO(created + 365 * 86_400_000).slice(0, 10),
            last_event_at: last,
            name: '',
            profile_image: '',
            verified: false,
          },
        ];
      })
      .filter((r) => !conds || conds.includes(r.condition_id.toLowerCase()));
    return c.json(pageOf(rows, offset, limit));
  });

  /** `GET /v2/value?user=`: `{ data: { proxy_wallet, value } }`, value = Σ size × midpoint (exact). */
  data.get('/v2/value', (c) => {
    const user = userOf(c);
    if (!user) return c.json({ data: null });
    let value = 0n;
    for (const [tokenId, size] of venue.tokens.get(user) ?? [])
      if (size > 0n) value += (size * mid6(tokenId)) / PRICE_SCALE;
    return c.json({ data: { proxy_wallet: user, value: dec(value) } });
  });

  /** `GET /v2/activity?user=&limit=&cursor=`: the user's fills as TRADE rows, newest first. */
  data.get('/v2/activity', (c) => {
    const user = userOf(c);
    const limit = limitOf(c);
    const offset = fromCursor(c.req.query('cursor'));
    if (!limit) return c.json({ error: 'limit must be 1-500' }, 400);
    if (offset === undefined) return c.json({ error: 'invalid cursor' }, 400);
    const rows = venue.trades
      .filter((t) => !user || t.address === user)
      .slice()
      .reverse()
      .map((t) => {
        const m = venue.tokenIndex.get(t.tokenId);
        const i = m ? m.tokenIds.indexOf(t.tokenId) : 999;
        return {
          proxy_wallet: t.address,
          timestamp: Math.floor(t.at / 1000),
          condition_id: m?.conditionId ?? '',
          type: 'TRADE',
          size: dec(t.size),
          usdc_size: dec((t.size * t.price) / PRICE_SCALE),
          transaction_hash: keccak256(toHex(`sandbox-trade:${t.matchId}`)),
          price: dec(t.price),
          token_id: t.tokenId,
          side: t.side,
          outcome_index: i,
          title: m?.question ?? '',
          slug: m?.slug ?? '',
          icon: '',
          event_slug: m?.slug ?? '',
          outcome: m ? m.outcomes[i] : '',
          name: '',
          pseudonym: '',
          bio: '',
          profile_image: '',
          profile_image_optimized: '',
        };
      });
    return c.json(pageOf(rows, offset, limit));
  });
  return data;
}
