/**
 * Contract of the order-book procedures the popup calls with the active account's keys (PROTOCOL.md
 * §2): API credentials, orders, cancels, open orders. The popup's orders are the click's consent.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger } from '../validation';
import { clobOrderRequestsSchema } from '../clob/request';
import { clobCancelAnswerSchema, clobOpenOrderSchema } from '../clob/wire';
import { POPUP, procedure } from './procedure';

/** Order-book procedures. */
export const CLOB_CONTRACT = {
  /**
   * Creates (or, when the nonce is used, derives) API credentials: the account, the nonce, and whether they were
   * derived.
   */
  'clob.createOrDerive': procedure({
    input: v.strictObject({ account: address, nonce: v.optional(nonNegativeSafeInteger) }),
    output: v.object({ account: v.string(), nonce: v.number(), derived: v.boolean() }),
    senders: POPUP,
    activity: true,
  }),
  /**
   * Replaces the account's API credentials: the old key is deleted at the exchange, then new ones are
   * created under the next unused nonce (what the person does after the credentials may have travelled in
   * clear, `settings.get`'s `cleartext`). Answers the new nonce and whether the old key was deleted.
   */
  'clob.rotateCredentials': procedure({
    input: v.strictObject({ account: address }),
    output: v.object({ account: v.string(), nonce: v.number(), oldDeleted: v.boolean() }),
    senders: POPUP,
    activity: true,
  }),
  /** Signs and posts 1-15 orders for the active account: one result per order (`error` the exchange's sentence). */
  'clob.postOrders': procedure({
    input: v.strictObject({ account: address, orders: clobOrderRequestsSchema }),
    output: v.array(
      v.variant('ok', [
        v.object({ ok: v.literal(true), orderID: v.string(), status: v.string() }),
        v.object({ ok: v.literal(false), error: v.string() }),
      ]),
    ),
    senders: POPUP,
    activity: true,
  }),
  /** Cancels orders by id (`DELETE /orders`): the venue's `{ canceled, not_canceled }`. */
  'clob.cancel': procedure({
    input: v.strictObject({
      account: address,
      orderIds: v.pipe(v.array(v.pipe(v.string(), v.maxLength(100))), v.minLength(1), v.maxLength(100)),
    }),
    output: clobCancelAnswerSchema,
    senders: POPUP,
    activity: true,
  }),
  /** Every open order of the account (all pages of `GET /data/orders`, at most 20). */
  'clob.openOrders': procedure({
    input: v.strictObject({ account: address }),
    output: v.object({ data: v.array(clobOpenOrderSchema) }),
    senders: POPUP,
    activity: false,
  }),
} as const;
