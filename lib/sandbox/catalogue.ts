/**
 * Sandbox catalogue (`/gamma`), data service (`/data`), relayer (`/relayer`) and bridge (`/bridge`)
 * routes (seed `order-book-exchange-api.md`: "Catalogue read", "Data service routes", "Relayer and
 * bridge"). Catalogue and data reads are public; the bridge withdraw needs L1 headers (a ClobAuth
 * signature by the withdrawing wallet).
 */
import { Hono, type Context } from 'hono';
import { isAddress, keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { clobAuthTypedData } from '../clob/auth';
import type { SandboxContext } from './context';
import { fromUnits } from '../decimal';
import { PRICE_SCALE, type ClobMarket } from './clob/venue';

const KEYSET_MAX = 100;
const ISO = (ms: number) => new Date(ms).toISOString();

function cursorOf(n: number): string {
  return Buffer.from(`k:${n}`).toString('base64url');
}
function fromCursor(s: string | undefined): number | undefined {
  if (!s) return 0;
  const m = /^k:(\d{1,9})$/.exec(Buffer.from(s, 'base64url').toString());
  return m ? Number(m[1]) : undefined;
}

export function catalogueRoutes(ctx: SandboxContext) {
  const gamma = new Hono();
  const venue = ctx.clob;
  const created = Date.UTC(2026, 0, 1);

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
    return [...byEvent].map(([id, ms]) => ({
      id: String(id),
      ticker: ms[0]!.slug.split('-').slice(0, 2).join('-'),
      slug: ms[0]!.slug,
      title: ms.length > 1 ? `Sandbox event ${id}` : ms[0]!.question,
      description: 'Sandbox event (demo data).',
      category: 'Sandbox',
      active: ms.some((m) => !m.closed),
      closed: ms.every((m) => m.closed),
      negRisk: ms[0]!.negRisk,
      enableNegRisk: ms[0]!.negRisk,
      enableOrderBook: true,
      createdAt: ISO(created),
      startDate: ISO(created),
      endDate: ISO(created + 365 * 86_400_000),
      markets: ms.map(marketJson),
      tags: [{ id: '1', label: 'Sandbox', slug: 'sandbox' }],
    }));
  };

  const keyset = <T extends { closed: boolean; question?: string; title?: string; slug: string }>(c: Context, all: T[], name: string) => {
    if (c.req.query('offset') !== undefined) return c.json({ error: 'offset is not supported on keyset routes; use after_cursor' }, 400);
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
    return c.json({ [name]: page, ...(start + limit < filtered.length ? { next_cursor: cursorOf(start + limit) } : {}) });
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

  // ------------------------------------------------------------------------------------------
  // Data service v2: `{ data, pagination? }` envelope, snake_case.

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
  const pageOf = <T,>(rows: T[], offset: number, limit: number) => ({
    data: rows.slice(offset, offset + limit),
    pagination: { limit, offset, has_more: offset + limit < rows.length, next_cursor: offset + limit < rows.length ? cursorOf(offset + limit) : null },
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
    const conds = condition ? condition.split(',').slice(0, 20).map((x) => x.toLowerCase()) : undefined;
    const rows = [...(venue.tokens.get(user) ?? new Map<string, bigint>())]
      .filter(([, size]) => (status === 'CLOSED' ? size === 0n : size > 0n))
      .map(([tokenId, size]) => {
        const m = venue.tokenIndex.get(tokenId)!;
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
        const last = fills.length ? Math.floor(fills[fills.length - 1]!.at / 1000) : 0;
        return {
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
          redeemable: false,
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
        };
      })
      .filter((r) => !conds || conds.includes(r.condition_id.toLowerCase()));
    return c.json(pageOf(rows, offset, limit));
  });

  /** `GET /v2/value?user=`: `{ data: { proxy_wallet, value } }`, value = Σ size × midpoint (exact). */
  data.get('/v2/value', (c) => {
    const user = userOf(c);
    if (!user) return c.json({ data: null });
    let value = 0n;
    for (const [tokenId, size] of venue.tokens.get(user) ?? []) if (size > 0n) value += (size * mid6(tokenId)) / PRICE_SCALE;
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

  // ------------------------------------------------------------------------------------------
  // Relayer: /submit answers at once with STATE_NEW; /transaction reports the hash once "mined".

  const relayer = new Hono();
  relayer.post('/submit', async (c) => {
    let payload: unknown;
    try {
      payload = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: 'invalid json' }, 400);
    }
    if (typeof payload !== 'object' || payload === null) return c.json({ error: 'invalid payload' }, 400);
    const id = crypto.randomUUID();
    ctx.relayer.set(id, { id, submitted: ctx.now(), hash: keccak256(toHex(id)), payload });
    return c.json({ transactionID: id, state: 'STATE_NEW' });
  });
  relayer.get('/transaction', (c) => {
    const tx = ctx.relayer.get(c.req.query('id') ?? '');
    if (!tx) return c.json({ error: 'transaction not found' }, 404);
    const mined = ctx.now() - tx.submitted >= ctx.config.relayerMineMs;
    return c.json([
      { transactionID: tx.id, state: mined ? 'STATE_MINED' : 'STATE_NEW', ...(mined ? { transactionHash: tx.hash } : {}) },
    ]);
  });

  // ------------------------------------------------------------------------------------------
  // Bridge withdraw: body { address, toChainId, toTokenAddress, recipientAddr, amount (base units) },
  // authorised by L1 headers of `address` (ClobAuth on the exchange chain, nonce 0).

  const bridge = new Hono();
  bridge.post('/withdraw', async (c) => {
    let b: Record<string, unknown>;
    try {
      b = JSON.parse(await c.req.text()) as Record<string, unknown>;
    } catch {
      return c.json({ error: 'invalid json' }, 400);
    }
    const address = c.req.header('SVC_ADDRESS') ?? '';
    const sig = c.req.header('SVC_SIGNATURE') ?? '';
    const ts = Number(c.req.header('SVC_TIMESTAMP') ?? 'x');
    if (!isAddress(address, { strict: false }) || !/^0x[0-9a-fA-F]{130}$/.test(sig) || !Number.isSafeInteger(ts)) {
      return c.json({ error: 'Invalid L1 Request headers' }, 401);
    }
    if (Math.abs(ts - Math.floor(ctx.now() / 1000)) > ctx.config.clobTimestampWindowS) return c.json({ error: 'Invalid L1 Request headers' }, 401);
    const recovered = await recoverTypedDataAddress({
      ...clobAuthTypedData(address as Address, { chainId: ctx.config.clobChainId, timestamp: ts, nonce: 0 }),
      signature: sig as Hex,
    }).catch(() => undefined);
    if (!recovered || recovered.toLowerCase() !== address.toLowerCase()) return c.json({ error: 'Invalid L1 Request headers' }, 401);
    if (typeof b.address !== 'string' || b.address.toLowerCase() !== address.toLowerCase()) return c.json({ error: 'address mismatch' }, 400);
    if (typeof b.amount !== 'string' || !/^[1-9]\d{0,30}$/.test(b.amount)) return c.json({ error: 'invalid amount' }, 400);
    if (typeof b.recipientAddr !== 'string' || !isAddress(b.recipientAddr, { strict: false })) return c.json({ error: 'invalid recipientAddr' }, 400);
    if (typeof b.toChainId !== 'number' || !Number.isSafeInteger(b.toChainId)) return c.json({ error: 'invalid toChainId' }, 400);
    const amount = BigInt(b.amount);
    if (venue.balanceOf(address) < amount) return c.json({ error: 'not enough balance' }, 400);
    venue.credit(address, -amount);
    const id = crypto.randomUUID();
    ctx.bridgeWithdrawals.push({ id, address, amount: b.amount, toChainId: b.toChainId, recipient: b.recipientAddr, at: ctx.now() });
    return c.json({ id, status: 'pending' });
  });

  return { gamma, data, relayer, bridge };
}
