/**
 * The public streams the grants' reference prices come from (`lib/streams/reference.ts`), open while a
 * grant that needs them is live and closed when none is — grants end with a lock, so a locked vault holds
 * none open; public data only (no credential):
 * - the order-book market channel (`ClobStreamReference`), subscribed to every market a live order-book
 *   grant covers: `ref` sends a `PING` for an order that arrived (as the request arrives, for the tokens its
 *   origin's grant covers: `PageReads.startClobRefs`; else at its grant check) and answers its midpoint once the
 *   `PONG` came (the book then holds every change the venue sent before);
 * - a public perps socket (`PerpsStreamReference`) on `tickers::all` and the `bbo::<iid>` of every
 *   instrument a live perps grant covers: `perpsRef` posts a `ping` when a covered order arrives and
 *   answers the mark borne out by the best bid and ask once the ping's answer came.
 * Otherwise undefined: the REST reads judge (`PageReads`). `reconcile` follows the grants and the
 * settings' channel URLs (the composition calls it when a grant is made or ends, at start and after a
 * settings change). Held to the transport rule like every stream (`streamsWebSocket`).
 */
import { createClobChannel, type ClobChannel } from '../streams/clob';
import { ClobStreamReference, PerpsStreamReference } from '../streams/reference';
import { createPerpsStream, type PerpsStream } from '../streams/perps';
import type { RefPrice } from '../grants/evaluate';
import type { GrantService } from '../grants/service';
import { clobChannelUrl, type Settings } from '../settings';
import type { TransportRule } from '../settings/transport';
import type { WebSocketConstructor } from '../streams/perps';
import { streamsWebSocket } from './streams';

/**
 * What `createGrantBooks` needs: the grants, the settings, the clock (Unix ms), the WebSocket (the worker's by default)
 * and the transport rule.
 */
export type GrantBooksDeps = {
  grants: Pick<GrantService, 'list'>;
  settings: () => Promise<Pick<Settings, 'clobWsUrl' | 'perpsWsUrl'>>;
  now: () => number;
  WebSocket?: WebSocketConstructor;
  transportRule?: TransportRule;
};

/** The running feeds (see the module docstring). */
export type GrantBooks = {
  /**
   * Opens, follows or closes the feeds as the live grants and the settings' stream URLs say; one pass at a time (a call
   * during a pass runs one more after it).
   */
  reconcile: () => Promise<void>;
  /**
   * The order-book stream's reference price of `tokenId` for an order that arrived now (`ClobStreamReference.judge`: a
   * `PING`, its `PONG`), or undefined (read over REST).
   */
  ref: (tokenId: string) => Promise<RefPrice | undefined>;
  /**
   * The perps stream's reference price of instrument `iid` (named `label` in a conflict's words) for an order that
   * arrived now (`PerpsStreamReference.judge`), or undefined (read over REST).
   */
  perpsRef: (iid: number, label: string) => Promise<RefPrice | undefined>;
};

/** Creates the feeds, closed until `reconcile` finds a live grant that needs one (order book or perps). */
export function createGrantBooks(d: GrantBooksDeps): GrantBooks {
  const Ws = streamsWebSocket(d);
  const reference = new ClobStreamReference(d.now);
  const perpsReference = new PerpsStreamReference();
  let channel: { url: string; c: ClobChannel } | undefined;
  let perps: { url: string; stream: PerpsStream } | undefined;
  let live = false;
  let running: Promise<void> | undefined;
  let again = false;

  const close = (): void => {
    channel?.c.stop();
    channel = undefined;
    live = false;
    reference.connection(false);
  };
  const closePerps = (): void => {
    perps?.stream.stop();
    perps = undefined;
    perpsReference.connection(false);
  };

  /** The perps public socket on `tickers::all` and the `bbo::` of `iids` (none: closed). */
  function followPerps(url: string | undefined, iids: ReadonlySet<number>): void {
    if (perps && perps.url !== url) closePerps();
    if (!url || !Ws || iids.size === 0) return closePerps();
    const chs = ['tickers::all', ...[...iids].map((i) => `bbo::${i}`)];
    perpsReference.retain(iids);
    if (perps) return perps.stream.setPublic(chs);
    let wasLive = false;
    const stream = createPerpsStream({
      wsUrl: url,
      publicChannels: chs,
      WebSocket: Ws,
      now: d.now,
      onEvent: (e) => perpsReference.event(e),
      onResync: () => perpsReference.connection(wasLive), // a gap or a reconnect: what was pushed before is forgotten
      onStatus: (st) => {
        if ((st.state === 'live') !== wasLive) perpsReference.connection((wasLive = st.state === 'live'));
      },
    });
    perps = { url, stream };
    stream.start();
  }

  async function once(): Promise<void> {
    const grants = await d.grants.list().catch(() => []);
    const tokens = new Set(grants.flatMap((g) => (g.venue === 'clob' ? g.markets : [])));
    const iids = new Set(grants.flatMap((g) => (g.venue === 'perps' ? g.instruments : [])));
    const settings = iids.size || tokens.size ? await d.settings() : undefined;
    followPerps(settings?.perpsWsUrl, iids);
    const url = tokens.size && Ws && settings ? clobChannelUrl(settings, 'market') : undefined;
    if (channel && channel.url !== url) close();
    if (!url || !Ws) return;
    if (!channel) {
      const c = createClobChannel({
        url,
        channel: 'market',
        WebSocket: Ws,
        now: d.now,
        onEvent: (e) => reference.event(e),
        onPing: () => reference.pinged(),
        onPong: () => reference.ponged(),
        onStatus: (st) => {
          if ((st.state === 'live') !== live) reference.connection((live = st.state === 'live'));
        },
      });
      channel = { url, c };
    }
    const held = new Set(channel.c.assets());
    channel.c.unsubscribe([...held].filter((t) => !tokens.has(t)));
    channel.c.subscribe([...tokens].filter((t) => !held.has(t)));
    reference.retain(tokens);
    channel.c.start();
  }

  return {
    async reconcile() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await once().catch(() => undefined);
        } while (again);
      })().finally(() => (running = undefined));
      return running;
    },
    ref: (tokenId) => reference.judge(tokenId, () => channel?.c.ping() ?? false),
    perpsRef: (iid, label) => perpsReference.judge(iid, label, () => perps?.stream.ping() ?? Promise.resolve(false)),
  };
}
