/**
 * Reference prices of covered orders from the venues' public streams, so a site's covered order does not
 * wait for REST reads before it is signed (the price a grant's band and notional are judged against,
 * `lib/grants/evaluate.ts`). Pure: the background feeds the streams' events and frames in
 * (`lib/background/grant-books.ts`); each answer is a reference price or undefined ("read over REST",
 * `PageReads`), exactly as before.
 *
 * Order book (`ClobStreamReference`): the stream judges an order on token `t` only when all of these hold:
 * - the channel is live, and `t`'s book was dumped on this connection (a reconnect forgets every book
 *   until the venue dumps it again: the channel has no replay and no sequence numbers, PROTOCOL.md §5.3);
 * - a `PING` sent after the order arrived was answered (its `PONG`) within `STREAM_REF_WAIT_MS`: the
 *   socket keeps the venue's frames in order, so every change the venue sent before it read that `PING` —
 *   any move a site made and saw answered before it sent the order, from this origin or any other — is in
 *   the book. A book change heard since an earlier answer proves nothing of the kind (a lagging stream
 *   delivers changes the venue emitted long before), nor does an earlier `PONG`;
 * - the book has two sides: the midpoint is (best bid + best ask) / 2, exact, borne out by the same book
 *   (`borneOut`).
 * The cost is one WebSocket round trip where the REST reads take two requests; a `PONG` that does not come
 * in time leaves the order to the REST reads.
 *
 * This rests on the venue answering a `PING` behind the frames it queued for the socket before it (one
 * writer per socket, as the sandbox does; PROTOCOL.md does not say). A venue whose book pushes lag behind
 * its `PONG`s — a separate feed pipeline — gets orders judged on a book as old as that lag.
 *
 * Perps (`PerpsStreamReference`): the pushed ticker mark (its mid without a mark), borne out by the pushed
 * best bid and ask, once the answer to a `ping` posted after the order arrived came — the same barrier on
 * the public perps socket. Otherwise the REST reads judge (ticker and book). `PageReads.perpsRef` reuses a
 * reference taken in the last second, from either source, as it always reused the REST reads.
 *
 * What a stale or lying stream can do: a stream is the venue speaking, as the REST reads are. A slow order
 * book stream is waited for (the `PONG`), never read behind; a venue whose pushes lag its `PONG`s moves the
 * band by what the book moved in that lag; a venue that lies moves the band as a lying REST read would (README "What a
 * gateway can and cannot make Countersign show or sign"). The per-order and 24 h notional caps still bound what is
 * signed.
 */
import { fromUnits, truncUnits } from '../decimal';
import { borneOut, tickerReference } from '../grants/reference';
import type { RefPrice } from '../grants/evaluate';
import { shortToken } from '../validation/venue-text';
import { ClobBooks } from './books';
import type { ClobStreamEvent } from './clob';
import type { PerpsStreamEvent } from './perps-frames';

/**
 * Longest wait (ms) for the `PONG` of the `PING` sent when an order arrived, before the REST reads judge
 * it instead: a few round trips to a distant venue; on loopback it comes in about a millisecond.
 */
export const STREAM_REF_WAIT_MS = 150;

const S = 18;

/** The order-book market channel's books as reference prices (see the module docstring). */
export class ClobStreamReference {
  private readonly books = new ClobBooks();
  private readonly dumped = new Set<string>();
  private live = false;
  private pings = 0;
  private pongs = 0;
  /** Counts connections: a `PONG` on a later socket never answers a `PING` of an earlier one. */
  private epoch = 0;
  /** Called at every `PONG` and connection change: the waits of `judge`. */
  private readonly wakers = new Set<() => void>();

  /** `now`: the clock (Unix ms). */
  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The channel went live (a new connection) or down: every book and count starts over (pings in flight are lost with
   * the socket).
   */
  connection(live: boolean): void {
    this.live = live;
    this.epoch++;
    this.dumped.clear();
    this.books.retain(new Set());
    this.pings = this.pongs = 0;
    this.wake();
  }

  /** A market-channel event: a book dump or change of a token (other events change nothing here). */
  event(e: ClobStreamEvent): void {
    if (e.kind === 'book') this.dumped.add(e.tokenId);
    this.books.apply(e);
  }

  /** The channel sent a `PING` (its own, every 10 s, or one of `judge`'s). */
  pinged(): void {
    this.pings++;
  }

  /** A `PONG` arrived (answers the oldest `PING` not answered yet: the socket keeps their order). */
  ponged(): void {
    this.pongs++;
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.wakers]) w();
  }

  /** Keeps the books of `tokens` only (the markets live grants cover). */
  retain(tokens: ReadonlySet<string>): void {
    this.books.retain(tokens);
    for (const t of [...this.dumped]) if (!tokens.has(t)) this.dumped.delete(t);
  }

  /**
   * The midpoint of `tokenId` for an order that arrived now, judged by the stream (module docstring):
   * `ping` sends a `PING` (false when the channel cannot; it reports it through `pinged`), and the book is
   * read once that `PING`'s `PONG` came, waiting at most `waitMs`. Undefined: read over REST.
   */
  async judge(tokenId: string, ping: () => boolean, waitMs = STREAM_REF_WAIT_MS): Promise<RefPrice | undefined> {
    if (!this.usable(tokenId)) return undefined;
    const sentBefore = this.pings; // their PONGs answer PINGs sent before the order arrived
    const epoch = this.epoch;
    if (!ping() || this.pings <= sentBefore) return undefined;
    const end = this.now() + waitMs;
    while (this.epoch === epoch && this.pongs <= sentBefore) {
      const left = end - this.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wakers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.wakers.add(done);
      });
    }
    return this.epoch === epoch ? this.book(tokenId) : undefined; // the socket went: its PING with it
  }

  private usable(tokenId: string): boolean {
    return this.live && this.dumped.has(tokenId);
  }

  /**
   * The midpoint of `tokenId`'s book as it stands (two sides, dumped on this connection), borne out by it; else
   * undefined.
   */
  private book(tokenId: string): RefPrice | undefined {
    if (!this.usable(tokenId)) return undefined;
    const view = this.books.view(tokenId, 1);
    if (!view?.bestBid || !view.bestAsk) return undefined;
    const mid = fromUnits((truncUnits(view.bestBid, S) + truncUnits(view.bestAsk, S)) / 2n, S);
    return borneOut(
      { price: mid, source: 'midpoint' },
      { bid: view.bestBid, ask: view.bestAsk },
      `token ${shortToken(tokenId)}`,
    );
  }
}

/**
 * The perps public stream (`bbo::<iid>`, `tickers::all`) as the source of a perps grant's reference price:
 * the ticker's mark (its mid when it carries no mark), borne out by the best bid and ask (`borneOut`), as
 * `PageReads.perpsRef` reads them over REST. It judges an order when the stream is live, the instrument's
 * ticker and best bid / ask both came on this connection since its last resync (a reconnect or a gap in a
 * channel's `sq` forgets them until the venue pushes them again), and the answer to a `ping` posted after
 * the order arrived came within `STREAM_REF_WAIT_MS` (every push the venue sent before it has come: the
 * same barrier, and the same assumption, as the order book's). Otherwise undefined: the REST reads judge.
 */
export class PerpsStreamReference {
  private live = false;
  private readonly tickers = new Map<number, { mark?: string | undefined; mid?: string | undefined }>();
  private readonly tops = new Map<number, { bid: string; ask: string }>();
  private epoch = 0;

  /** The stream went live (a new connection), went down or resynced: every price is forgotten. */
  connection(live: boolean): void {
    this.live = live;
    this.epoch++;
    this.tickers.clear();
    this.tops.clear();
  }

  /** A public-channel event: a ticker or a best bid / ask (others are ignored). */
  event(e: PerpsStreamEvent): void {
    if (e.kind === 'ticker')
      this.tickers.set(e.ticker.instrument_id, { mark: e.ticker.mark_price, mid: e.ticker.mid_price });
    else if (e.kind === 'bbo') this.tops.set(e.iid, { bid: e.bid[0], ask: e.ask[0] });
  }

  /** Keeps the prices of `iids` only (the instruments live grants cover): one granted again waits for its next push. */
  retain(iids: ReadonlySet<number>): void {
    for (const m of [this.tickers, this.tops]) for (const iid of [...m.keys()]) if (!iids.has(iid)) m.delete(iid);
  }

  /**
   * The reference price of instrument `iid` (named `label` in a conflict's words) for an order that arrived
   * now: `ping` posts a ping and resolves true at its answer; the prices are read after it, waiting at most `waitMs`.
   * Undefined: read over REST.
   */
  async judge(
    iid: number,
    label: string,
    ping: () => Promise<boolean>,
    waitMs = STREAM_REF_WAIT_MS,
  ): Promise<RefPrice | undefined> {
    if (!this.price(iid, label)) return undefined;
    const epoch = this.epoch;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const answered = await Promise.race([ping(), late]).finally(() => clearTimeout(timer));
    return answered && this.epoch === epoch ? this.price(iid, label) : undefined;
  }

  /** The prices of `iid` as they stand (live, both pushed on this connection), borne out; else undefined. */
  private price(iid: number, label: string): RefPrice | undefined {
    const t = this.tickers.get(iid);
    const top = this.tops.get(iid);
    if (!this.live || !t || !top) return undefined;
    return tickerReference(t, top, label);
  }
}
