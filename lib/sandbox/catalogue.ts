/**
 * Sandbox catalogue (`/gamma`; seed `order-book-exchange-api.md` "Catalogue read"): events and markets,
 * plain lists and keyset pages (`after_cursor`, `limit` 1-100, no `offset`), found by id or slug and
 * searched by text. Public. Market prices come from the order book's best bid and ask.
 */
import { Hono, type Context } from 'hono';
import { fromUnits } from '../decimal';
import type { SandboxContext } from './context';
import { cursorOf, fromCursor, iso } from './http';
import type { ClobMarket } from './clob/venue';

const KEYSET_MAX = 100;
/** When the sandbox's markets were "created" (Unix ms); they end a year later. */
export const CATALOGUE_CREATED = Date.UTC(2026, 0, 1);
const ISO = iso;

/** The catalogue app of `ctx` (paths relative to its `/gamma` mount). */
export function catalogueRoutes(ctx: SandboxContext): Hono {
  const gamma = new Hono();
  const venue = ctx.clob;
  const created = CATALOGUE_CREATED;

  const bestOf = (tokenId: string) => {
    const b = venue.book(tokenId);
    return {
      bid: b.bids[0] ? Number(fromUnits(b.bids[0].price, 6)) : 0,
      ask: b.asks[0] ? Number(fromUnits(b.asks[0].price, 6)) : 1,
    };
  };

  const marketJson = (m: ClobMarket) => {
    const yes = bestOf(m.tokenIds[0]);
    return {
      id: String(m.marketId),
      question: m.question,
      conditionId: m.conditionId,
      slug: m.slug,
      description: `Sandbox market: ${m.question}`,
      category: 'Sandbox',
      outcomes: JSON.stringify(m.outcomes),
      outcomePrices: JSON.stringify([((yes.bid + yes.ask) / 2).toFixed(3), (1 - (yes.bid + yes.ask) / 2).toFixed(3)]),
      clobTokenIds: JSON.stringify(m.tokenIds),
      orderPriceMinTickSize: Number(m.tickSize),
      orderMinSize: Number(m.minSize),
      negRisk: m.negRisk,
      enableOrderBook: true,
      acceptingOrders: !m.closed,
      active: !m.closed,
      closed: m.closed,
      archived: false,
      bestBid: yes.bid,
      bestAsk: yes.ask,
      spread: Number((yes.ask - yes.bid).toFixed(4)),
      volume: '0',
      liquidity: '0',
      startDate: ISO(created),
      endDate: ISO(created + 365 * 86_400_000),
    };
  };

  const events = () => {
    const byEvent = new Map<number, ClobMarket[]>();
    for (const m of venue.markets) byEvent.set(m.eventId, [...(byEvent.get(m.eventId) ?? []), m]);
    return [...byEvent].flatMap(([id, ms]) => {
      const [first] = ms;
      if (!first) return [];
      return [
        {
          id: String(id),
          ticker: first.slug.split('-').slice(0, 2).join('-'),
          slug: first.slug,
          title: ms.length > 1 ? `Sandbox event ${id}` : first.question,
          description: 'Sandbox event (demo data).',
          category: 'Sandbox',
          active: ms.some((m) => !m.closed),
          closed: ms.every((m) => m.closed),
          negRisk: first.negRisk,
          enableNegRisk: first.negRisk,
          enableOrderBook: true,
          createdAt: ISO(created),
          startDate: ISO(created),
          endDate: ISO(created + 365 * 86_400_000),
          markets: ms.map(marketJson),
          tags: [{ id: '1', label: 'Sandbox', slug: 'sandbox' }],
        },
      ];
    });
  };

  const keyset = <T extends { closed: boolean; question?: string; title?: string; slug: string }>(
    c: Context,
    all: T[],
    name: string,
  ) => {
    if (c.req.query('offset') !== undefined)
      return c.json({ error: 'offset is not supported on keyset routes; use after_cursor' }, 400);
    const limitText = c.req.query('limit') ?? '20';
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > KEYSET_MAX) {
      return c.json({ error: `limit must be between 1 and ${KEYSET_MAX}` }, 400);
    }
    const start = fromCursor(c.req.query('after_cursor'));
    if (start === undefined) return c.json({ error: 'invalid after_cursor' }, 400);
    const closed = c.req.query('closed');
    const q = c.req.query('q')?.toLowerCase();
    const filtered = all.filter(
      (x) =>
        (closed === undefined || String(x.closed) === closed) &&
        (!q || (x.question ?? x.title ?? '').toLowerCase().includes(q) || x.slug.includes(q)),
    );
    const limit = Number(limitText);
    const page = filtered.slice(start, start + limit);
    // The venue omits `next_cursor` on the last page (an empty cursor is invalid for its clients).
    return c.json({
      [name]: page,
      ...(start + limit < filtered.length ? { next_cursor: cursorOf(start + limit) } : {}),
    });
  };

  gamma.get('/events/keyset', (c) => keyset(c, events(), 'events'));
  gamma.get('/markets/keyset', (c) => keyset(c, venue.markets.map(marketJson), 'markets'));
  gamma.get('/events/:id', (c) => {
    const e = events().find((x) => x.id === c.req.param('id') || x.slug === c.req.param('id'));
    return e ? c.json(e) : c.json({ error: 'event not found' }, 404);
  });
  gamma.get('/events', (c) => c.json(events()));
  gamma.get('/markets', (c) => {
    const closed = c.req.query('closed') ?? 'false';
    return c.json(venue.markets.filter((m) => String(m.closed) === closed).map(marketJson));
  });
  return gamma;
}
