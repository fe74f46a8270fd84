/**
 * The sandbox's order-book channels (PROTOCOL.md §5.3–§5.4), as `@polymarket/client`'s
 * `subscribe` uses them:
 *
 * - `/clob/ws/market` (no auth): `{assets_ids, type:"market", custom_feature_enabled?, initial_dump?}`
 *   sets the socket's token ids; `{assets_ids, operation:"subscribe"|"unsubscribe"}` changes them. Each
 *   newly subscribed id gets a `book` dump unless `initial_dump` is false; no cap on the number of ids
 *   (a frame of up to 4 MiB, about 50 000 ids: `SUBSCRIBE_FRAME_MAX_CHARS`).
 *   Then `price_change` (`price_changes[]`, `size` the level's new total, "0" removes it),
 *   `last_trade_price` and `tick_size_change` as they happen. Frames are arrays of events.
 * - `/clob/ws/user`: `{auth:{apiKey, secret, passphrase}, type:"user", markets?}` authenticates with the
 *   L2 API credentials (a wrong one closes the socket, code 4001); `markets` (condition ids) narrows it,
 *   absent = all. `order` (PLACEMENT / UPDATE / CANCELLATION) and `trade` events of the key's account.
 * - The text `PING` is answered `PONG` on both.
 *
 * The order-book venue has no event hook: after every sandbox request (`sync()`), the state the
 * sockets watch is compared with what they were last told. Times: `timestamp` epoch-ms strings,
 * `created_at` / `match_time` epoch-second strings.
 */
import type { WebSocket } from 'ws';
import { fromUnits } from '../../decimal';
import { l2SignaturesEqual } from '../../clob/auth';
import type { SandboxContext } from '../context';
import type { ClobMarket, ClobOrderRec, Trade } from '../clob/venue';
import { parseFrame, sendLater, SUBSCRIBE_FRAME_MAX_CHARS } from './socket';

/** Aggregated sizes (6-decimal base units) by price string, per side. */
type Levels = { BUY: Map<string, bigint>; SELL: Map<string, bigint> };
type MarketSocket = { ws: WebSocket; assets: Set<string> };
type UserSocket = { ws: WebSocket; address?: string; markets?: Set<string> };

const TOKEN_ID = /^\d{1,78}$/;
const dec = (units: bigint) => fromUnits(units, 6);

/** The order-book streams of one sandbox: the market and user sockets and the state they were last told. */
export class ClobStreams {
  private readonly market = new Set<MarketSocket>();
  private readonly user = new Set<UserSocket>();
  private readonly levels = new Map<string, Levels>();
  private readonly ticks = new Map<string, string>();
  private readonly orders = new Map<string, string>();
  private tradeCursor = 0;

  constructor(private readonly ctx: SandboxContext) {}

  private get venue() {
    return this.ctx.clob;
  }

  private send(ws: WebSocket, payload: unknown): void {
    sendLater(ws, typeof payload === 'string' ? payload : JSON.stringify(payload), this.ctx.delayMs.get('clob') ?? 0);
  }

  /** Starts watching from the current state when the first socket opens. */
  private baseline(): void {
    if (this.market.size + this.user.size > 0) return;
    this.tradeCursor = this.venue.trades.length;
    this.orders.clear();
    for (const o of this.venue.orders.values()) this.orders.set(o.id, stateOf(o));
    this.levels.clear();
    this.ticks.clear();
    for (const m of this.venue.markets) this.ticks.set(m.conditionId, m.tickSize);
  }

  /** Serves one upgraded market-channel socket. */
  attachMarket(ws: WebSocket): void {
    this.baseline();
    const s: MarketSocket = { ws, assets: new Set() };
    this.market.add(s);
    ws.on('close', () => this.market.delete(s));
    ws.on('message', (raw, isBinary) => {
      const text = raw.toString();
      if (isBinary) return;
      if (text === 'PING') return this.send(ws, 'PONG');
      const msg = parseFrame(text, SUBSCRIBE_FRAME_MAX_CHARS);
      if (msg) this.onMarketMessage(s, msg);
    });
  }

  /** Serves one upgraded user-channel socket. */
  attachUser(ws: WebSocket): void {
    this.baseline();
    const s: UserSocket = { ws };
    this.user.add(s);
    ws.on('close', () => this.user.delete(s));
    ws.on('message', (raw, isBinary) => {
      const text = raw.toString();
      if (isBinary) return;
      if (text === 'PING') return this.send(ws, 'PONG');
      const msg = parseFrame(text);
      if (msg) this.onUserMessage(s, msg);
    });
  }

  private onMarketMessage(s: MarketSocket, msg: Record<string, unknown>): void {
    const ids = Array.isArray(msg.assets_ids)
      ? msg.assets_ids.filter((x): x is string => typeof x === 'string' && TOKEN_ID.test(x))
      : [];
    const before = new Set(s.assets);
    if (msg.operation === 'unsubscribe') {
      for (const id of ids) s.assets.delete(id);
      return;
    }
    if (msg.operation !== 'subscribe' && String(msg.type).toLowerCase() !== 'market') return;
    if (msg.operation !== 'subscribe') s.assets.clear();
    for (const id of ids) {
      s.assets.add(id);
      if (!this.levels.has(id) && this.venue.tokenIndex.has(id)) this.levels.set(id, this.current(id));
    }
    if (msg.initial_dump === false) return;
    const fresh = msg.operation === 'subscribe' ? ids.filter((id) => !before.has(id)) : ids;
    const books = [...new Set(fresh)].flatMap((id) => {
      const m = this.venue.tokenIndex.get(id);
      return m ? [this.bookEvent(id, m)] : [];
    });
    if (books.length) this.send(s.ws, books);
  }

  private onUserMessage(s: UserSocket, msg: Record<string, unknown>): void {
    const markets = Array.isArray(msg.markets)
      ? msg.markets.filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase())
      : undefined;
    if (msg.auth !== undefined) {
      const a = msg.auth;
      const field = (k: string) =>
        a !== null && typeof a === 'object' && k in a ? Object.entries(a).find(([n]) => n === k)?.[1] : undefined;
      const apiKey = field('apiKey');
      const creds = typeof apiKey === 'string' ? this.venue.creds.get(apiKey) : undefined;
      const secret = field('secret');
      const passphrase = field('passphrase');
      if (
        !creds ||
        typeof secret !== 'string' ||
        typeof passphrase !== 'string' ||
        !l2SignaturesEqual(creds.secret, secret) ||
        !l2SignaturesEqual(creds.passphrase, passphrase)
      ) {
        s.ws.close(4001, 'unauthorized');
        return;
      }
      s.address = creds.address.toLowerCase();
      s.markets = markets && markets.length ? new Set(markets) : undefined;
      return;
    }
    if (!s.address || !markets) return;
    if (msg.operation === 'subscribe') {
      if (s.markets) for (const m of markets) s.markets.add(m);
    } else if (msg.operation === 'unsubscribe') {
      if (!s.markets) s.markets = new Set(this.venue.markets.map((m) => m.conditionId.toLowerCase()));
      for (const m of markets) s.markets.delete(m);
    }
  }

  private bookEvent(tokenId: string, m: ClobMarket) {
    const l = this.current(tokenId);
    this.levels.set(tokenId, l);
    const side = (map: Map<string, bigint>, desc: boolean) =>
      [...map.entries()]
        .sort(([a], [b]) => (desc ? Number(b) - Number(a) : Number(a) - Number(b)))
        .map(([price, size]) => ({ price, size: dec(size) }));
    const last = this.venue.lastTrade.get(tokenId);
    // Like the REST book: bids ascending, asks descending (best price last).
    return {
      event_type: 'book',
      market: m.conditionId,
      asset_id: tokenId,
      bids: side(l.BUY, false),
      asks: side(l.SELL, true),
      hash: '',
      timestamp: String(this.ctx.now()),
      min_order_size: m.minSize,
      tick_size: m.tickSize,
      neg_risk: m.negRisk,
      last_trade_price: last ? dec(last.price) : '',
    };
  }

  private current(tokenId: string): Levels {
    const { bids, asks } = this.venue.book(tokenId);
    const agg = (side: ClobOrderRec[]) => {
      const out = new Map<string, bigint>();
      for (const o of side) out.set(dec(o.price), (out.get(dec(o.price)) ?? 0n) + o.originalSize - o.matched);
      return out;
    };
    return { BUY: agg(bids), SELL: agg(asks) };
  }

  /** Pushes what changed since the last call (call after every request that may change the venue). */
  sync(): void {
    if (this.market.size + this.user.size === 0) return;
    const trades = this.venue.trades.slice(this.tradeCursor);
    this.tradeCursor = this.venue.trades.length;
    this.syncMarket(trades);
    this.syncUser(trades);
  }

  private syncMarket(trades: Trade[]): void {
    const watched = new Set([...this.market].flatMap((s) => [...s.assets]));
    const events: { asset: string; event: object }[] = [];
    const now = String(this.ctx.now());
    for (const t of trades) {
      const m = this.venue.tokenIndex.get(t.tokenId);
      if (t.role !== 'TAKER' || !m || !watched.has(t.tokenId)) continue;
      events.push({
        asset: t.tokenId,
        event: {
          event_type: 'last_trade_price',
          market: m.conditionId,
          asset_id: t.tokenId,
          price: dec(t.price),
          size: dec(t.size),
          fee_rate_bps: '0',
          side: t.side,
          timestamp: now,
        },
      });
    }
    for (const m of this.venue.markets) {
      const old = this.ticks.get(m.conditionId);
      this.ticks.set(m.conditionId, m.tickSize);
      if (old === undefined || old === m.tickSize) continue;
      for (const id of m.tokenIds) {
        if (watched.has(id))
          events.push({
            asset: id,
            event: {
              event_type: 'tick_size_change',
              market: m.conditionId,
              asset_id: id,
              old_tick_size: old,
              new_tick_size: m.tickSize,
              timestamp: now,
            },
          });
      }
    }
    for (const id of watched) {
      const m = this.venue.tokenIndex.get(id);
      const before = this.levels.get(id);
      if (!m || !before) continue;
      const after = this.current(id);
      this.levels.set(id, after);
      const changes = levelChanges(id, before, after);
      if (changes.length === 0) continue;
      const best = bestOf(after);
      events.push({
        asset: id,
        event: {
          event_type: 'price_change',
          market: m.conditionId,
          price_changes: changes.map((c) => ({ ...c, ...best })),
          timestamp: now,
        },
      });
    }
    if (events.length === 0) return;
    for (const s of this.market) {
      const mine = events.filter((e) => s.assets.has(e.asset)).map((e) => e.event);
      if (mine.length) this.send(s.ws, mine);
    }
  }

  private syncUser(trades: Trade[]): void {
    const events: { address: string; market: string; event: object }[] = [];
    const now = String(this.ctx.now());
    for (const o of this.venue.orders.values()) {
      const state = stateOf(o);
      const before = this.orders.get(o.id);
      if (before === state) continue;
      this.orders.set(o.id, state);
      const m = this.venue.tokenIndex.get(o.tokenId);
      if (!m) continue;
      const type = before === undefined ? 'PLACEMENT' : o.status === 'canceled' ? 'CANCELLATION' : 'UPDATE';
      events.push({ address: o.address, market: m.conditionId.toLowerCase(), event: this.orderEvent(o, m, type, now) });
    }
    for (const t of trades) {
      const o = this.venue.orders.get(t.orderId);
      const m = this.venue.tokenIndex.get(t.tokenId);
      if (o && m)
        events.push({ address: o.address, market: m.conditionId.toLowerCase(), event: this.tradeEvent(t, m, now) });
    }
    if (events.length === 0) return;
    for (const s of this.user) {
      const mine = events
        .filter((e) => e.address === s.address && (!s.markets || s.markets.has(e.market)))
        .map((e) => e.event);
      if (mine.length) this.send(s.ws, mine);
    }
  }

  private orderEvent(o: ClobOrderRec, m: ClobMarket, type: string, now: string) {
    const STATUS = { live: 'LIVE', matched: 'MATCHED', canceled: 'CANCELED', unmatched: 'UNMATCHED' } as const;
    return {
      event_type: 'order',
      id: o.id,
      owner: o.owner,
      order_owner: o.owner,
      market: m.conditionId,
      asset_id: o.tokenId,
      side: o.side,
      original_size: dec(o.originalSize),
      size_matched: dec(o.matched),
      price: dec(o.price),
      associate_trades: this.venue.matchesOf(o.id),
      outcome: m.outcomes[m.tokenIds.indexOf(o.tokenId)] ?? '',
      type,
      created_at: String(Math.floor(o.created / 1000)),
      expiration: String(o.expiration),
      order_type: o.orderType,
      status: STATUS[o.status],
      maker_address: o.maker,
      timestamp: now,
    };
  }

  private tradeEvent(t: Trade, m: ClobMarket, now: string) {
    const taker = this.venue.trades.find((x) => x.matchId === t.matchId && x.role === 'TAKER') ?? t;
    const makers = this.venue.trades.filter((x) => x.matchId === t.matchId && x.role === 'MAKER');
    const outcome = (tokenId: string) => m.outcomes[m.tokenIds.indexOf(tokenId)] ?? '';
    return {
      event_type: 'trade',
      type: 'TRADE',
      id: t.matchId,
      taker_order_id: t.takerOrderId,
      market: m.conditionId,
      asset_id: t.tokenId,
      side: taker.side,
      size: dec(t.size),
      fee_rate_bps: '0',
      price: dec(t.price),
      status: 'MATCHED',
      match_time: String(Math.floor(t.at / 1000)),
      last_update: String(Math.floor(t.at / 1000)),
      outcome: outcome(t.tokenId),
      owner: t.owner,
      trade_owner: t.owner,
      maker_address: t.address,
      maker_orders: makers.map((x) => ({
        order_id: x.orderId,
        owner: x.owner,
        maker_address: x.address,
        matched_amount: dec(x.size),
        price: dec(x.price),
        fee_rate_bps: '0',
        asset_id: x.tokenId,
        outcome: outcome(x.tokenId),
        side: x.side,
      })),
      trader_side: t.role,
      timestamp: now,
    };
  }
}

/** What a user-channel order event reports of an order: status and matched size. */
function stateOf(o: ClobOrderRec): string {
  return `${o.status}:${o.matched}`;
}

/** The levels of `tokenId` whose size changed between two views: `size` the new total, "0" when gone. */
function levelChanges(tokenId: string, before: Levels, after: Levels) {
  const out: { asset_id: string; price: string; size: string; side: 'BUY' | 'SELL' }[] = [];
  for (const side of ['BUY', 'SELL'] as const) {
    for (const [price, size] of after[side])
      if (before[side].get(price) !== size) out.push({ asset_id: tokenId, price, size: dec(size), side });
    for (const price of before[side].keys())
      if (!after[side].has(price)) out.push({ asset_id: tokenId, price, size: '0', side });
  }
  return out;
}

/** Best bid and ask of a view ("" for an empty side, as the venue sends absent decimals). */
function bestOf(l: Levels): { best_bid: string; best_ask: string } {
  const prices = (m: Map<string, bigint>) => [...m.keys()].map(Number);
  const bids = prices(l.BUY);
  const asks = prices(l.SELL);
  return {
    best_bid: bids.length ? String(Math.max(...bids)) : '',
    best_ask: asks.length ? String(Math.min(...asks)) : '',
  };
}
