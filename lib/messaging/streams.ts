/**
 * Contract of the live streams between the background and the popup: the `streams.status`
 * procedure, and the pushes the background broadcasts to extension pages (`runtime.sendMessage`) while
 * a stream runs. Pushes carry *derived* data only — orders, fills, the portfolio in the REST reads'
 * shapes (`lib/perps/wire.ts`) and the stream's state — never a frame, a proxy secret or a key.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger } from '../validation';
import { bookSchema, PERPS_READ_ANSWERS } from '../perps/wire';
import { accountEventSchema, streamStateSchema } from '../streams/push';
import { noInput, POPUP, procedure } from './procedure';

/**
 * One account stream's state: venue (`perps` session, `clob` user channel), account, `state`, `lastEventAt` (Unix ms of
 * the last event, null before any).
 */
const streamStatusSchema = v.object({
  venue: v.picklist(['perps', 'clob']),
  account: address,
  state: streamStateSchema,
  lastEventAt: v.nullable(v.number()),
});

/** Stream procedures. */
export const STREAMS_CONTRACT = {
  /**
   * The streams of the active account (none when locked or nothing needs one). A popup's call also
   * tells the background the popup is open (it keeps the stream up for 15 s after the last call).
   */
  'streams.status': procedure({
    input: noInput,
    output: v.object({
      streams: v.array(streamStatusSchema),
      market: v.object({ perps: streamStateSchema, clob: streamStateSchema }),
    }),
    senders: POPUP,
    activity: false,
  }),
  /**
   * What the popup shows: the perps instrument (`perpsIid`) and the order-book token
   * (`clobToken`) whose public channels the background then streams (`streams.market` pushes). Counts
   * as the popup being open. Answers the last perps book of `perpsIid` the background holds with its age
   * (ms since it arrived), null when none: the popup shows it at once (stale when older than 1 s).
   * With `account`: that account's portfolio and open orders as the **live** perps session holds them
   * (`perpsAccount`, null unless the session of that account is live and has them), current because a
   * live session pushes every change — the popup opens on them without its first REST reads. What the answer
   * lacks (the book, the account) the background starts reading at once on the person's weight share, for the popup's
   * next `perps.read` of it to take (`lib/background/read-ahead.ts`).
   */
  'streams.watch': procedure({
    input: v.strictObject({
      perpsIid: v.optional(nonNegativeSafeInteger),
      clobToken: v.optional(v.pipe(v.string(), v.regex(/^\d{1,78}$/))),
      account: v.optional(address),
    }),
    output: v.object({
      perpsBook: v.nullable(v.object({ book: bookSchema, ageMs: v.number() })),
      perpsAccount: v.nullable(
        v.object({ portfolio: PERPS_READ_ANSWERS.portfolio, openOrders: PERPS_READ_ANSWERS.openOrders }),
      ),
    }),
    senders: POPUP,
    activity: false,
  }),
} as const;

/** The message `type` of a stream push (not a procedure: the background sends it, pages listen). */
export const STREAM_PUSH = 'streams.push';

/** A push: one event of `account`'s stream (`accountEventSchema`, `lib/streams/push.ts`). */
export const streamPushSchema = v.object({
  type: v.literal(STREAM_PUSH),
  account: address,
  push: accountEventSchema,
});

/** The message `type` of a public market-data push (no account: the same for every page). */
export const STREAM_MARKET_PUSH = 'streams.market';

const level = v.tuple([v.string(), v.string()]);
/**
 * A market-data push of the public channels the popup watches (`streams.watch`): a perps instrument's
 * book (`at` Unix ms it arrived), its best bid / offer, a ticker row; an order-book token's book (10
 * levels each side best first, `[price, size]`), its new tick size; the public streams' states.
 */
export const marketPushSchema = v.object({
  type: v.literal(STREAM_MARKET_PUSH),
  push: v.variant('kind', [
    v.object({ kind: v.literal('perpsBook'), iid: v.number(), book: bookSchema, at: v.number() }),
    v.object({ kind: v.literal('perpsBbo'), iid: v.number(), bid: level, ask: level }),
    v.object({ kind: v.literal('perpsTicker'), ticker: v.array(PERPS_READ_ANSWERS.tickers.item) }),
    v.object({
      kind: v.literal('clobBook'),
      tokenId: v.string(),
      bids: v.array(level),
      asks: v.array(level),
      bestBid: v.nullable(v.string()),
      bestAsk: v.nullable(v.string()),
    }),
    v.object({ kind: v.literal('clobTick'), tokenId: v.string(), tickSize: v.string() }),
    v.object({ kind: v.literal('status'), venue: v.picklist(['perps', 'clob']), state: streamStateSchema }),
  ]),
});

/** A market-data push (see `marketPushSchema`). */
export type MarketPush = v.InferOutput<typeof marketPushSchema>;

/** A stream push (see `streamPushSchema`). */
export type StreamPush = v.InferOutput<typeof streamPushSchema>;
