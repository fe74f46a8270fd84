/**
 * The order-book market channel the grants' reference prices come from (`ClobStreamReference`,
 * `lib/streams/reference.ts`): one public socket (no credential), subscribed to every order-book market a
 * live grant covers, open while such a grant is live and closed when none is — grants end with a lock,
 * so a locked vault holds none open. `reconcile` follows the grants and the settings' channel URL (the
 * composition calls it when a grant is made or ends, and after a settings change); `ref` answers a
 * covered order's reference price from the books when the stream may judge it (else undefined: the REST
 * reads do), and `answered` marks an origin's answer and sends the `PING` whose `PONG` lets the stream
 * judge that origin's next order. Held to the transport rule like every stream (`streamsWebSocket`).
 */
import { createClobChannel, type ClobChannel } from '../streams/clob';
import { ClobStreamReference } from '../streams/reference';
import type { RefPrice } from '../grants/evaluate';
import type { GrantService } from '../grants/service';
import { clobChannelUrl, type Settings } from '../settings';
import type { TransportRule } from '../settings/transport';
import type { WebSocketConstructor } from '../streams/perps';
import { streamsWebSocket } from './streams';

/** What `createGrantBooks` needs: the grants, the settings, the clock (Unix ms), the WebSocket (the worker's by default) and the transport rule. */
export type GrantBooksDeps = { grants: Pick<GrantService, 'list'>; settings: () => Promise<Pick<Settings, 'clobWsUrl'>>; now: () => number; WebSocket?: WebSocketConstructor; transportRule?: TransportRule };

/** The running feed (see the module docstring). */
export type GrantBooks = {
  reconcile: () => Promise<void>;
  /** The stream's reference price of `tokenId` for `origin`'s order (`ClobStreamReference.next`: waiting a few ms for the frame it needs), or undefined (read over REST). */
  ref: (tokenId: string, origin: string) => Promise<RefPrice | undefined>;
  /** `origin`'s order-book order was answered (see the module docstring). */
  answered: (origin: string) => void;
  stop: () => void;
};

/** Creates the feed, closed until `reconcile` finds a live order-book grant. */
export function createGrantBooks(d: GrantBooksDeps): GrantBooks {
  const Ws = streamsWebSocket(d);
  const reference = new ClobStreamReference(d.now);
  let channel: { url: string; c: ClobChannel } | undefined;
  let live = false;
  let running: Promise<void> | undefined;
  let again = false;

  const close = (): void => {
    channel?.c.stop();
    channel = undefined;
    live = false;
    reference.connection(false);
  };

  async function once(): Promise<void> {
    const grants = await d.grants.list().catch(() => []);
    const tokens = new Set(grants.flatMap((g) => (g.venue === 'clob' ? g.markets : [])));
    const url = tokens.size && Ws ? clobChannelUrl(await d.settings(), 'market') : undefined;
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
    /** Runs one pass at a time; a call during a pass runs one more after it. */
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
    ref: (tokenId, origin) => reference.next(tokenId, origin),
    answered(origin) {
      reference.answered(origin);
      channel?.c.ping();
    },
    stop: close,
  };
}
