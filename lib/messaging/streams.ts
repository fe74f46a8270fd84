/**
 * Contract of the live streams between the background and the popup (issue #22): the `streams.status`
 * procedure, and the pushes the background broadcasts to extension pages (`runtime.sendMessage`) while
 * a stream runs. Pushes carry *derived* data only — orders, fills, the portfolio in the REST reads'
 * shapes (`lib/perps/wire.ts`) and the stream's state — never a frame, a proxy secret or a key.
 */
import * as v from 'valibot';
import { address } from '../validation';
import { PERPS_READ_ANSWERS } from '../perps/wire';
import { noInput, POPUP, procedure } from './procedure';

/** `live`: events arrive; `connecting`; `down`: no stream (the popup polls REST). */
const stateSchema = v.picklist(['live', 'connecting', 'down']);

/** One stream's state: venue, account, `state`, `lastEventAt` (Unix ms of the last event, null before any). */
const streamStatusSchema = v.object({
  venue: v.literal('perps'),
  account: address,
  state: stateSchema,
  lastEventAt: v.nullable(v.number()),
});

/** Stream procedures. */
export const STREAMS_CONTRACT = {
  /**
   * The streams of the active account (none when locked or nothing needs one). A popup's call also
   * tells the background the popup is open (it keeps the stream up for 15 s after the last call).
   */
  'streams.status': procedure({ input: noInput, output: v.object({ streams: v.array(streamStatusSchema) }), senders: POPUP, activity: false }),
} as const;

/** The message `type` of a stream push (not a procedure: the background sends it, pages listen). */
export const STREAM_PUSH = 'streams.push';

/**
 * A push: for `account`, one of an order's new state, the fills of a match, the portfolio, the open
 * orders as re-read over REST after a reconnect or a sequence gap (`resync`), or the stream's state.
 */
export const streamPushSchema = v.object({
  type: v.literal(STREAM_PUSH),
  account: address,
  push: v.variant('kind', [
    v.object({ kind: v.literal('order'), order: PERPS_READ_ANSWERS.openOrders.item }),
    v.object({ kind: v.literal('fills'), fills: PERPS_READ_ANSWERS.fills.entries.data }),
    v.object({ kind: v.literal('portfolio'), portfolio: PERPS_READ_ANSWERS.portfolio }),
    v.object({ kind: v.literal('resync'), openOrders: PERPS_READ_ANSWERS.openOrders, portfolio: PERPS_READ_ANSWERS.portfolio }),
    v.object({ kind: v.literal('status'), state: stateSchema, lastEventAt: v.nullable(v.number()) }),
  ]),
});

/** A stream push (see `streamPushSchema`). */
export type StreamPush = v.InferOutput<typeof streamPushSchema>;
