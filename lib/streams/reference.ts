/**
 * The order-book market channel as the source of a grant's reference price (the midpoint a grant's band
 * and notional are judged against, `lib/grants/evaluate.ts`), so a site's covered order does not wait for
 * the two REST reads (midpoint, book top) before it is signed. Pure: the background feeds it the channel's
 * events and frames (`lib/background/grant-books.ts`); `ref` answers or says "read over REST" (undefined).
 *
 * The stream judges an order of `origin` on token `t` only when all of these hold; otherwise the REST
 * reads do (`PageReads.clobRef`), exactly as before:
 * - the channel is live, and `t`'s book was dumped on this connection (a reconnect forgets every book
 *   until the venue dumps it again: the channel has no replay and no sequence numbers, PROTOCOL.md §5.3);
 * - the channel delivered a frame within `STREAM_REF_FRESH_MS`;
 * - since `origin`'s previous order was answered, the channel delivered a book change, or the `PONG` to
 *   a `PING` sent after that answer (`answered` sends one): the book has caught up at least to the moment
 *   the site saw its last answer, so a move the site made before that answer is in the book. An order that
 *   comes before that frame waits for it at most `STREAM_REF_WAIT_MS` (`next`). An origin's first order
 *   after a start or a reconnect is judged over REST;
 * - the book has two sides: the midpoint is (best bid + best ask) / 2, exact, borne out by the same book
 *   (`borneOut`).
 *
 * What a stale or lying stream can do: a stream is the venue speaking, as the REST reads are; a move the
 * venue has not pushed yet can be missing from the book for at most the time the push takes on its way
 * (a REST read taken at that moment has the same lag), never longer than `STREAM_REF_FRESH_MS` of
 * silence; a venue that lies moves the band as a lying REST read would (README "What a gateway can and
 * cannot make Countersign show or sign"), and the per-order and 24 h notional caps still bound what is
 * signed.
 */
import { fromUnits, truncUnits } from '../decimal';
import { borneOut } from '../grants/reference';
import type { RefPrice } from '../grants/evaluate';
import { isVenueDecimal } from '../validation';
import { shortToken } from '../validation/venue-text';
import { ClobBooks } from './books';
import type { ClobStreamEvent } from './clob';
import type { PerpsStreamEvent } from './perps-frames';

/** Longest silence of the channel (ms) after which its books judge no order: one ping interval of the channel. */
export const STREAM_REF_FRESH_MS = 10_000;

/**
 * Longest wait (ms) for the frame that lets the stream judge an order (the `PONG` of the `PING` sent after
 * the previous answer is usually on its way) before the REST reads start: about a loopback round trip, far
 * under the two REST reads it saves.
 */
export const STREAM_REF_WAIT_MS = 4;

/** Most origins whose last answer is remembered (the oldest is forgotten first: its next order reads over REST). */
const MAX_ORIGINS = 256;

const S = 18;

/** Frame counts at the moment an origin's order was answered: book changes heard, pings sent. */
type Mark = { changes: number; pings: number };

/** The market channel's books as reference prices (see the module docstring). */
export class ClobStreamReference {
  private readonly books = new ClobBooks();
  private readonly dumped = new Set<string>();
  private live = false;
  private changes = 0;
  private pings = 0;
  private pongs = 0;
  private heardAt = Number.NEGATIVE_INFINITY;
  private readonly marks = new Map<string, Mark>();
  /** Called at every frame heard (`heard`): the waits of `next`. */
  private readonly wakers = new Set<() => void>();

  /** `now`: the clock (Unix ms). */
  constructor(private readonly now: () => number = Date.now) {}

  /** The channel went live (a new connection) or down: every book, count and answered mark starts over. */
  connection(live: boolean): void {
    this.live = live;
    this.dumped.clear();
    this.books.retain(new Set());
    this.marks.clear();
    this.changes = this.pings = this.pongs = 0;
  }

  /** A market-channel event: a book dump or change of a token (other events count as heard only). */
  event(e: ClobStreamEvent): void {
    this.heardAt = this.now();
    if (e.kind === 'book') this.dumped.add(e.tokenId);
    if (this.books.apply(e).length > 0) this.changes++;
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }

  /** The channel sent a `PING` (its own, every 10 s, or `answered`'s). */
  pinged(): void {
    this.pings++;
  }

  /** A `PONG` arrived (answers the oldest `PING` not answered yet: the socket keeps their order). */
  ponged(): void {
    this.heardAt = this.now();
    this.pongs++;
    this.wake();
  }

  /** Keeps the books of `tokens` only (the markets live grants cover). */
  retain(tokens: ReadonlySet<string>): void {
    this.books.retain(tokens);
    for (const t of [...this.dumped]) if (!tokens.has(t)) this.dumped.delete(t);
  }

  /**
   * `origin`'s order was answered: its next order is judged by the stream only after a frame heard from
   * now on (a change, or the answer to the `PING` the caller sends right after this call: `pinged`).
   */
  answered(origin: string): void {
    this.marks.delete(origin);
    if (this.marks.size >= MAX_ORIGINS) this.marks.delete(this.marks.keys().next().value ?? '');
    this.marks.set(origin, { changes: this.changes, pings: this.pings });
  }

  /**
   * `ref` now, or — when the stream could judge the order but has not been heard from since `origin`'s
   * previous answer — `ref` once the next frame is heard, waiting at most `waitMs`; undefined: read over REST.
   */
  async next(tokenId: string, origin: string, waitMs = STREAM_REF_WAIT_MS): Promise<RefPrice | undefined> {
    const now = this.ref(tokenId, origin);
    if (now || !this.usable(tokenId) || !this.marks.has(origin)) return now;
    const end = this.now() + waitMs;
    while (this.now() < end) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wakers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, end - this.now()));
        this.wakers.add(done);
      });
      const heard = this.ref(tokenId, origin);
      if (heard || !this.usable(tokenId)) return heard;
    }
    return undefined;
  }

  /** Whether `tokenId`'s book could judge an order at all: live, dumped on this connection, heard from within `STREAM_REF_FRESH_MS`. */
  private usable(tokenId: string): boolean {
    return this.live && this.dumped.has(tokenId) && this.now() - this.heardAt <= STREAM_REF_FRESH_MS;
  }

  /** The midpoint of `tokenId` for `origin`'s order now, when the stream may judge it (module docstring); undefined: read over REST. */
  ref(tokenId: string, origin: string): RefPrice | undefined {
    if (!this.usable(tokenId)) return undefined;
    const mark = this.marks.get(origin);
    if (!mark || (this.changes <= mark.changes && this.pongs <= mark.pings)) return undefined;
    const view = this.books.view(tokenId, 1);
    if (!view?.bestBid || !view.bestAsk) return undefined;
    const mid = fromUnits((truncUnits(view.bestBid, S) + truncUnits(view.bestAsk, S)) / 2n, S);
    return borneOut({ price: mid, source: 'midpoint' }, { bid: view.bestBid, ask: view.bestAsk }, `token ${shortToken(tokenId)}`);
  }
}

/**
 * The perps public stream (`bbo::<iid>`, `tickers::all`) as the source of a perps grant's reference price:
 * the ticker's mark (its mid when it carries no mark), borne out by the best bid and ask (`borneOut`), as
 * `PageReads.perpsRef` reads them over REST. The stream judges when it is live and both the instrument's
 * ticker and its best bid / ask came on this connection since its last resync (a reconnect or a gap in a
 * channel's `sq` forgets them until the venue pushes them again); the venue pushes both on every change, so
 * the latest of each is the venue's state now — at least as current as the REST read it replaces, which is
 * reused for 1 s. Otherwise undefined: the REST reads judge.
 */
export class PerpsStreamReference {
  private live = false;
  private readonly tickers = new Map<number, { mark?: string | undefined; mid?: string | undefined }>();
  private readonly tops = new Map<number, { bid: string; ask: string }>();

  /** The stream went live (a new connection), went down or resynced: every price is forgotten. */
  connection(live: boolean): void {
    this.live = live;
    this.tickers.clear();
    this.tops.clear();
  }

  /** A public-channel event: a ticker or a best bid / ask (others are ignored). */
  event(e: PerpsStreamEvent): void {
    if (e.kind === 'ticker') this.tickers.set(e.ticker.instrument_id, { mark: e.ticker.mark_price, mid: e.ticker.mid_price });
    else if (e.kind === 'bbo') this.tops.set(e.iid, { bid: e.bid[0], ask: e.ask[0] });
  }

  /** The reference price of instrument `iid` (named `label` in a conflict's words) now, or undefined (read over REST). */
  ref(iid: number, label: string): RefPrice | undefined {
    const t = this.tickers.get(iid);
    const top = this.tops.get(iid);
    if (!this.live || !t || !top) return undefined;
    const ok = (x: string | undefined): x is string => x !== undefined && isVenueDecimal(x) && !/^0(\.0*)?$/.test(x);
    const read: RefPrice | undefined = ok(t.mark) ? { price: t.mark, source: 'mark' } : ok(t.mid) ? { price: t.mid, source: 'mid' } : undefined;
    return read && borneOut(read, top, label);
  }
}
