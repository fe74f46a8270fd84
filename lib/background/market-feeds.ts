/**
 * The public channels the open popup watches (`streams.watch`, driven by `createBackgroundStreams` in
 * ./streams.ts): an unauthenticated perps socket for the shown instrument's `book`, `bbo` and `tickers`, and
 * the order-book market channel for the shown token. The last perps book per instrument is kept with its
 * receive time (the popup's first book); a gap in a book's `sq` or a reconnect re-reads it over REST.
 */
import { coalesced } from '../streams/coalesce';
import { createPerpsStream, type PerpsStream, type StreamState, type WebSocketConstructor } from '../streams/perps';
import type { PerpsMarketEvent, PerpsStreamEvent } from '../streams/perps-frames';
import { createClobChannel, type ClobChannel, type ClobStreamEvent } from '../streams/clob';
import { ClobBooks } from '../streams/books';
import type { MarketPush } from '../messaging/streams';
import type { Book } from '../perps/wire';

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
export function createMarketFeeds(d: MarketDeps) {
  const books = new Map<number, { book: Book; at: number }>();
  const clobBooks = new ClobBooks();
  let perps: { url: string; iid: number; stream: PerpsStream } | undefined;
  let clob: { url: string; channel: ClobChannel } | undefined;
  const state: { perps: StreamState; clob: StreamState } = { perps: 'down', clob: 'down' };
  const status = (venue: 'perps' | 'clob', s: StreamState) => {
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
