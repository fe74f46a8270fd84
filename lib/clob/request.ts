/**
 * An order-book order *request* as pages and the popup ask for it (before amounts are computed and the
 * order is built and signed): token, side, decimal price and size, order type, post-only, GTD
 * expiration (Unix seconds). One schema for every trust boundary that accepts it.
 */
import * as v from 'valibot';
import { nonNegativeSafeInteger, positiveDecimalString, uint256String } from '../validation';

/**
 * One order request (see the module docstring); `InvalidFieldError` names the failing field when parsed with
 * `parseOrThrow`.
 */
export const clobOrderRequestSchema = v.strictObject({
  tokenId: uint256String,
  side: v.picklist(['BUY', 'SELL'], 'must be "BUY" or "SELL"'),
  price: positiveDecimalString,
  size: positiveDecimalString,
  orderType: v.picklist(['GTC', 'GTD', 'FOK', 'FAK'], 'must be GTC, GTD, FOK or FAK'),
  postOnly: v.optional(v.boolean('must be a boolean')),
  expiration: v.optional(nonNegativeSafeInteger),
});

/** 1-15 order requests (`POST /orders` batch bound). */
export const clobOrderRequestsSchema = v.pipe(
  v.array(clobOrderRequestSchema, 'must be an array of orders'),
  v.minLength(1, 'must hold at least one order'),
  v.maxLength(15, 'must hold at most 15 orders'),
);

/** A validated order request. */
export type ClobOrderRequest = v.InferOutput<typeof clobOrderRequestSchema>;
