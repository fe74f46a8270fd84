/**
 * The extension's order-book (CLOB) channel client (PROTOCOL.md §5.3–§5.4): one WebSocket to
 * the market channel (public: book dumps and changes of the token ids it holds) or to the user channel
 * (the account's order and trade events, authenticated with the L2 API credentials).
 *
 * As the official client does it (`@polymarket/client` 0.2.0):
 * - market: on open `{assets_ids, type:"market"}` with every held id (the venue's default
 *   `initial_dump` sends a `book` per id); later `{assets_ids, operation:"subscribe"|"unsubscribe"}`.
 *   With no id held the socket is closed (nothing to say) and opened again on the next `subscribe`.
 * - user: on open `{auth:{apiKey, passphrase, secret}, type:"user"}` (every market of the key).
 * - the text `PING` every 10 s; only the text `PONG` counts as liveness; checked every 5 s, 30 s without
 *   a `PONG` = stale → reconnect. An unexpected close (the venue closes on refused credentials) or error
 *   reconnects after the full-jitter backoff (`backoff`, 250 ms base, 30 s cap); after a reconnect
 *   `onResync('reconnect')` (the caller re-reads over REST: the channels have no replay and no `sq`).
 * - server frames are one event or an array; each is validated (valibot; `@polymarket/bindings` is zod,
 *   which the bundle does not carry) and reduced to the fields the extension uses; the rest is dropped
 *   and counted (`status().malformed`). Times become Unix ms (`timestamp` is an epoch-ms string). A
 *   trade keeps its `maker_orders` (the top-level figures are the taker's order: a maker's own side,
 *   size, price and token are only there), each maker order's owner reduced to whether it is this
 *   channel's API key.
 *
 * Pure: WebSocket, clock, random source injected (Node tests use `ws`). The credentials go into the
 * auth frame and nowhere else: no event, status or error carries them.
 */
import * as v from 'valibot';
import { backoff, type StreamState, type WebSocketConstructor, type WebSocketLike } from './perps';
import { venueTradeOf, type ClobVenueTrade } from '../clob/trades';

const str = v.pipe(v.string(), v.maxLength(200));
const decimal = v.pipe(v.string(), v.regex(/^\d{1,20}(\.\d{1,20})?$/));
const tokenId = v.pipe(v.string(), v.regex(/^\d{1,78}$/));
const side = v.pipe(v.string(), v.toUpperCase(), v.picklist(['BUY', 'SELL']));
const msString = v.optional(v.pipe(v.string(), v.regex(/^\d{1,16}$/)));
const level = v.object({ price: decimal, size: decimal });

const bookEvent = v.object({
  event_type: v.literal('book'),
  market: str,
  asset_id: tokenId,
  bids: v.pipe(v.array(level), v.maxLength(10_000)),
  asks: v.pipe(v.array(level), v.maxLength(10_000)),
  timestamp: msString,
  tick_size: v.optional(str),
});
const priceChangeEvent = v.object({
  event_type: v.literal('price_change'),
  market: str,
  price_changes: v.pipe(
    v.array(v.object({ asset_id: tokenId, price: decimal, size: decimal, side })),
    v.maxLength(10_000),
  ),
  timestamp: msString,
});
const lastTradeEvent = v.object({
  event_type: v.literal('last_trade_price'),
  market: str,
  asset_id: tokenId,
  price: decimal,
  size: v.optional(v.union([decimal, v.literal('')])),
  side: v.optional(v.union([side, v.literal('')])),
  timestamp: msString,
});
const tickEvent = v.object({
  event_type: v.literal('tick_size_change'),
  market: str,
  asset_id: tokenId,
  new_tick_size: decimal,
  timestamp: msString,
});
const orderEvent = v.object({
  event_type: v.literal('order'),
  id: str,
  market: str,
  asset_id: tokenId,
  side,
  price: decimal,
  original_size: decimal,
  size_matched: decimal,
  outcome: v.optional(str, ''),
  type: v.optional(str),
  status: v.optional(v.picklist(['LIVE', 'MATCHED', 'DELAYED', 'UNMATCHED', 'CANCELED'])),
  timestamp: v.pipe(v.string(), v.regex(/^\d{1,16}$/)),
});
/**
 * A maker order of a trade (PROTOCOL.md §5.4 `maker_orders[]`): `owner` is its API key, read only to compare with the
 * channel's own.
 */
const makerOrder = v.object({
  order_id: str,
  owner: str,
  maker_address: v.optional(v.nullable(str)),
  matched_amount: decimal,
  price: decimal,
  asset_id: tokenId,
  outcome: v.optional(v.nullable(str)),
  side,
});
const tradeEvent = v.object({
  event_type: v.literal('trade'),
  id: str,
  taker_order_id: v.optional(v.nullable(str)),
  market: str,
  asset_id: tokenId,
  side,
  size: decimal,
  price: decimal,
  status: str,
  outcome: v.optional(v.nullable(str)),
  match_time: v.optional(v.pipe(v.string(), v.regex(/^\d{1,13}$/))),
  trader_side: v.optional(v.nullable(v.picklist(['TAKER', 'MAKER']))),
  maker_orders: v.optional(v.nullable(v.pipe(v.array(makerOrder), v.maxLength(1_000)))),
  timestamp: v.pipe(v.string(), v.regex(/^\d{1,16}$/)),
});
const eventSchema = v.variant('event_type', [
  bookEvent,
  priceChangeEvent,
  lastTradeEvent,
  tickEvent,
  orderEvent,
  tradeEvent,
]);

/** A `[price, size]` level, decimal strings (price in USDC per share, size in shares). */
export type ClobLevel = [string, string];

/**
 * One validated channel event, reduced to what the extension uses; `at` Unix ms (the event's
 * `timestamp`, else the receive time). Book levels are best first (bids descending, asks ascending); a
 * `price_change` level's `size` is the level's new total ("0" removes it). `order.status` is the REST
 * open-orders status (`LIVE`, `MATCHED`, `CANCELED`, …). A `trade` is the exchange's report as it
 * came (`ClobVenueTrade`: its top-level figures are the taker's order, the makers' are in `maker_orders`,
 * each marked `byAccountKey` when its owner is the channel's API key); `match_time` Unix seconds as a
 * string; `trader_side` as the exchange says it, absent when it does not.
 */
export type ClobStreamEvent =
  | {
      kind: 'book';
      at: number;
      tokenId: string;
      market: string;
      bids: ClobLevel[];
      asks: ClobLevel[];
      tickSize?: string;
    }
  | {
      kind: 'price_change';
      at: number;
      market: string;
      changes: { tokenId: string; side: 'BUY' | 'SELL'; price: string; size: string }[];
    }
  | { kind: 'last_trade'; at: number; tokenId: string; price: string }
  | { kind: 'tick_size'; at: number; tokenId: string; tickSize: string }
  | {
      kind: 'order';
      at: number;
      order: {
        id: string;
        status: string;
        side: 'BUY' | 'SELL';
        price: string;
        original_size: string;
        size_matched: string;
        outcome: string;
        asset_id: string;
      };
    }
  | { kind: 'trade'; at: number; tokenId: string; trade: ClobVenueTrade };

const byPrice = (desc: boolean) => (a: ClobLevel, b: ClobLevel) =>
  desc ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0]);

/**
 * The extension's event of one validated wire event (`now`: receive time, Unix ms; `apiKey` the user channel's,
 * compared with each maker order's owner).
 */
function toEvent(e: v.InferOutput<typeof eventSchema>, now: number, apiKey: string | undefined): ClobStreamEvent {
  const at = e.timestamp ? Number(e.timestamp) : now;
  switch (e.event_type) {
    case 'book': {
      const lv = (xs: { price: string; size: string }[]) => xs.map((l): ClobLevel => [l.price, l.size]);
      return {
        kind: 'book',
        at,
        tokenId: e.asset_id,
        market: e.market,
        bids: lv(e.bids).sort(byPrice(true)),
        asks: lv(e.asks).sort(byPrice(false)),
        ...(e.tick_size ? { tickSize: e.tick_size } : {}),
      };
    }
    case 'price_change':
      return {
        kind: 'price_change',
        at,
        market: e.market,
        changes: e.price_changes.map((c) => ({ tokenId: c.asset_id, side: c.side, price: c.price, size: c.size })),
      };
    case 'last_trade_price':
      return { kind: 'last_trade', at, tokenId: e.asset_id, price: e.price };
    case 'tick_size_change':
      return { kind: 'tick_size', at, tokenId: e.asset_id, tickSize: e.new_tick_size };
    case 'order':
      return {
        kind: 'order',
        at,
        order: {
          id: e.id,
          status: e.status ?? (e.type === 'CANCELLATION' ? 'CANCELED' : 'LIVE'),
          side: e.side,
          price: e.price,
          original_size: e.original_size,
          size_matched: e.size_matched,
          outcome: e.outcome,
          asset_id: e.asset_id,
        },
      };
    case 'trade':
      return {
        kind: 'trade',
        at,
        tokenId: e.asset_id,
        trade: venueTradeOf({ ...e, match_time: e.match_time ?? String(Math.floor(at / 1000)) }, apiKey),
      };
  }
}

/**
 * The events of one server frame (text). `undefined` when the frame is not JSON or not an event / array
 * of events; inside an array, an event that fails validation is left out and counted in `dropped`.
 */
function parseClobFrame(
  text: string,
  now: number,
  apiKey: string | undefined,
): { events: ClobStreamEvent[]; dropped: number } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const items = Array.isArray(raw) ? raw : [raw];
  const events: ClobStreamEvent[] = [];
  let dropped = 0;
  for (const item of items.slice(0, 10_000)) {
    const r = v.safeParse(eventSchema, item);
    if (r.success) events.push(toEvent(r.output, now, apiKey));
    else dropped += 1;
  }
  return events.length === 0 && dropped > 0 && !Array.isArray(raw) ? undefined : { events, dropped };
}

/**
 * A channel's state: `malformed` frames / events dropped, `reconnects` after the first live socket, `lastError` a short
 * code (`closed`, `stale`, `error`).
 */
export type ClobStreamStatus = {
  state: StreamState;
  lastEventAt: number | null;
  retryInMs: number | null;
  malformed: number;
  reconnects: number;
  lastError: string | null;
};

/** Timing, ms (defaults: the official client's, PROTOCOL.md §5.3). */
export type ClobStreamTiming = {
  baseDelayMs: number;
  maxDelayMs: number;
  pingEveryMs: number;
  checkEveryMs: number;
  staleAfterMs: number;
};
const DEFAULT_TIMING: ClobStreamTiming = {
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  pingEveryMs: 10_000,
  checkEveryMs: 5_000,
  staleAfterMs: 30_000,
};

/** The L2 API credentials of the user channel (secrets: they go into the auth frame only). */
export type ClobChannelAuth = { apiKey: string; secret: string; passphrase: string };

/** Options of `createClobChannel`: `url` the channel's (`…/ws/market` or `…/ws/user`); `auth` for the user channel. */
export type ClobChannelOptions = {
  url: string;
  channel: 'market' | 'user';
  auth?: ClobChannelAuth;
  WebSocket: WebSocketConstructor;
  onEvent: (event: ClobStreamEvent) => void;
  /** After a reconnect (not the first connect): the caller re-reads what the socket missed. */
  onResync?: (reason: 'reconnect') => void;
  onStatus?: (status: ClobStreamStatus) => void;
  /** Each `PING` sent (the channel's own every `pingEveryMs`, and `ping`'s). */
  onPing?: () => void;
  /** Each `PONG` received (the socket answers pings in the order sent). */
  onPong?: () => void;
  random?: () => number;
  now?: () => number;
  timing?: Partial<ClobStreamTiming>;
};

/**
 * A running channel: `start` / `stop`, `subscribe` / `unsubscribe` token ids (market channel; no-ops on
 * the user channel), the held ids, `status`, and `ping` (a `PING` now, when live; false otherwise).
 */
export type ClobChannel = {
  start: () => void;
  stop: () => void;
  subscribe: (ids: string[]) => void;
  unsubscribe: (ids: string[]) => void;
  assets: () => string[];
  status: () => ClobStreamStatus;
  ping: () => boolean;
};

/**
 * Creates a channel (not connected until `start`; the market channel also waits for a held id). Throws nothing;
 * failures show in `status()`.
 */
export function createClobChannel(opts: ClobChannelOptions): ClobChannel {
  const t: ClobStreamTiming = { ...DEFAULT_TIMING, ...opts.timing };
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const st: ClobStreamStatus = {
    state: 'down',
    lastEventAt: null,
    retryInMs: null,
    malformed: 0,
    reconnects: 0,
    lastError: null,
  };
  const assets = new Set<string>();
  let ws: WebSocketLike | null = null;
  let running = false;
  let attempts = 0;
  let everLive = false;
  let lastPong = 0;
  let intervals: ReturnType<typeof setInterval>[] = [];
  let retry: ReturnType<typeof setTimeout> | null = null;

  const emit = () => opts.onStatus?.({ ...st });
  const wanted = () => running && (opts.channel === 'user' || assets.size > 0);
  const clearTimers = () => {
    for (const x of intervals) clearInterval(x);
    intervals = [];
  };
  const drop = (reason: string) => {
    const old = ws;
    ws = null;
    clearTimers();
    try {
      old?.close(1000, reason);
    } catch {
      /* already closed */
    }
  };
  const send = (frame: unknown) =>
    ws?.readyState === 1 && ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));

  function fail(reason: string): void {
    drop(reason);
    if (!wanted()) return;
    st.lastError = reason;
    const delay = backoff(attempts, random(), t);
    attempts += 1;
    st.retryInMs = delay;
    st.state = 'down';
    emit();
    retry = setTimeout(() => {
      retry = null;
      st.retryInMs = null;
      connect();
    }, delay);
  }

  function onOpen(): void {
    if (opts.channel === 'user')
      send({
        auth: {
          apiKey: opts.auth?.apiKey ?? '',
          passphrase: opts.auth?.passphrase ?? '',
          secret: opts.auth?.secret ?? '',
        },
        type: 'user',
      });
    else send({ assets_ids: [...assets], custom_feature_enabled: false, type: 'market' });
    attempts = 0;
    st.lastError = null;
    lastPong = now();
    if (everLive) st.reconnects += 1;
    st.state = 'live';
    emit();
    intervals.push(setInterval(ping, t.pingEveryMs));
    intervals.push(setInterval(() => now() - lastPong > t.staleAfterMs && fail('stale'), t.checkEveryMs));
    if (everLive) opts.onResync?.('reconnect');
    everLive = true;
  }

  function ping(): boolean {
    if (!ws || ws.readyState !== 1 || st.state !== 'live') return false;
    send('PING');
    opts.onPing?.();
    return true;
  }

  function onMessage(raw: unknown): void {
    const text = typeof raw === 'string' ? raw : String(raw);
    if (text === 'PONG') {
      lastPong = now();
      opts.onPong?.();
      return;
    }
    const parsed = parseClobFrame(text, now(), opts.auth?.apiKey);
    if (!parsed) {
      st.malformed += 1;
      return;
    }
    st.malformed += parsed.dropped;
    for (const e of parsed.events) {
      st.lastEventAt = now();
      opts.onEvent(e);
    }
  }

  function connect(): void {
    if (!wanted() || ws) return;
    st.state = 'connecting';
    emit();
    let sock: WebSocketLike;
    try {
      sock = new opts.WebSocket(opts.url);
    } catch {
      fail('error');
      return;
    }
    ws = sock;
    sock.addEventListener('open', () => ws === sock && onOpen());
    sock.addEventListener('message', (ev) => ws === sock && onMessage(ev.data));
    sock.addEventListener('close', () => ws === sock && fail('closed'));
    sock.addEventListener('error', () => ws === sock && fail('error'));
  }

  function idle(): void {
    if (retry) clearTimeout(retry);
    retry = null;
    st.retryInMs = null;
    drop('idle');
    st.state = 'down';
    emit();
  }

  return {
    start() {
      if (running) return;
      running = true;
      connect();
    },
    stop() {
      running = false;
      idle();
    },
    subscribe(ids) {
      if (opts.channel !== 'market') return;
      const fresh = ids.filter((id) => v.is(tokenId, id) && !assets.has(id));
      if (fresh.length === 0) return;
      for (const id of fresh) assets.add(id);
      if (ws && st.state === 'live') send({ assets_ids: fresh, custom_feature_enabled: false, operation: 'subscribe' });
      else if (!retry) connect();
    },
    unsubscribe(ids) {
      const gone = ids.filter((id) => assets.delete(id));
      if (gone.length === 0) return;
      if (assets.size === 0) return idle();
      send({ assets_ids: gone, operation: 'unsubscribe' });
    },
    assets: () => [...assets],
    status: () => ({ ...st }),
    ping,
  };
}
