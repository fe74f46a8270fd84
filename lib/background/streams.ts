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
 *
 * This module decides when each stream is open; the streams themselves: the account's perps session
 * (`./perps-account-stream.ts`), the order-book user channel (`./clob-user-channel.ts`), the public channels
 * (`./market-feeds.ts`).
 */
import { BUILD_TRANSPORT_RULE, type TransportRule } from '../settings/transport';
import { guardedWebSocket } from '../http/transport';
import { activeAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import type { StreamPush } from '../messaging/streams';
import type { VenueReads } from '../reads/venue-reads';
import type { WebSocketConstructor } from '../streams/perps';
import type { PerpsSessionTransport } from '../perps/transport';
import type { MarketPush } from '../messaging/streams';
import type { Book, OrderView, Portfolio } from '../perps/wire';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import { clobChannelUrl } from '../settings';
import type { Lifetime } from './lifetime';
import { createMarketFeeds } from './market-feeds';
import { createClobUser, type ClobUserCredentials } from './clob-user-channel';
import { createPerpsAccountStreams } from './perps-account-stream';

/** How long a popup's `streams.status` call counts as "the popup is open" (ms). */
const POPUP_TTL_MS = 15_000;
/**
 * How often a lock is checked (ms, no I/O); the full need check runs every 10th tick (5 s), on each `streams.status`
 * and when a grant is made or ends (`reconcile`, called by the composition).
 */
const TICK_MS = 500;

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

/**
 * Whether `account` has open orders at either venue, read over REST (perps open orders with the proxy
 * headers, weight as `PERPS_READS.openOrders`; order-book `GET /data/orders`): once per stream key
 * and worker start, so that a stream kept only by open orders comes back after the MV3 worker
 * restarted. A read that fails (no proxy, no API credentials, a silent venue) counts as none.
 */
async function restingAtVenue(
  reads: Pick<VenueReads, 'perpsRead' | 'clobOpenOrders'>,
  account: `0x${string}`,
): Promise<boolean> {
  const [perps, clob] = await Promise.all([
    reads.perpsRead(account, 'openOrders').catch(() => []),
    reads.clobOpenOrders(account).catch(() => ({ data: [] })),
  ]);
  return perps.length > 0 || clob.data.length > 0;
}

/** Starts the need check (every `TICK_MS`); see the module comment. */
export function createBackgroundStreams(d: BackgroundStreamsDeps): BackgroundStreams {
  const now = d.now ?? Date.now;
  const Ws = streamsWebSocket(d);
  let popupSeenAt = -Infinity;
  let watching: { perpsIid?: number; clobToken?: string } = {};
  let clobUser: { key: string; account: `0x${string}`; feed: ReturnType<typeof createClobUser> } | undefined;
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
  const perps = createPerpsAccountStreams({ Ws, now, reads: d.reads, lifetime: d.lifetime, push });

  function close(): void {
    closeClob();
    perps.close();
  }
  function closeClob(): void {
    if (!clobUser) return;
    clobUser.feed.stop();
    clobUser = undefined;
    d.lifetime.release('streams-clob');
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
    const held = perps.current();
    if (held && held.key !== key) perps.close();
    if (clobUser && clobUser.key !== key) closeClob();
    if (d.vault.unlocked) {
      // Cheapest first: the grants are decrypted only when neither the popup nor an open order holds the stream.
      let wanted = popupOpen || perps.hasOpenOrders() || !!clobUser?.feed.hasOpen() || (await d.grants.anyLive());
      // After a worker restart the open orders known in memory are gone: read them once at the venues.
      if (!wanted && startChecked !== key) {
        startChecked = key;
        wanted = await restingAtVenue(d.reads, active.address);
      }
      if (!wanted) return close();
      await openClob(active.address, key, clobChannelUrl(settings, 'user'));
      // a trading session: its grants' orders only
    } else if (!((await d.grants.anyLive()) && (await keptBySession(d.vault, active.address, now())))) return close();
    if (perps.current()) return;
    let auth: { proxy: string; secret: string };
    try {
      const p = await d.vault.proxyFor(active.address);
      auth = { proxy: p.info.proxy, secret: p.secret };
    } catch {
      return; // no proxy yet: nothing to authenticate with
    }
    if (sessionAllowed() && !perps.current()) perps.open(active.address, key, settings.perpsWsUrl, auth);
  }

  /** Runs one reconcile after the previous (never two at once, so never two sockets). */
  const reconcile = () => (busy = busy.then(reconcileNow).catch(() => undefined));

  let ticks = 0;
  const timer = setInterval(() => {
    if (clobUser && !d.vault.unlocked) closeClob();
    if (perps.current() && !sessionAllowed()) perps.close();
    const c = perps.current();
    if (c && !d.vault.unlocked)
      void keptBySession(d.vault, c.account, now()).then(
        (kept) => kept || (perps.current() === c && !d.vault.unlocked && perps.close()),
      );
    // The full check (database reads; the grants' decryption only when the popup is away) every 10th tick: 5 s.
    if (++ticks % 10 === 0) void reconcile();
  }, TICK_MS);

  return {
    async status() {
      popupSeenAt = now();
      await reconcile();
      const streams: StreamStatusView[] = [];
      const current = perps.current();
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
      // The account as the live session holds it, so the popup skips its first reads.
      const perpsAccount = perps.liveAccount(w.account);
      return { perpsBook: w.perpsIid === undefined ? null : market.book(w.perpsIid), perpsAccount };
    },
    reconcile,
    session: (account, perpsUrl) => perps.session(account, perpsUrl),
    stop() {
      clearInterval(timer);
      close();
    },
    onPush: (listener) => void listeners.push(listener),
  };
}
