/**
 * The background's live streams (issue #22): one perps session stream for the active account, while
 * the vault is unlocked **and** something needs it — the popup is open (it called `streams.status`
 * in the last `POPUP_TTL_MS`), a grant is live, or the account has open orders (as the stream and the
 * last REST resync know them). It is closed on lock (panic locks too), when the active account or the
 * perps URL changes, and when nothing needs it any more.
 *
 * The proxy and its secret stay here: the stream client (`lib/streams/perps.ts`) gets them, the popup
 * gets only derived data — orders, fills and the portfolio in the REST reads' shapes — broadcast as
 * `STREAM_PUSH` messages (`lib/messaging/streams.ts`). After a reconnect or a gap in `sq` (and once
 * when a stream starts) the open orders and the portfolio are re-read over REST and pushed as `resync`.
 * While the stream is held open the background is kept alive (`Lifetime.hold('streams')`; Chrome also
 * counts WebSocket traffic — the 25 s ping — as activity since Chrome 116).
 */
import { activeAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import type { StreamPush } from '../messaging/streams';
import type { SigningService } from '../signer/service';
import { createPerpsStream, type PerpsStream, type WebSocketConstructor } from '../streams/perps';
import type { PerpsStreamEvent } from '../streams/perps-frames';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { Lifetime } from './lifetime';

/** How long a popup's `streams.status` call counts as "the popup is open" (ms). */
const POPUP_TTL_MS = 15_000;
/** How often a lock is checked (ms, no I/O); the full need check runs every 10th tick (5 s) and on each `streams.status`. */
const TICK_MS = 500;
/** Order statuses that leave an order on the book (it keeps the stream wanted). */
const OPEN_STATUSES = new Set(['accepted', 'open', 'partial', 'untriggered', 'armed']);

/** What `createBackgroundStreams` needs; `WebSocket` defaults to the worker's, `now` to `Date.now`. */
export type BackgroundStreamsDeps = {
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  grants: GrantService;
  lifetime: Lifetime;
  settings: () => Promise<{ perpsWsUrl: string }>;
  broadcast: (push: StreamPush) => void;
  WebSocket?: WebSocketConstructor;
  now?: () => number;
};

/** One stream's state as `streams.status` answers it. */
type StreamStatusView = { venue: 'perps'; account: `0x${string}`; state: 'live' | 'connecting' | 'down'; lastEventAt: number | null };

/** The running streams: `status` (the `streams.status` answer; marks the popup open), `reconcile`, `stop`. */
export type BackgroundStreams = {
  status: () => Promise<{ streams: StreamStatusView[] }>;
  reconcile: () => Promise<void>;
  stop: () => void;
};

/** Starts the need check (every `TICK_MS`); see the module comment. */
export function createBackgroundStreams(d: BackgroundStreamsDeps): BackgroundStreams {
  const now = d.now ?? Date.now;
  const Ws = d.WebSocket ?? globalThis.WebSocket;
  let popupSeenAt = -Infinity;
  let current: { key: string; account: `0x${string}`; stream: PerpsStream } | undefined;
  const openOrders = new Set<number>();
  let busy: Promise<void> = Promise.resolve();

  const push = (account: `0x${string}`, p: StreamPush['push']) => d.broadcast({ type: 'streams.push', account, push: p });

  function close(): void {
    if (!current) return;
    current.stream.stop();
    current = undefined;
    openOrders.clear();
    d.lifetime.release('streams');
  }

  async function resync(account: `0x${string}`, key: string): Promise<void> {
    try {
      const [orders, portfolio] = await Promise.all([d.service.perpsRead(account, 'openOrders'), d.service.perpsRead(account, 'portfolio')]);
      if (current?.key !== key) return;
      openOrders.clear();
      for (const o of orders) openOrders.add(o.order_id);
      push(account, { kind: 'resync', openOrders: orders, portfolio });
    } catch {
      /* the popup's REST polling covers it; the next gap or reconnect retries */
    }
  }

  function onEvent(account: `0x${string}`, e: PerpsStreamEvent): void {
    if (e.kind === 'order') {
      if (OPEN_STATUSES.has(e.order.status)) openOrders.add(e.order.order_id);
      else openOrders.delete(e.order.order_id);
      push(account, { kind: 'order', order: e.order });
    } else if (e.kind === 'fills') push(account, { kind: 'fills', fills: e.fills });
    else if (e.kind === 'portfolio') push(account, { kind: 'portfolio', portfolio: e.portfolio });
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
      onResync: () => void resync(account, key),
      onStatus: (s) => current?.key === key && push(account, { kind: 'status', state: s.state, lastEventAt: s.lastEventAt }),
    });
    current = { key, account, stream };
    d.lifetime.hold('streams');
    stream.start();
    void resync(account, key);
  }

  async function reconcileNow(): Promise<void> {
    if (!d.vault.unlocked) return close();
    const active = await activeAccount(d.db, d.vault);
    if (!active || !d.vault.unlocked) return close();
    const { perpsWsUrl } = await d.settings(); // the setting (issue #22 presets): the venue's REST and WS hosts differ
    const key = `${perpsWsUrl}|${active.address.toLowerCase()}`;
    if (current && current.key !== key) close();
    // Cheapest first: the grants are decrypted only when neither the popup nor an open order holds the stream.
    const wanted = now() - popupSeenAt < POPUP_TTL_MS || openOrders.size > 0 || (await d.grants.anyLive());
    if (!wanted) return close();
    if (current) return;
    let auth: { proxy: string; secret: string };
    try {
      const p = await d.vault.proxyFor(active.address);
      auth = { proxy: p.info.proxy, secret: p.secret };
    } catch {
      return; // no proxy yet: nothing to authenticate with
    }
    if (d.vault.unlocked && !current) open(active.address, key, perpsWsUrl, auth);
  }

  /** Runs one reconcile after the previous (never two at once, so never two sockets). */
  const reconcile = () => (busy = busy.then(reconcileNow).catch(() => undefined));

  let ticks = 0;
  const timer = setInterval(() => {
    if (current && !d.vault.unlocked) close();
    // The full check (database reads; the grants' decryption only when the popup is away) every 10th tick: 5 s.
    if (++ticks % 10 === 0) void reconcile();
  }, TICK_MS);

  return {
    async status() {
      popupSeenAt = now();
      await reconcile();
      if (!current) return { streams: [] };
      const s = current.stream.status();
      return { streams: [{ venue: 'perps', account: current.account, state: s.state, lastEventAt: s.lastEventAt }] };
    },
    reconcile,
    stop() {
      clearInterval(timer);
      close();
    },
  };
}
