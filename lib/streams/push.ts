/**
 * What an account's stream reports once the background has read it (PROTOCOL.md §5): an order's new state, the
 * fills of a match, the portfolio, the open orders re-read after a reconnect or a sequence gap, the stream's state;
 * on the order-book user channel (`clob*`) an order's new state, a trade as the person reads it, the open orders
 * re-read, the channel's state. Derived data in the REST reads' shapes only — never a frame, a proxy secret or a key.
 * The background broadcasts these (`streams.push`, `lib/messaging/streams.ts`) and raises notifications from them
 * (`lib/notifications/rules.ts`).
 */
import * as v from 'valibot';
import type { Address } from 'viem';
import { PERPS_READ_ANSWERS } from '../perps/wire';
import { clobOpenOrderSchema } from '../clob/wire';
import { clobTradeSchema } from '../clob/trades';

/** A stream's state. `live`: events arrive; `connecting`; `down`: no stream (the popup polls REST). */
export const streamStateSchema = v.picklist(['live', 'connecting', 'down']);

/** One event of an account's stream, by `kind` (see the module's comment). `lastEventAt` Unix ms, null before any. */
export const accountEventSchema = v.variant('kind', [
  v.object({ kind: v.literal('order'), order: PERPS_READ_ANSWERS.openOrders.item }),
  v.object({ kind: v.literal('fills'), fills: PERPS_READ_ANSWERS.fills.entries.data }),
  v.object({ kind: v.literal('portfolio'), portfolio: PERPS_READ_ANSWERS.portfolio }),
  v.object({
    kind: v.literal('resync'),
    openOrders: PERPS_READ_ANSWERS.openOrders,
    portfolio: PERPS_READ_ANSWERS.portfolio,
  }),
  v.object({ kind: v.literal('status'), state: streamStateSchema, lastEventAt: v.nullable(v.number()) }),
  v.object({ kind: v.literal('clobOrder'), order: clobOpenOrderSchema }),
  v.object({ kind: v.literal('clobTrade'), trade: clobTradeSchema }),
  v.object({ kind: v.literal('clobResync'), openOrders: v.array(clobOpenOrderSchema) }),
  v.object({ kind: v.literal('clobStatus'), state: streamStateSchema }),
]);

/** One event of an account's stream (see `accountEventSchema`). */
export type AccountEvent = v.InferOutput<typeof accountEventSchema>;

/** An account's stream event with the account it is for. */
export type AccountPush = { account: Address; push: AccountEvent };
