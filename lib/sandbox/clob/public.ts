/**
 * Sandbox order-book public reads — no authentication (the official client's public methods,
 * `@polymarket/clob-client-v2`; PROTOCOL.md §3.1): `/time`, `/version`, `/ok`, `/book` + `POST /books`,
 * `/price` + `POST /prices`, `/midpoint` + `POST /midpoints`, `/spread` + `POST /spreads`,
 * `/last-trade-price` + `POST /last-trades-prices`, `/prices-history`, `/tick-size`, `/neg-risk`,
 * `/fee-rate`, `/clob-markets/{condition_id}`, `/markets-by-token/{token_id}`, `/markets/{condition_id}`.
 * Prices are answered as decimal strings of the 6-decimal book prices.
 */
import type { Context, Hono } from 'hono';
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { fromUnits } from '../../decimal';
import { jsonBody } from '../http';
import { fail, type ClobExchange } from './exchange';
import { PRICE_SCALE, type ClobMarket, type ClobOrderRec } from './venue';

/** A batch read's body: at most 500 `{ token_id, side? }` items. */
const batchSchema = v.pipe(
  v.array(v.looseObject({ token_id: v.string(), side: v.optional(v.unknown()) })),
  v.maxLength(500),
);

const NO_BOOK = 'No orderbook exists for the requested token id';

/** Aggregated `{ price, size }` levels of one book side, in the side's order. */
function levels(side: ClobOrderRec[]): { price: string; size: string }[] {
  const out: { price: string; units: bigint; size: string }[] = [];
  for (const o of side) {
    const p = fromUnits(o.price, 6);
    const last = out[out.length - 1];
    const size = o.originalSize - o.matched;
    if (last && last.price === p) {
      last.units += size;
      last.size = fromUnits(last.units, 6);
    } else out.push({ price: p, units: size, size: fromUnits(size, 6) });
  }
  return out.map(({ price, size }) => ({ price, size }));
}

/** Mounts the public reads of `ex` on `app`. */
export function publicRoutes(app: Hono, ex: ClobExchange): void {
  const { venue, ctx } = ex;
  const price = (units: bigint) => fromUnits(units, 6);

  /** The market of the `token_id` query: 400 when malformed, 404 when no market lists it. */
  const marketOf = (c: Context): { tokenId: string; market: ClobMarket } | Response => {
    const tokenId = c.req.query('token_id') ?? '';
    if (!/^\d{1,78}$/.test(tokenId)) return fail(c, 400, 'Invalid token id');
    const market = venue.tokenIndex.get(tokenId);
    if (!market) return fail(c, 404, NO_BOOK);
    return { tokenId, market };
  };

  /**
   * A book summary as the venue answers it, `hash` the SHA-1 of its JSON with `hash: ""` (the official client's
   * `generateOrderBookSummaryHash`).
   */
  const bookView = (tokenId: string, m: ClobMarket) => {
    const b = venue.book(tokenId);
    const last = venue.lastTrade.get(tokenId);
    // Like the venue: bids ascending and asks descending (best price last).
    const summary = {
      market: m.conditionId,
      asset_id: tokenId,
      timestamp: String(ctx.now()),
      hash: '',
      bids: levels(b.bids).reverse(),
      asks: levels(b.asks).reverse(),
      min_order_size: m.minSize,
      tick_size: m.tickSize,
      neg_risk: m.negRisk,
      last_trade_price: last ? price(last.price) : '0.5',
    };
    summary.hash = createHash('sha1').update(JSON.stringify(summary)).digest('hex');
    return summary;
  };
  const mid = (tokenId: string): bigint | undefined => {
    const { bids, asks } = venue.book(tokenId);
    return bids[0] && asks[0] ? (bids[0].price + asks[0].price) / 2n : undefined;
  };
  const spread = (tokenId: string): bigint | undefined => {
    const { bids, asks } = venue.book(tokenId);
    return bids[0] && asks[0] ? asks[0].price - bids[0].price : undefined;
  };
  /**
   * Best price on the book side a `side` order would rest on (BUY: best bid; SELL: best ask), as the venue's `/price`.
   */
  const bestPrice = (tokenId: string, side: 'BUY' | 'SELL'): bigint | undefined => {
    const { bids, asks } = venue.book(tokenId);
    return (side === 'BUY' ? bids[0] : asks[0])?.price;
  };
  /** `{ token_id: price }` of the items whose `fn` has a value. */
  const priceMap = (items: { token_id: string }[], fn: (tokenId: string) => bigint | undefined) =>
    Object.fromEntries(
      items.flatMap((x) => {
        const p = fn(x.token_id);
        return p === undefined ? [] : [[x.token_id, price(p)]];
      }),
    );

  /** Batch reads take `[{ token_id, side? }]` (at most 500). Unknown tokens are left out of the answer. */
  const batch = async (c: Context) => {
    const b = v.safeParse(batchSchema, await jsonBody(c));
    if (!b.success) return fail(c, 400, 'Invalid payload');
    return b.output.flatMap((x) => {
      const market = venue.tokenIndex.get(x.token_id);
      return market ? [{ ...x, market }] : [];
    });
  };

  app.get('/book', (c) => {
    const t = marketOf(c);
    if (t instanceof Response) return t;
    venue.expire();
    return c.json(bookView(t.tokenId, t.market));
  });

  app.get('/tick-size', (c) => {
    const t = marketOf(c);
    return t instanceof Response ? t : c.json({ minimum_tick_size: Number(t.market.tickSize) });
  });

  app.get('/neg-risk', (c) => {
    const t = marketOf(c);
    return t instanceof Response ? t : c.json({ neg_risk: t.market.negRisk });
  });

  app.get('/price', (c) => {
    const t = marketOf(c);
    if (t instanceof Response) return t;
    const side = c.req.query('side');
    if (side !== 'BUY' && side !== 'SELL') return fail(c, 400, 'Invalid side');
    const best = bestPrice(t.tokenId, side);
    return best === undefined ? fail(c, 404, NO_BOOK) : c.json({ price: price(best) });
  });

  app.get('/midpoint', (c) => {
    const t = marketOf(c);
    if (t instanceof Response) return t;
    const m = mid(t.tokenId);
    return m === undefined ? fail(c, 404, NO_BOOK) : c.json({ mid: price(m) });
  });

  app.get('/spread', (c) => {
    const t = marketOf(c);
    if (t instanceof Response) return t;
    const s = spread(t.tokenId);
    return s === undefined ? fail(c, 404, NO_BOOK) : c.json({ spread: price(s) });
  });

  app.post('/books', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    venue.expire();
    return c.json(items.map((x) => bookView(x.token_id, x.market)));
  });
  app.post('/midpoints', async (c) => {
    const items = await batch(c);
    return items instanceof Response ? items : c.json(priceMap(items, mid));
  });
  app.post('/spreads', async (c) => {
    const items = await batch(c);
    return items instanceof Response ? items : c.json(priceMap(items, spread));
  });
  app.post('/prices', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    const out: Record<string, Record<string, string>> = {};
    for (const x of items) {
      const sides: ('BUY' | 'SELL')[] = x.side === 'BUY' || x.side === 'SELL' ? [x.side] : ['BUY', 'SELL'];
      for (const side of sides) {
        const p = bestPrice(x.token_id, side);
        if (p !== undefined) (out[x.token_id] ??= {})[side] = price(p);
      }
    }
    return c.json(out);
  });

  app.get('/last-trade-price', (c) => {
    const t = marketOf(c);
    if (t instanceof Response) return t;
    const last = venue.lastTrade.get(t.tokenId);
    return c.json(last ? { price: price(last.price), side: last.side } : { price: '0', side: '' });
  });
  app.post('/last-trades-prices', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    return c.json(
      items.flatMap((x) => {
        const last = venue.lastTrade.get(x.token_id);
        return last ? [{ token_id: x.token_id, price: price(last.price), side: last.side }] : [];
      }),
    );
  });

  /**
   * `GET /prices-history?market=<token>&interval=1h|6h|1d|1w|1m|max` or `startTs`/`endTs` (Unix s), with
   * `fidelity` (minutes, default 60): `{ history: [{ t, p }] }`. The sandbox has no recorded history:
   * every point is the current midpoint (or the last trade when the book is one-sided).
   */
  app.get('/prices-history', (c) => {
    const tokenId = c.req.query('market') ?? '';
    if (!venue.tokenIndex.has(tokenId)) return fail(c, 400, 'Invalid market');
    const spans: Record<string, number> = {
      '1h': 3_600,
      '6h': 21_600,
      '1d': 86_400,
      '1w': 604_800,
      '1m': 2_592_000,
      max: 2_592_000,
    };
    const end = c.req.query('endTs') ? Number(c.req.query('endTs')) : ex.nowS();
    const span = spans[c.req.query('interval') ?? ''];
    const start = c.req.query('startTs') ? Number(c.req.query('startTs')) : span ? end - span : undefined;
    if (start === undefined || !Number.isFinite(start) || !Number.isFinite(end) || start > end)
      return fail(c, 400, 'Invalid interval or startTs/endTs');
    const step = Math.max(1, Number(c.req.query('fidelity') ?? '60')) * 60;
    const p = Number(price(mid(tokenId) ?? venue.lastTrade.get(tokenId)?.price ?? PRICE_SCALE / 2n));
    const history: { t: number; p: number }[] = [];
    for (let t = start; t <= end && history.length < 5_000; t += step) history.push({ t, p });
    return c.json({ history });
  });

  app.get('/fee-rate', (c) => {
    const t = marketOf(c);
    return t instanceof Response ? t : c.json({ base_fee: 0 });
  });

  app.get('/time', (c) => c.json(ex.nowS()));
  app.get('/version', (c) => c.json({ version: 2 }));
  app.get('/ok', (c) => c.text('OK'));
  marketRoutes(app, ex);
}

/**
 * Mounts the market lookups: compact `/clob-markets/{condition_id}`, `/markets-by-token/{token_id}`,
 * `/markets/{condition_id}`.
 */
function marketRoutes(app: Hono, ex: ClobExchange): void {
  const { venue } = ex;
  const marketByCondition = (id: string) => venue.markets.find((m) => m.conditionId.toLowerCase() === id.toLowerCase());
  const midOf = (tokenId: string) => {
    const { bids, asks } = venue.book(tokenId);
    return bids[0] && asks[0] ? (bids[0].price + asks[0].price) / 2n : PRICE_SCALE / 2n;
  };

  /**
   * Compact market info (`c` condition, `t` tokens, `mts` tick, `nr` neg-risk, `fd` fee, `mos` min size, `ao` accepting
   * orders).
   */
  app.get('/clob-markets/:condition_id', (c) => {
    const m = marketByCondition(c.req.param('condition_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({
      c: m.conditionId,
      t: m.tokenIds.map((t, i) => ({ t, o: m.outcomes[i] })),
      mts: Number(m.tickSize),
      nr: m.negRisk,
      fd: { r: 0, e: 0 },
      mos: Number(m.minSize),
      ao: !m.closed,
    });
  });

  app.get('/markets-by-token/:token_id', (c) => {
    const m = venue.tokenIndex.get(c.req.param('token_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({ condition_id: m.conditionId, primary_token_id: m.tokenIds[0], secondary_token_id: m.tokenIds[1] });
  });

  app.get('/markets/:condition_id', (c) => {
    const m = marketByCondition(c.req.param('condition_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({
      condition_id: m.conditionId,
      question: m.question,
      market_slug: m.slug,
      active: !m.closed,
      closed: m.closed,
      accepting_orders: !m.closed,
      enable_order_book: true,
      minimum_order_size: Number(m.minSize),
      minimum_tick_size: Number(m.tickSize),
      neg_risk: m.negRisk,
      tokens: m.tokenIds.map((t, i) => ({
        token_id: t,
        outcome: m.outcomes[i],
        price: Number(fromUnits(midOf(t), 6)),
      })),
    });
  });
}
