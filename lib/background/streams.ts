/**
 * The background's live streams: one perps session stream for the active account, while
 * the vault is unlocked **and** something needs it — the popup is open (it called `streams.status`
 * in the last `POPUP_TTL_MS`), a grant is live, or the account has open orders (as the stream and the
 * last REST resync know them). It is closed on lock (panic locks too), when the active account or the
 * perps URL changes, and when nothing needs it any more. In a trading session (auto-lock with a live grant)
 * only the perps session stays, while a grant is live and the account is one the session kept: it carries the grants'
 * orders as it does unlocked, and pushes nothing (the order-book user channel closes).
 *
 * The proxy and its secret stay here: the stream client (`lib/streams/perps.ts`) gets them, the popup
 * gets only derived data — orders, fills and the portfolio in the REST reads' shapes — broadcast as
 * `STREAM_PUSH` messages (`lib/messaging/streams.ts`). After a reconnect or a gap in `sq` (and once
 * when a stream starts) the open orders and the portfolio are re-read over REST and pushed as `resync`.
 * While the stream is held open the background is kept alive (`Lifetime.hold('streams')`; Chrome also
 * counts WebSocket traffic — the 25 s ping — as activity since Chrome 116).
 *
 * The order-book user channel follows the same rule for the active account with API credentials (the
 * key, secret and passphrase stay here; pushes carry REST-shaped order rows, and each trade as the person
 * reads it — the account's own order in it, maker or taker, `ownClobTrade`). The public
 * channels follow what the open popup shows (`streams.watch`): the perps instrument's `book`, `bbo` and
 * `tickers` on an unauthenticated perps socket, the order-book token on the market channel; both close
 * `POPUP_TTL_MS` after the popup's last call. The last perps book per instrument is kept with its
 * receive time (the popup's first book); a gap in a book's `sq` or a reconnect re-reads it over REST.
 * A REST resync never puts an order back in time: events that arrived while it was read win (`Recency`).
 */
import { BUILD_TRANSPORT_RULE, type TransportRule } from '../settings/transport';
import { guardedWebSocket } from '../http/transport';
import { coalesced, type Coalesced } from '../streams/coalesce';
import { activeAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import type { StreamPush } from '../messaging/streams';
import { ownClobTrade } from '../messaging/reads';
import type { VenueReads } from '../reads/venue-reads';
import { createPerpsStream, type PerpsStream, type WebSocketConstructor } from '../streams/perps';
import type { PerpsSessionTransport } from '../perps/transport';
import type { PerpsMarketEvent, PerpsStreamEvent } from '../streams/perps-frames';
import { createClobChannel, type ClobChannel, type ClobStreamEvent } from '../streams/clob';
import { ClobBooks, Recency } from '../streams/books';
import type { MarketPush } from '../messaging/streams';
import type { Book, OrderView, Portfolio } from '../perps/wire';
import type { ClobOpenOrder } from '../clob/wire';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import { clobChannelUrl } from '../settings';
import type { Lifetime } from './lifetime';

/** How long a popup's `streams.status` call counts as "the popup is open" (ms). */
const POPUP_TTL_MS = 15_000;
/**
 * How often a lock is checked (ms, no I/O); the full need check runs every 10th tick (5 s), on each `streams.status`
 * and when a grant is made or ends (`reconcile`, called by the composition).
 */
const TICK_MS = 500;
/** Order statuses that leave an order on the book (it keeps the stream wanted). */
const OPEN_STATUSES = new Set(['accepted', 'open', 'partial', 'untriggered', 'armed']);

/** What `createBackgroundStreams` needs; `WebSocket` defaults to the worker's, `now` to `Date.now`. */
export type BackgroundStreamsDeps = {
  vault: Vault;
  db: VaultDb;
  /** The venue reads the streams' snapshots and the market feeds' books come from. */
  reads: Pick<VenueReads, 'perpsRead' | 'perpsBook' | 'clobOpenOrders'>;
  grants: GrantService;
  lifetime: Lifetime;
  settings: () => Promise<{ perpsUrl: string; perpsWsUrl: string; clobWsUrl: string }>;
  broadcast: (push: StreamPush | MarketPush) => void;
  WebSocket?: WebSocketConstructor;
  now?: () => number;
  /**
   * Which transports a stream may open (`lib/settings/transport.ts`): a URL in clear opens nothing. Default this
   * build's.
   */
  transportRule?: TransportRule;
};

/** One stream's state as `streams.status` answers it. */
type StreamStatusView = {
  venue: 'perps' | 'clob';
  account: `0x${string}`;
  state: 'live' | 'connecting' | 'down';
  lastEventAt: number | null;
};
type State = StreamStatusView['state'];

/**
 * The running streams: `status` (the `streams.status` answer; marks the popup open), `watch` (`streams.watch`),
 * `reconcile`, `stop`; `session(account, perpsUrl)` the perps session of `account` at `perpsUrl` for sending commands,
 * when this background holds one (live or not: the send checks), else undefined.
 */
export type BackgroundStreams = {
  status: () => Promise<{ streams: StreamStatusView[]; market: { perps: State; clob: State } }>;
  watch: (w: { perpsIid?: number; clobToken?: string; account?: string }) => Promise<{
    perpsBook: { book: Book; ageMs: number } | null;
    perpsAccount: { portfolio: Portfolio; openOrders: OrderView[] } | null;
  }>;
  session: (account: string, perpsUrl: string) => PerpsSessionTransport | undefined;
  reconcile: () => Promise<void>;
  stop: () => void;
  /** Also hands every push to `listener` (the notifications, `./notifications.ts`), after it is broadcast. */
  onPush: (listener: (push: StreamPush) => void) => void;
};

/** What the public feeds need from the background. */
type MarketDeps = {
  Ws: WebSocketConstructor | undefined;
  now: () => number;
  broadcast: (p: MarketPush['push']) => void;
  perpsBook: (iid: number) => Promise<Book>;
};

/**
 * The public channels the open popup watches: an unauthenticated perps socket for the instrument's
 * book, bbo and tickers, and the order-book market channel for the token. `set` is called on each
 * reconcile with what is wanted now (undefined: nothing) and the REST bases (a change of base reopens).
 */
function createMarketFeeds(d: MarketDeps) {
  const books = new Map<number, { book: Book; at: number }>();
  const clobBooks = new ClobBooks();
  let perps: { url: string; iid: number; stream: PerpsStream } | undefined;
  let clob: { url: string; channel: ClobChannel } | undefined;
  const state: { perps: State; clob: State } = { perps: 'down', clob: 'down' };
  const status = (venue: 'perps' | 'clob', s: State) => {
    if (state[venue] === s) return;
    state[venue] = s;
    d.broadcast({ kind: 'status', venue, state: s });
  };
  const keepBook = (iid: number, book: Book) => {
    const at = d.now();
    books.set(iid, { book, at });
    d.broadcast({ kind: 'perpsBook', iid, book, at });
  };
  /** The shown instrument's book read again after a gap (coalesced: a flood of gaps costs one read per 5 s). */
  const bookResync = coalesced(async () => {
    const iid = perps?.iid;
    if (iid === undefined) return;
    const b = await d.perpsBook(iid);
    if (perps?.iid === iid) keepBook(iid, b);
  });

  function onPerps(e: PerpsStreamEvent): void {
    if (!isMarket(e)) return;
    if (e.kind === 'book') keepBook(e.iid, e.book);
    else if (e.kind === 'bbo') d.broadcast({ kind: 'perpsBbo', iid: e.iid, bid: e.bid, ask: e.ask });
    else if (e.kind === 'ticker') d.broadcast({ kind: 'perpsTicker', ticker: [e.ticker] });
  }
  function onClob(e: ClobStreamEvent): void {
    if (e.kind === 'tick_size') d.broadcast({ kind: 'clobTick', tokenId: e.tokenId, tickSize: e.tickSize });
    for (const tokenId of clobBooks.apply(e)) {
      const view = clobBooks.view(tokenId);
      if (view) d.broadcast({ kind: 'clobBook', tokenId, ...view });
    }
  }

  function setPerps(url: string | undefined, iid: number | undefined): void {
    if (perps && (url === undefined || iid === undefined || perps.url !== url)) {
      perps.stream.stop();
      perps = undefined;
      status('perps', 'down');
    }
    if (url === undefined || iid === undefined || !d.Ws) return;
    const chs = [`book::${iid}`, `bbo::${iid}`, 'tickers::all'];
    if (perps) {
      if (perps.iid !== iid) perps.stream.setPublic(chs);
      perps.iid = iid;
      return;
    }
    const stream = createPerpsStream({
      wsUrl: url,
      publicChannels: chs,
      WebSocket: d.Ws,
      now: d.now,
      onEvent: (e) => onPerps(e),
      onResync: () => bookResync.request(),
      onStatus: (st) => status('perps', st.state),
    });
    perps = { url, iid, stream };
    stream.start();
  }

  function setClob(url: string | undefined, token: string | undefined): void {
    if (clob && (url === undefined || token === undefined || clob.url !== url)) {
      clob.channel.stop();
      clob = undefined;
      status('clob', 'down');
    }
    if (url === undefined || token === undefined || !d.Ws) return;
    if (!clob) {
      const channel = createClobChannel({
        url,
        channel: 'market',
        WebSocket: d.Ws,
        now: d.now,
        onEvent: onClob,
        onStatus: (st) => status('clob', st.state),
      });
      clob = { url, channel };
      channel.start();
    }
    const old = clob.channel.assets().filter((a) => a !== token);
    clob.channel.subscribe([token]);
    if (old.length) clob.channel.unsubscribe(old);
    clobBooks.retain(new Set([token]));
  }

  return {
    /**
     * The last book of `iid` with its age (ms), or null. While the live public socket follows `iid` the
     * book is current however long ago it last changed (age 0): a change would have been pushed.
     */
    book(iid: number): { book: Book; ageMs: number } | null {
      const b = books.get(iid);
      if (!b) return null;
      return { book: b.book, ageMs: perps?.iid === iid && state.perps === 'live' ? 0 : Math.max(0, d.now() - b.at) };
    },
    set(
      perpsWs: string | undefined,
      iid: number | undefined,
      clobWs: string | undefined,
      token: string | undefined,
    ): void {
      setPerps(perpsWs, iid);
      setClob(clobWs, token);
    },
    state: () => ({ ...state }),
  };
}

const isMarket = (e: PerpsStreamEvent): e is PerpsMarketEvent =>
  e.kind === 'book' || e.kind === 'bbo' || e.kind === 'ticker' || e.kind === 'statistic';

/** An account's order-book API credentials and the addresses its orders name (`Vault.clobCredentials`). */
type ClobUserCredentials = {
  apiKey: string;
  secret: string;
  passphrase: string;
  info: { account: string; funder: string | null };
};

/**
 * The order-book user channel of one account: open-order tracking (it keeps the channel wanted) and
 * pushes. A trade is pushed as the person reads it (`ownClobTrade`): the account's own order in it, found
 * by the API key (compared in the channel client) or the account's addresses (the owner, the funder).
 */
function createClobUser(
  d: {
    Ws: WebSocketConstructor;
    now: () => number;
    push: (p: StreamPush['push']) => void;
    openOrders: () => Promise<{ data: ClobOpenOrder[] }>;
  },
  url: string,
  creds: ClobUserCredentials,
) {
  const auth = { apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase };
  const addresses = creds.info.funder ? [creds.info.account, creds.info.funder] : [creds.info.account];
  const open = new Set<string>();
  const recency = new Recency<string, ClobOpenOrder>();
  let closed = false;
  async function resync(): Promise<void> {
    const mark = recency.mark();
    try {
      const snap = await d.openOrders();
      if (closed) return;
      const merged = recency.merge(snap.data, (o) => o.id, mark);
      open.clear();
      for (const o of merged) open.add(o.id);
      d.push({ kind: 'clobResync', openOrders: merged });
    } catch {
      /* the next reconnect retries; the popup reads after its own orders */
    }
  }
  const channel = createClobChannel({
    url,
    channel: 'user',
    auth,
    WebSocket: d.Ws,
    now: d.now,
    onEvent: (e) => {
      if (e.kind === 'order') {
        const resting = e.order.status === 'LIVE' || e.order.status === 'DELAYED';
        if (resting) open.add(e.order.id);
        else open.delete(e.order.id);
        recency.note(e.order.id, e.order, resting);
        d.push({ kind: 'clobOrder', order: e.order });
      } else if (e.kind === 'trade') d.push({ kind: 'clobTrade', trade: ownClobTrade(e.trade, addresses) });
    },
    onResync: () => resyncs.request(),
    onStatus: (st) => d.push({ kind: 'clobStatus', state: st.state }),
  });
  const resyncs = coalesced(resync);
  channel.start();
  resyncs.request();
  return {
    channel,
    hasOpen: () => open.size > 0,
    stop() {
      closed = true;
      resyncs.stop();
      channel.stop();
    },
  };
}

/**
 * Whether the perps session stream may be open: the vault unlocked, or a trading session (auto-lock with a
 * live grant), where it carries the grants' orders for an account the session kept (`keptBySession`) and
 * pushes nothing.
 */
function streamAllowed(vault: Vault): boolean {
  return vault.unlocked || vault.sessionLive;
}

/**
 * Whether `account`'s perps session stream may stay open at `now` (Unix ms): unlocked, yes; in a trading
 * session only when the session kept an unexpired proxy key of the account (the session's kept list, read
 * from memory: the answer never waits behind another vault call, so a stream the session did not keep
 * closes within one tick); locked, no.
 */
async function keptBySession(vault: Vault, account: string, now: number): Promise<boolean> {
  if (vault.unlocked) return true;
  if (!vault.sessionLive) return false;
  const kept = await vault.listProxies(account); // in a trading session: the kept keys only, no vault queue
  return kept.some((p) => p.expiry > now) && streamAllowed(vault);
}

/**
 * The streams' WebSocket constructor (`d.WebSocket`, else the worker's; undefined when there is none),
 * held to the transport rule: every socket carries a proxy secret or API credentials, or feeds the books a
 * grant's band is checked against, so a URL in clear is refused at the constructor (a failed open).
 */
export function streamsWebSocket(
  d: Pick<BackgroundStreamsDeps, 'WebSocket' | 'transportRule'>,
): WebSocketConstructor | undefined {
  const Ws = d.WebSocket ?? globalThis.WebSocket;
  return Ws ? guardedWebSocket(Ws, d.transportRule ?? BUILD_TRANSPORT_RULE) : undefined;
}

/** Starts the need check (every `TICK_MS`); see the module comment. */
export function createBackgroundStreams(d: BackgroundStreamsDeps): BackgroundStreams {
  const now = d.now ?? Date.now;
  const Ws = streamsWebSocket(d);
  let popupSeenAt = -Infinity;
  let watching: { perpsIid?: number; clobToken?: string } = {};
  let current: { key: string; account: `0x${string}`; stream: PerpsStream; resyncs: Coalesced } | undefined;
  let clobUser: { key: string; account: `0x${string}`; feed: ReturnType<typeof createClobUser> } | undefined;
  const openOrders = new Set<number>();
  const recency = new Recency<number, OrderView>();
  /**
   * The account's state as the live session last told it (the popup opens on it without REST reads); the current
   * stream's key.
   */
  let held: { key: string; portfolio?: Portfolio; orders: Map<number, OrderView> } | undefined;
  let busy: Promise<void> = Promise.resolve();
  /** The stream key whose venue open orders were read once since this worker started (`restingAtVenue`). */
  let startChecked: string | undefined;

  const listeners: ((push: StreamPush) => void)[] = [];
  const sessionAllowed = () => streamAllowed(d.vault);
  // In a trading session the account's stream events go nowhere: the popup and the notifications get what they got with
  // the stream closed.
  const push = (account: `0x${string}`, p: StreamPush['push']) =>
    d.vault.unlocked && [d.broadcast, ...listeners].forEach((l) => l({ type: 'streams.push', account, push: p }));
  const market = createMarketFeeds({
    Ws,
    now,
    broadcast: (p) => d.broadcast({ type: 'streams.market', push: p }),
    perpsBook: (iid) => d.reads.perpsBook(iid),
  });

  function close(): void {
    closeClob();
    closePerps();
  }
  function closePerps(): void {
    if (!current) return;
    current.stream.stop();
    current.resyncs.stop();
    current = undefined;
    held = undefined;
    openOrders.clear();
    d.lifetime.release('streams');
  }
  function closeClob(): void {
    if (!clobUser) return;
    clobUser.feed.stop();
    clobUser = undefined;
    d.lifetime.release('streams-clob');
  }

  async function resync(account: `0x${string}`, key: string): Promise<void> {
    const mark = recency.mark();
    try {
      const [orders, portfolio] = await Promise.all([
        d.reads.perpsRead(account, 'openOrders'),
        d.reads.perpsRead(account, 'portfolio'),
      ]);
      if (current?.key !== key) return;
      // Events that arrived while the snapshot was read are newer than it (the snapshot race).
      const merged = recency.merge(orders, (o) => o.order_id, mark);
      openOrders.clear();
      for (const o of merged) openOrders.add(o.order_id);
      held = { key, portfolio, orders: new Map(merged.map((o) => [o.order_id, o])) };
      push(account, { kind: 'resync', openOrders: merged, portfolio });
    } catch {
      /* the popup's REST polling covers it; the next gap or reconnect retries */
    }
  }

  function onEvent(account: `0x${string}`, e: PerpsStreamEvent): void {
    const mine = held?.key === current?.key ? held : undefined;
    if (e.kind === 'order') {
      const resting = OPEN_STATUSES.has(e.order.status);
      if (resting) openOrders.add(e.order.order_id);
      else openOrders.delete(e.order.order_id);
      if (resting) mine?.orders.set(e.order.order_id, e.order);
      else mine?.orders.delete(e.order.order_id);
      recency.note(e.order.order_id, e.order, resting);
      push(account, { kind: 'order', order: e.order });
    } else if (e.kind === 'fills') push(account, { kind: 'fills', fills: e.fills });
    else if (e.kind === 'portfolio') {
      if (mine) mine.portfolio = e.portfolio;
      push(account, { kind: 'portfolio', portfolio: e.portfolio });
    }
  }
  function open(account: `0x${string}`, key: string, wsUrl: string, auth: { proxy: string; secret: string }): void {
    if (!Ws) return;
    const stream = createPerpsStream({
      wsUrl,
      proxy: auth.proxy,
      secret: auth.secret,
      WebSocket: Ws,
      now,
      onEvent: (e) => current?.key === key && onEvent(account, e),
      onResync: () => resyncs.request(),
      onStatus: (s) =>
        current?.key === key && push(account, { kind: 'status', state: s.state, lastEventAt: s.lastEventAt }),
    });
    const resyncs = coalesced(() => resync(account, key));
    current = { key, account, stream, resyncs };
    d.lifetime.hold('streams');
    stream.start();
    resyncs.request();
  }

  /** Opens the account's order-book user channel (its API credentials read here, never pushed). */
  async function openClob(account: `0x${string}`, key: string, url: string): Promise<void> {
    if (!Ws || clobUser) return;
    let creds: ClobUserCredentials;
    try {
      creds = await d.vault.clobCredentials(account);
    } catch {
      return; // no API credentials: nothing to authenticate with
    }
    if (!d.vault.unlocked || clobUser) return;
    const feed = createClobUser(
      {
        Ws,
        now,
        push: (p) => clobUser?.key === key && push(account, p),
        openOrders: () => d.reads.clobOpenOrders(account),
      },
      url,
      creds,
    );
    clobUser = { key, account, feed };
    d.lifetime.hold('streams-clob');
  }

  async function reconcileNow(): Promise<void> {
    const popupOpen = now() - popupSeenAt < POPUP_TTL_MS;
    const settings = await d.settings();
    market.set(
      popupOpen ? settings.perpsWsUrl : undefined,
      watching.perpsIid,
      popupOpen ? clobChannelUrl(settings, 'market') : undefined,
      watching.clobToken,
    );
    if (!d.vault.unlocked) closeClob();
    if (!sessionAllowed()) return close();
    const active = await activeAccount(d.db, d.vault);
    if (!active || !sessionAllowed()) return close();
    const key = `${settings.perpsUrl}|${settings.perpsWsUrl}|${settings.clobWsUrl}|${active.address.toLowerCase()}`;
    if (current && current.key !== key) closePerps();
    if (clobUser && clobUser.key !== key) closeClob();
    if (d.vault.unlocked) {
      // Cheapest first: the grants are decrypted only when neither the popup nor an open order holds the stream.
      let wanted = popupOpen || openOrders.size > 0 || !!clobUser?.feed.hasOpen() || (await d.grants.anyLive());
      // After a worker restart the open orders known in memory are gone: read them once at the venues.
      if (!wanted && startChecked !== key) {
        startChecked = key;
        wanted = await restingAtVenue(active.address);
      }
      if (!wanted) return close();
      await openClob(active.address, key, clobChannelUrl(settings, 'user'));
      // a trading session: its grants' orders only
    } else if (!((await d.grants.anyLive()) && (await keptBySession(d.vault, active.address, now())))) return close();
    if (current) return;
    let auth: { proxy: string; secret: string };
    try {
      const p = await d.vault.proxyFor(active.address);
      auth = { proxy: p.info.proxy, secret: p.secret };
    } catch {
      return; // no proxy yet: nothing to authenticate with
    }
    if (sessionAllowed() && !current) open(active.address, key, settings.perpsWsUrl, auth);
  }

  /**
   * Whether `account` has open orders at either venue, read over REST (perps open orders with the proxy
   * headers, weight as `PERPS_READS.openOrders`; order-book `GET /data/orders`): once per stream key
   * and worker start, so that a stream kept only by open orders comes back after the MV3 worker
   * restarted. A read that fails (no proxy, no API credentials, a silent venue) counts as none.
   */
  async function restingAtVenue(account: `0x${string}`): Promise<boolean> {
    const [perps, clob] = await Promise.all([
      d.reads.perpsRead(account, 'openOrders').catch(() => []),
      d.reads.clobOpenOrders(account).catch(() => ({ data: [] })),
    ]);
    return perps.length > 0 || clob.data.length > 0;
  }

  /** Runs one reconcile after the previous (never two at once, so never two sockets). */
  const reconcile = () => (busy = busy.then(reconcileNow).catch(() => undefined));

  let ticks = 0;
  const timer = setInterval(() => {
    if (clobUser && !d.vault.unlocked) closeClob();
    if (current && !sessionAllowed()) closePerps();
    const c = current;
    if (c && !d.vault.unlocked)
      void keptBySession(d.vault, c.account, now()).then(
        (kept) => kept || (current === c && !d.vault.unlocked && closePerps()),
      );
    // The full check (database reads; the grants' decryption only when the popup is away) every 10th tick: 5 s.
    if (++ticks % 10 === 0) void reconcile();
  }, TICK_MS);

  return {
    async status() {
      popupSeenAt = now();
      await reconcile();
      const streams: StreamStatusView[] = [];
      if (current) {
        const s = current.stream.status();
        streams.push({ venue: 'perps', account: current.account, state: s.state, lastEventAt: s.lastEventAt });
      }
      if (clobUser) {
        const s = clobUser.feed.channel.status();
        streams.push({ venue: 'clob', account: clobUser.account, state: s.state, lastEventAt: s.lastEventAt });
      }
      return { streams, market: market.state() };
    },
    async watch(w) {
      popupSeenAt = now();
      // Each store names what it shows; a field left out keeps the other store's choice.
      watching = {
        ...watching,
        ...(w.perpsIid === undefined ? {} : { perpsIid: w.perpsIid }),
        ...(w.clobToken === undefined ? {} : { clobToken: w.clobToken }),
      };
      void reconcile(); // the book held now answers at once; the sockets follow
      // The account as the live session holds it: current (every change is pushed while live), so the popup skips its
      // first reads.
      const c = current;
      const live =
        c &&
        held?.key === c.key &&
        held.portfolio &&
        w.account?.toLowerCase() === c.account.toLowerCase() &&
        c.stream.status().state === 'live'
          ? held
          : undefined;
      return {
        perpsBook: w.perpsIid === undefined ? null : market.book(w.perpsIid),
        perpsAccount: live?.portfolio ? { portfolio: live.portfolio, openOrders: [...live.orders.values()] } : null,
      };
    },
    reconcile,
    // The key also names the order-book URL: the session is the one at this perps URL for this account.
    session: (account, perpsUrl) =>
      current && current.key.startsWith(`${perpsUrl}|`) && current.account.toLowerCase() === account.toLowerCase()
        ? current.stream
        : undefined,
    stop() {
      clearInterval(timer);
      close();
    },
    onPush: (listener) => void listeners.push(listener),
  };
}
