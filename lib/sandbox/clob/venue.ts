/**
 * The sandbox order-book exchange: markets, API credentials, balances and a price-time-priority book
 * per outcome token. Amounts are bigint base units (6 decimals); prices bigint at 6 decimals.
 */
import type { Address, Hex } from 'viem';
import type { OrderType } from '../../clob/order';

/** Prices are bigint at 6 decimals: `PRICE_SCALE` is 1.0. */
export const PRICE_SCALE = 1_000_000n;

/** The exchange refused an order; `message` is the venue's error text (answered 400, or a batch item's `errorMsg`). */
export class OrderRejectedError extends Error {
  override name = 'OrderRejectedError';
}

/** An order-book market: two outcome tokens, tick and minimum size as decimal strings (seed "Markets"). */
export type ClobMarket = {
  eventId: number;
  marketId: number;
  conditionId: Hex;
  question: string;
  slug: string;
  outcomes: [string, string];
  tokenIds: [string, string];
  tickSize: string;
  minSize: string;
  negRisk: boolean;
  closed: boolean;
};

/** L2 API credentials issued to `address` for the L1 `nonce`; `secret` base64url (HMAC key), never logged. */
export type ApiCreds = { apiKey: string; secret: string; passphrase: string; address: Address; nonce: number };

/** Exchange mode (admin hook `/admin/clob-mode`): which order and cancel routes are open. */
export type ExchangeMode = 'normal' | 'disabled' | 'cancel-only' | 'post-only' | 'restarting';

/**
 * An order the exchange holds: sizes bigint base units (6 decimals), `price` at `PRICE_SCALE`, times Unix ms
 * (`expiration` s).
 */
export type ClobOrderRec = {
  id: Hex;
  owner: string;
  address: string;
  maker: string;
  tokenId: string;
  side: 'BUY' | 'SELL';
  price: bigint;
  originalSize: bigint;
  matched: bigint;
  status: 'live' | 'matched' | 'canceled' | 'unmatched';
  orderType: OrderType;
  postOnly: boolean;
  expiration: number;
  created: number;
  seq: number;
};

/**
 * One side of a fill (a match writes two rows, the taker's and the maker's). `matchId` names the match
 * (the venue's trade id); `takerOrderId` / `makerOrderId` the two orders; `role` the row's side of it.
 */
export type Trade = {
  id: string;
  matchId: string;
  tokenId: string;
  side: 'BUY' | 'SELL';
  price: bigint;
  size: bigint;
  address: string;
  owner: string;
  role: 'TAKER' | 'MAKER';
  orderId: string;
  takerOrderId: string;
  makerOrderId: string;
  at: number;
};

/** A heartbeat session of an account (venue: orders are cancelled when heartbeats lapse). `lastAt` Unix ms. */
export type HeartbeatSession = { id: string; lastAt: number };

/** The in-memory order-book exchange of one sandbox (clock injected). */
export class ClobVenue {
  readonly markets: ClobMarket[] = [];
  readonly tokenIndex = new Map<string, ClobMarket>();
  readonly creds = new Map<string, ApiCreds>();
  readonly credsByNonce = new Map<string, string>();
  readonly collateral = new Map<string, bigint>();
  readonly tokens = new Map<string, Map<string, bigint>>();
  readonly funders = new Map<string, string>();
  readonly orders = new Map<string, ClobOrderRec>();
  readonly trades: Trade[] = [];
  /** Heartbeat sessions by account address (lowercase). */
  readonly heartbeats = new Map<string, HeartbeatSession>();
  /** Last fill price per token (6-decimal bigint) and its taker side. */
  readonly lastTrade = new Map<string, { price: bigint; side: 'BUY' | 'SELL'; at: number }>();
  mode: ExchangeMode = 'normal';
  retryAfterSeconds = 30;
  private seq = 1;
  private books = new Map<string, { bids: ClobOrderRec[]; asks: ClobOrderRec[] }>();

  constructor(readonly now: () => number) {}

  addMarket(m: ClobMarket): void {
    this.markets.push(m);
    for (const t of m.tokenIds) {
      this.tokenIndex.set(t, m);
      this.books.set(t, { bids: [], asks: [] });
    }
  }

  /** The book of `tokenId` (empty for a token no market lists): bids best (highest) first, asks best (lowest) first. */
  book(tokenId: string): { bids: ClobOrderRec[]; asks: ClobOrderRec[] } {
    return this.books.get(tokenId) ?? { bids: [], asks: [] };
  }

  balanceOf(address: string): bigint {
    return this.collateral.get(address.toLowerCase()) ?? 0n;
  }

  tokenBalance(address: string, tokenId: string): bigint {
    return this.tokens.get(address.toLowerCase())?.get(tokenId) ?? 0n;
  }

  credit(address: string, amount: bigint): void {
    const k = address.toLowerCase();
    this.collateral.set(k, (this.collateral.get(k) ?? 0n) + amount);
  }

  creditToken(address: string, tokenId: string, amount: bigint): void {
    const k = address.toLowerCase();
    const m = this.tokens.get(k) ?? new Map<string, bigint>();
    m.set(tokenId, (m.get(tokenId) ?? 0n) + amount);
    this.tokens.set(k, m);
  }

  /** Collateral (BUY) or tokens (SELL) reserved by the maker's live orders. */
  reserved(maker: string, tokenId: string | undefined, side: 'BUY' | 'SELL'): bigint {
    let r = 0n;
    for (const o of this.orders.values()) {
      if (o.maker !== maker.toLowerCase() || o.status !== 'live' || o.side !== side) continue;
      const remaining = o.originalSize - o.matched;
      if (side === 'BUY') r += (remaining * o.price) / PRICE_SCALE;
      else if (o.tokenId === tokenId) r += remaining;
    }
    return r;
  }

  /**
   * Places a verified order. Returns the record (status live / matched / unmatched) or throws an
   * exchange error message (the caller answers 400 or puts it in the batch item's `errorMsg`).
   * `budget` (a market-style BUY's collateral, its `makerAmount`, base units): the order is sized by
   * collateral (PROTOCOL.md §3.2 "FOK/FAK sized by collateral for BUY"), so it spends up to the budget at
   * the makers' prices within its limit and a better price buys more shares than it signed for (the
   * exchange gives the taker the surplus); FOK needs the whole budget fillable.
   */
  place(rec: Omit<ClobOrderRec, 'matched' | 'status' | 'seq'>, budget?: bigint): ClobOrderRec {
    if (this.orders.has(rec.id)) throw new OrderRejectedError(`order ${rec.id} is invalid. Duplicated.`);
    const byCollateral =
      budget !== undefined && rec.side === 'BUY' && (rec.orderType === 'FOK' || rec.orderType === 'FAK');
    const need = byCollateral
      ? budget
      : rec.side === 'BUY'
        ? (rec.originalSize * rec.price) / PRICE_SCALE
        : rec.originalSize;
    const have =
      rec.side === 'BUY'
        ? this.balanceOf(rec.maker) - this.reserved(rec.maker, undefined, 'BUY')
        : this.tokenBalance(rec.maker, rec.tokenId) - this.reserved(rec.maker, rec.tokenId, 'SELL');
    if (need > have) throw new OrderRejectedError('not enough balance / allowance');
    const book = this.book(rec.tokenId);
    const opposite = rec.side === 'BUY' ? book.asks : book.bids;
    const crosses = (m: ClobOrderRec) => (rec.side === 'BUY' ? m.price <= rec.price : m.price >= rec.price);
    const best = opposite[0];
    if (rec.postOnly && best && crosses(best)) {
      throw new OrderRejectedError('invalid post-only order: order crosses book');
    }
    if (rec.orderType === 'FOK') {
      let fillable = 0n;
      for (const m of opposite) {
        if (!crosses(m)) break;
        fillable += byCollateral ? ((m.originalSize - m.matched) * m.price) / PRICE_SCALE : m.originalSize - m.matched;
      }
      if (fillable < (byCollateral ? budget : rec.originalSize))
        throw new OrderRejectedError("order couldn't be fully filled. FOK orders are fully filled or killed.");
    }
    if (rec.orderType === 'FAK' && !(best && crosses(best))) {
      throw new OrderRejectedError(
        'no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.',
      );
    }
    const o: ClobOrderRec = { ...rec, matched: 0n, status: 'live', seq: this.seq++ };
    this.orders.set(o.id, o);
    let spent = 0n;
    for (let m = opposite[0]; m && crosses(m); m = opposite[0]) {
      // Shares still wanted: by size, or what the collateral left buys at this maker's price.
      const want = byCollateral ? ((budget - spent) * PRICE_SCALE) / m.price : o.originalSize - o.matched;
      const q = want < m.originalSize - m.matched ? want : m.originalSize - m.matched;
      const cost = (q * m.price) / PRICE_SCALE;
      // Dust: nothing left that buys a share unit at a cost the exchange can charge.
      if (q <= 0n || (byCollateral && cost === 0n)) break;
      this.settle(o, m, q, m.price);
      spent += cost;
      if (m.matched === m.originalSize) {
        m.status = 'matched';
        opposite.shift();
      }
    }
    // A collateral-sized BUY may get more shares than it signed for; its size is what it bought.
    if (byCollateral && o.matched > o.originalSize) o.originalSize = o.matched;
    if (o.matched === o.originalSize) o.status = 'matched';
    else if (o.orderType === 'GTC' || o.orderType === 'GTD') {
      const same = o.side === 'BUY' ? book.bids : book.asks;
      const idx = same.findIndex((x) => (o.side === 'BUY' ? x.price < o.price : x.price > o.price));
      same.splice(idx === -1 ? same.length : idx, 0, o);
    } else o.status = o.matched > 0n ? 'matched' : 'unmatched';
    return o;
  }

  private settle(taker: ClobOrderRec, maker: ClobOrderRec, q: bigint, price: bigint): void {
    taker.matched += q;
    maker.matched += q;
    const cost = (q * price) / PRICE_SCALE;
    const [buyer, seller] = taker.side === 'BUY' ? [taker.maker, maker.maker] : [maker.maker, taker.maker];
    this.credit(buyer, -cost);
    this.credit(seller, cost);
    this.creditToken(buyer, taker.tokenId, q);
    this.creditToken(seller, taker.tokenId, -q);
    const at = this.now();
    const matchId = `trade-${this.trades.length / 2 + 1}`;
    const common = {
      matchId,
      tokenId: taker.tokenId,
      price,
      size: q,
      takerOrderId: taker.id,
      makerOrderId: maker.id,
      at,
    };
    this.trades.push({
      ...common,
      id: `t${this.trades.length + 1}`,
      side: taker.side,
      address: taker.maker,
      owner: taker.owner,
      role: 'TAKER',
      orderId: taker.id,
    });
    this.trades.push({
      ...common,
      id: `t${this.trades.length + 1}`,
      side: maker.side,
      address: maker.maker,
      owner: maker.owner,
      role: 'MAKER',
      orderId: maker.id,
    });
    this.lastTrade.set(taker.tokenId, { price, side: taker.side, at });
  }

  /** The match ids an order took part in. */
  matchesOf(orderId: string): string[] {
    return [...new Set(this.trades.filter((t) => t.orderId === orderId).map((t) => t.matchId))];
  }

  /**
   * Starts or renews the heartbeat session of `address`: an empty `id` starts one; otherwise it must be
   * the current id. Returns the session id, or undefined for an unknown id. `now` Unix ms.
   */
  heartbeat(address: string, id: string, now: number): string | undefined {
    const k = address.toLowerCase();
    const cur = this.heartbeats.get(k);
    if (id === '' || !cur) {
      if (id !== '' && !cur) return undefined;
      const session = { id: crypto.randomUUID(), lastAt: now };
      this.heartbeats.set(k, session);
      return session.id;
    }
    if (cur.id !== id) return undefined;
    cur.lastAt = now;
    return cur.id;
  }

  /** Cancels every live order of accounts whose last heartbeat is older than `timeoutMs` at `now`. */
  lapseHeartbeats(now: number, timeoutMs = 10_000): void {
    for (const [address, s] of this.heartbeats) {
      if (now - s.lastAt <= timeoutMs) continue;
      this.heartbeats.delete(address);
      for (const o of this.orders.values())
        if (o.address === address && o.status === 'live') this.cancel(o.id, address);
    }
  }

  cancel(id: string, address: string): string | undefined {
    const o = this.orders.get(id);
    if (!o || o.address !== address.toLowerCase()) return 'order not found';
    if (o.status !== 'live') return 'order is not live';
    const book = this.book(o.tokenId);
    const side = o.side === 'BUY' ? book.bids : book.asks;
    const i = side.indexOf(o);
    if (i >= 0) side.splice(i, 1);
    o.status = 'canceled';
    return undefined;
  }

  /** Expires GTD orders whose expiration has passed. */
  expire(): void {
    const nowS = Math.floor(this.now() / 1000);
    for (const o of this.orders.values()) {
      if (o.status === 'live' && o.orderType === 'GTD' && o.expiration > 0 && o.expiration <= nowS)
        this.cancel(o.id, o.address);
    }
  }
}
