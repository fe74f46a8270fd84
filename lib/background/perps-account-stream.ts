/**
 * The perps session stream of the active account, for `createBackgroundStreams` (./streams.ts), which
 * decides when it is open: the stream itself (the proxy and its secret stay here), the open orders it knows
 * (they keep the stream wanted), the account's state as the live session last told it (the popup opens on
 * it without REST reads), and the REST resync of the open orders and the portfolio after a start, a
 * reconnect or a gap in `sq`. A resync never puts an order back in time: events that arrived while it was
 * read win (`Recency`).
 */
import { coalesced, type Coalesced } from '../streams/coalesce';
import { Recency } from '../streams/books';
import { createPerpsStream, type PerpsStream, type WebSocketConstructor } from '../streams/perps';
import type { PerpsSessionTransport } from '../perps/transport';
import type { PerpsStreamEvent } from '../streams/perps-frames';
import type { StreamPush } from '../messaging/streams';
import type { VenueReads } from '../reads/venue-reads';
import type { OrderView, Portfolio } from '../perps/wire';
import type { Lifetime } from './lifetime';

/** Order statuses that leave an order on the book (it keeps the stream wanted). */
const OPEN_STATUSES = new Set(['accepted', 'open', 'partial', 'untriggered', 'armed']);

/** The stream held open: its key (the URLs and the account, lowercase), the account, the client, its resyncs. */
type PerpsAccountStream = { key: string; account: `0x${string}`; stream: PerpsStream; resyncs: Coalesced };

/** What the account's perps stream needs from the background; `push` is the account's stream push. */
type PerpsAccountDeps = {
  Ws: WebSocketConstructor | undefined;
  now: () => number;
  reads: Pick<VenueReads, 'perpsRead'>;
  lifetime: Pick<Lifetime, 'hold' | 'release'>;
  push: (account: `0x${string}`, p: StreamPush['push']) => void;
};

/**
 * One perps session stream at a time: `open(account, key, wsUrl, auth)` starts it (no-op without a
 * WebSocket) and holds the background (`Lifetime.hold('streams')`), `close` stops it and releases;
 * `current()` the stream held (or undefined), `hasOpenOrders()` whether it knows an order resting,
 * `liveAccount(account)` the account as the live session holds it, `session(account, perpsUrl)` the
 * session for sending commands. Never throws.
 */
export function createPerpsAccountStreams(d: PerpsAccountDeps) {
  const { Ws, now, push } = d;
  let current: PerpsAccountStream | undefined;
  const openOrders = new Set<number>();
  const recency = new Recency<number, OrderView>();
  /**
   * The account's state as the live session last told it (the popup opens on it without REST reads); the current
   * stream's key.
   */
  let held: { key: string; portfolio?: Portfolio; orders: Map<number, OrderView> } | undefined;

  function close(): void {
    if (!current) return;
    current.stream.stop();
    current.resyncs.stop();
    current = undefined;
    held = undefined;
    openOrders.clear();
    d.lifetime.release('streams');
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

  return {
    current: () => current,
    hasOpenOrders: () => openOrders.size > 0,
    open,
    close,
    /**
     * `account`'s portfolio and open orders as the live session holds them: current (every change is pushed while
     * live), so the popup skips its first reads; null unless the stream of that account is live and told them.
     */
    liveAccount(account: string | undefined): { portfolio: Portfolio; openOrders: OrderView[] } | null {
      const c = current;
      const live =
        c &&
        held?.key === c.key &&
        held.portfolio &&
        account?.toLowerCase() === c.account.toLowerCase() &&
        c.stream.status().state === 'live'
          ? held
          : undefined;
      return live?.portfolio ? { portfolio: live.portfolio, openOrders: [...live.orders.values()] } : null;
    },
    // The key also names the order-book URL: the session is the one at this perps URL for this account.
    session: (account: string, perpsUrl: string): PerpsSessionTransport | undefined =>
      current && current.key.startsWith(`${perpsUrl}|`) && current.account.toLowerCase() === account.toLowerCase()
        ? current.stream
        : undefined,
  };
}
