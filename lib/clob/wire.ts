/**
 * The order-book exchange's answer schemas (PROTOCOL.md §2-§3), apart from the client (`./client.ts`)
 * so that the message contract (`lib/messaging/`) and the pages that load it — the popup first —
 * take the schemas without the client's L1/L2 signing code and the hashes it computes when it loads
 * (popup open). The client parses with them (`parseClobAnswer`).
 */
import * as v from 'valibot';
import { venueDecimalString as decimal } from '../validation';
import { shortToken, venueLabelOr, venueLabelString } from '../validation/venue-text';

/**
 * The venue's answer to a cancel (`DELETE /order`, `/orders`, `/cancel-all`; PROTOCOL.md §3.1): the
 * ids cancelled, and each id not cancelled with the exchange's reason.
 */
export const clobCancelAnswerSchema = v.object({
  canceled: v.array(v.pipe(v.string(), v.maxLength(100))),
  not_canceled: v.record(v.pipe(v.string(), v.maxLength(100)), v.pipe(v.string(), v.maxLength(300))),
});
/** A cancel answer (see `clobCancelAnswerSchema`). */
export type ClobCancelAnswer = v.InferOutput<typeof clobCancelAnswerSchema>;

/**
 * One row of `GET /data/orders` (PROTOCOL.md §3.1) with the fields the popup shows; the venue's other
 * fields are kept as they came. Sizes and prices are decimal strings (`original_size` in shares).
 */
export const clobOpenOrderSchema = v.pipe(
  v.looseObject({
    id: v.pipe(v.string(), v.maxLength(100)),
    status: v.pipe(v.string(), v.maxLength(30)),
    side: v.picklist(['BUY', 'SELL']),
    price: v.pipe(v.string(), v.maxLength(64)),
    original_size: v.pipe(v.string(), v.maxLength(64)),
    size_matched: v.pipe(v.string(), v.maxLength(64)),
    /** The exchange's outcome label, validated at the boundary (venue-text); `token 123456…7890` when refused. */
    outcome: venueLabelString,
    asset_id: v.pipe(v.string(), v.maxLength(78)),
  }),
  v.transform((o) => ({ ...o, outcome: venueLabelOr(o.outcome, `token ${shortToken(o.asset_id)}`) })),
);
/** An open order row (see `clobOpenOrderSchema`). */
export type ClobOpenOrder = v.InferOutput<typeof clobOpenOrderSchema>;

/** One page of `GET /data/orders`: rows and the next cursor (`LTE=` after the last page). */
export const clobOrdersPageSchema = v.object({
  data: v.array(clobOpenOrderSchema),
  next_cursor: v.pipe(v.string(), v.maxLength(200)),
});

/** `GET /tick-size?token_id=`: the token's price step, a number strictly between 0 and 1 (PROTOCOL.md §2.3). */
export const clobTickSizeSchema = v.object({ minimum_tick_size: v.pipe(v.number(), v.gtValue(0), v.ltValue(1)) });
/**
 * `GET /book?token_id=` (PROTOCOL.md §3.1): levels ascending (bids) / descending (asks), best last; decimal strings.
 */
export const clobBookSchema = v.object({
  bids: v.array(v.object({ price: decimal, size: decimal })),
  asks: v.array(v.object({ price: decimal, size: decimal })),
  tick_size: v.union([decimal, v.number()]),
  min_order_size: decimal,
  neg_risk: v.boolean(),
});
/** `GET /neg-risk?token_id=`: whether the token's market is a negative-risk market (which exchange contract signs). */
export const clobNegRiskSchema = v.object({ neg_risk: v.boolean() });
/** `GET /midpoint?token_id=`: the midpoint as a decimal string. */
export const clobMidpointSchema = v.object({ mid: decimal });
/** `GET /balance-allowance`: the balance in base units (USDC: 6 decimals) as an integer string. */
export const clobBalanceSchema = v.object({ balance: v.pipe(v.string(), v.regex(/^\d{1,40}$/)) });

/** The answer to an order-book heartbeat (`POST /v1/heartbeats`): the session id to send next time. */
export const clobHeartbeatAnswerSchema = v.object({ heartbeat_id: v.pipe(v.string(), v.maxLength(200)) });
