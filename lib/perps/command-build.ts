/**
 * Perps command builders from unchecked values: each command's valibot schema (the only check: it
 * throws `InvalidFieldError` naming the field, e.g. `orders[0].qty`) and the function that turns a
 * checked input into the signed tuple and the sent body together (PROTOCOL.md §1.2–§1.3, seed "Order
 * item", "Other command arguments", "Endpoints"). `./commands.ts` is the module to import.
 *
 * Stricter than the official perps client (`@polymarket/client` 0.2.0), on purpose (each asserted by
 * `test/conformance/perps-differential.test.ts`; for the inputs both take, the signed bytes are equal):
 * it signs any string as a decimal (`"1e5"`, `"-1"`, `""`, a number turned into `"1e+21"`); an `exp`
 * in the past or more than the 30 s command timeout ahead; a leverage above 2^31 − 1; an address in mixed
 * case that is not its checksum; a client order id twice in one batch; a batch over `PERPS_MAX_BATCH`.
 * These builders refuse each, naming the field.
 */
import * as v from 'valibot';
import {
  address,
  baseUnitsString,
  clientOrderId,
  decimalString,
  InvalidFieldError,
  nonNegativeSafeInteger,
  parseOrThrow,
  positiveDecimalString,
  positiveSafeInteger,
  signedDecimalString,
  utf8Length,
} from '../validation';
import {
  AUTO_CANCEL_MIN_LEAD_MS,
  PERPS_MAX_BATCH,
  PERPS_TPSL_GROUPS,
  batchRequestWeight,
  type PerpsCommand,
  type PerpsOpTuple,
  type PerpsOrderInput,
  type PerpsOrderTuple,
  type PerpsTriggerTuple,
} from './command-types';

// ---------------------------------------------------------------------------------------------
// Schemas

const labelSchema = v.pipe(
  v.string('must be a string'),
  v.check((s) => utf8Length(s) >= 1 && utf8Length(s) <= 64, 'must be 1 to 64 UTF-8 bytes'),
);

const triggerSchema = v.strictObject({
  tpsl: v.picklist(['tp', 'sl'], 'must be "tp" or "sl"'),
  trp: positiveDecimalString,
  market: v.optional(v.boolean('must be a boolean')),
});

const orderSchema = v.pipe(
  v.strictObject({
    iid: nonNegativeSafeInteger,
    buy: v.boolean('must be a boolean (true = buy)'),
    qty: decimalString, // > 0, except "0" on a position group's leg: `groupRules`
    p: v.optional(positiveDecimalString),
    tif: v.optional(v.picklist(['gtc', 'ioc', 'fok'], 'must be "gtc", "ioc" or "fok"')),
    po: v.optional(v.boolean('must be a boolean')),
    ro: v.optional(v.boolean('must be a boolean')),
    c: v.optional(clientOrderId),
    tr: v.optional(triggerSchema),
  }),
  v.forward(
    v.check(
      (o) => (o.tr ? o.tif === undefined : o.tif !== undefined),
      'is required on a non-trigger order and not allowed on a trigger order',
    ),
    ['tif'],
  ),
  v.forward(
    v.check((o) => o.tif !== 'gtc' || o.p !== undefined, 'is required for a gtc order'),
    ['p'],
  ),
  v.forward(
    v.check((o) => !o.po || o.tif === 'gtc', 'post-only is only valid with gtc'),
    ['po'],
  ),
  v.forward(
    v.check((o) => !o.tr || o.tr.market === true || o.p !== undefined, 'is required for a limit trigger order'),
    ['p'],
  ),
);

function batch<T extends v.GenericSchema>(item: T, what: string) {
  return v.pipe(
    v.array(item, `must be an array of ${what}`),
    v.minLength(1, `must hold at least one ${what.replace(/s$/, '')}`),
    v.maxLength(PERPS_MAX_BATCH, `must hold at most ${PERPS_MAX_BATCH} ${what}`),
  );
}

const createOrdersSchema = v.pipe(
  v.strictObject({
    orders: batch(orderSchema, 'orders'),
    group: v.optional(v.picklist(PERPS_TPSL_GROUPS, 'must be "order" or "position"')),
  }),
  v.forward(
    v.check((i) => {
      const coids = i.orders.flatMap((o) => (o.c ? [o.c] : []));
      return new Set(coids).size === coids.length;
    }, 'client order ids must be unique within one command'),
    ['orders'],
  ),
);

const cancelOrdersSchema = v.strictObject({ oids: batch(nonNegativeSafeInteger, 'order ids') });
const cancelOrdersCoidSchema = v.strictObject({ coids: batch(clientOrderId, 'client order ids') });
const updateLeverageSchema = v.strictObject({
  iid: nonNegativeSafeInteger,
  lev: v.pipe(
    v.number('must be an integer number'),
    v.integer('must be an integer'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(0x7fffffff, 'must fit in a 32-bit integer'),
  ),
  cross: v.boolean('must be a boolean (true = cross margin)'),
});
const internalTransferSchema = v.strictObject({
  account: address,
  token: address,
  amount: positiveDecimalString,
  to: address,
  label: v.optional(labelSchema),
});
const withdrawSchema = v.strictObject({ account: address, token: address, amount: baseUnitsString, to: address });
const deleteProxySchema = v.strictObject({ proxy: address });
const createProxySchema = v.strictObject({
  owner: address,
  proxy: address,
  expiry: positiveSafeInteger,
  label: v.optional(labelSchema),
});
const cancelAllSchema = v.strictObject({ iid: v.optional(nonNegativeSafeInteger) });
const autoCancelSchema = v.strictObject({ time: v.pipe(nonNegativeSafeInteger) });
const updateMarginSchema = v.strictObject({ iid: nonNegativeSafeInteger, amt: signedDecimalString });
function orderTuple(o: v.InferOutput<typeof orderSchema>): PerpsOrderTuple {
  const trigger: PerpsTriggerTuple | undefined = o.tr
    ? o.tr.market
      ? [true, o.tr.trp, o.tr.tpsl]
      : [o.tr.trp, o.tr.tpsl]
    : undefined;
  return [o.iid, o.buy, o.p, o.qty, o.tif, o.po ?? false, o.ro ? true : undefined, o.c, trigger];
}

function orderBody(o: v.InferOutput<typeof orderSchema>): PerpsOrderInput {
  // Key order is the body's field order: iid, buy, p, qty, tif, po, ro, c, tr.
  return {
    iid: o.iid,
    buy: o.buy,
    ...(o.p === undefined ? {} : { p: o.p }),
    qty: o.qty,
    ...(o.tif === undefined ? {} : { tif: o.tif }),
    po: o.po ?? false,
    ...(o.ro ? { ro: true } : {}),
    ...(o.c === undefined ? {} : { c: o.c }),
    ...(o.tr ? { tr: { tpsl: o.tr.tpsl, trp: o.tr.trp, ...(o.tr.market ? { market: true } : {}) } } : {}),
  };
}

const ZERO_QTY = /^0(?:\.0+)?$/;

/**
 * The rules a batch's group adds to its orders (PROTOCOL.md §5 `grp`; the perps SDK's `placePositionTpSl`).
 * Without the `"position"` group every quantity is > 0. A `"position"` group holds only the legs that protect the whole
 * position: each a take-profit or stop-loss that executes at market, reduce-only, with quantity exactly `"0"` (the
 * venue closes what the position holds when it triggers), no limit, no time in force, not post-only; all on one
 * instrument and side; at most one take-profit and one stop-loss. Throws `InvalidFieldError` naming the order's field.
 */
function groupRules(i: v.InferOutput<typeof createOrdersSchema>): void {
  const fail = (k: number, field: string, reason: string): never => {
    throw new InvalidFieldError({ field: `orders[${k}]${field}`, reason });
  };
  if (i.group !== 'position') {
    i.orders.forEach((o, k) => ZERO_QTY.test(o.qty) && fail(k, '.qty', 'must be greater than zero'));
    return;
  }
  const kinds = new Set<string>();
  const [first] = i.orders;
  i.orders.forEach((o, k) => {
    const leg = 'in a position group (each leg protects the whole position)';
    if (!o.tr) return fail(k, '.tr', `is required ${leg}`);
    if (o.qty !== '0') fail(k, '.qty', `must be "0" ${leg}: the venue closes what the position holds when it triggers`);
    if (o.tr.market !== true) fail(k, '.tr.market', `must be true ${leg}: it closes at market`);
    if (o.p !== undefined) fail(k, '.p', `is not allowed ${leg}: it closes at market`);
    if (o.ro !== true) fail(k, '.ro', `must be true ${leg}: it only closes`);
    if (o.po === true) fail(k, '.po', `is not allowed ${leg}`);
    if (o.iid !== first?.iid)
      fail(k, '.iid', 'must be the instrument of orders[0]: a position group protects one position');
    if (o.buy !== first?.buy) fail(k, '.buy', 'must be the side of orders[0]: both legs close the same position');
    if (kinds.has(o.tr.tpsl)) fail(k, '.tr.tpsl', 'a position group holds at most one take-profit and one stop-loss');
    kinds.add(o.tr.tpsl);
  });
}

/**
 * `createOrders` from an unchecked value (a request body's `op.args`): its schema and its group's rules (`groupRules`)
 * are the checks.
 */
export function createOrdersFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(createOrdersSchema, input);
  groupRules(i);
  const tuples = i.orders.map(orderTuple);
  const op: PerpsOpTuple = i.group === undefined ? ['createOrders', tuples] : ['createOrders', tuples, i.group];
  return {
    type: 'createOrders',
    op,
    body: { type: 'createOrders', args: i.orders.map(orderBody), ...(i.group === undefined ? {} : { grp: i.group }) },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'POST', path: '/v1/trade/orders' },
    weight: { request: batchRequestWeight(tuples.length), action: tuples.length },
  };
}

/** `cancelOrders` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function cancelOrdersFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(cancelOrdersSchema, input);
  return {
    type: 'cancelOrders',
    op: ['cancelOrders', [...i.oids]],
    body: { type: 'cancelOrders', args: [...i.oids] },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'DELETE', path: '/v1/trade/orders' },
    weight: { request: batchRequestWeight(i.oids.length), action: 0 },
  };
}

/** `cancelOrdersCOID` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function cancelOrdersCOIDFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(cancelOrdersCoidSchema, input);
  return {
    type: 'cancelOrdersCOID',
    op: ['cancelOrdersCOID', [...i.coids]],
    body: { type: 'cancelOrdersCOID', args: [...i.coids] },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'DELETE', path: '/v1/trade/orders-coid' },
    weight: { request: batchRequestWeight(i.coids.length), action: 0 },
  };
}

/** `updateLeverage` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function updateLeverageFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(updateLeverageSchema, input);
  return {
    type: 'updateLeverage',
    op: ['updateLeverage', [i.iid, i.lev, i.cross]],
    body: { type: 'updateLeverage', args: { iid: i.iid, lev: i.lev, cross: i.cross } },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'PATCH', path: '/v1/trade/leverage' },
    weight: { request: 1, action: 1 },
  };
}

/** `internalTransfer` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function internalTransferFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(internalTransferSchema, input);
  return {
    type: 'internalTransfer',
    op: ['internalTransfer', [i.account, i.token, i.amount, i.to]],
    body: { type: 'internalTransfer', args: { account: i.account, token: i.token, amount: i.amount, to: i.to } },
    signer: 'owner',
    struct: 'Op',
    endpoint: { method: 'POST', path: '/v1/account/internal-transfer' },
    weight: { request: 1, action: 0 },
    ...(i.label === undefined ? {} : { label: i.label }),
  };
}

/** `deleteProxy` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function deleteProxyFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(deleteProxySchema, input);
  return {
    type: 'deleteProxy',
    op: ['deleteProxy', [i.proxy]],
    body: { type: 'deleteProxy', args: { proxy: i.proxy } },
    signer: 'owner',
    struct: 'Op',
    endpoint: { method: 'DELETE', path: '/v1/account/proxy' },
    weight: { request: 1, action: 0 },
  };
}

/** `withdraw` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function withdrawFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(withdrawSchema, input);
  return {
    type: 'withdraw',
    op: ['withdraw', [i.account, i.token, i.amount, i.to]],
    body: { type: 'withdraw', args: { account: i.account, token: i.token, amount: i.amount, to: i.to } },
    signer: 'owner',
    struct: 'Withdraw',
    endpoint: { method: 'POST', path: '/v1/account/withdraw' },
    weight: { request: 1, action: 0 },
    withdraw: { account: i.account, token: i.token, amount: BigInt(i.amount), to: i.to },
  };
}

/** `createProxy` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function createProxyFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(createProxySchema, input);
  return {
    type: 'createProxy',
    op: ['createProxy', [i.proxy, i.expiry]],
    body: { type: 'createProxy', args: { owner: i.owner, proxy: i.proxy, expiry: i.expiry } },
    signer: 'owner',
    struct: 'CreateProxy',
    endpoint: { method: 'POST', path: '/v1/account/proxy' },
    weight: { request: 1, action: 0 },
    createProxy: { owner: i.owner, proxy: i.proxy, expiry: i.expiry },
    ...(i.label === undefined ? {} : { label: i.label }),
  };
}

/** `cancelAll` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function cancelAllFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(cancelAllSchema, input);
  return {
    type: 'cancelAll',
    op: ['cancelAll', i.iid === undefined ? [] : [i.iid]],
    body: { type: 'cancelAll', args: i.iid === undefined ? {} : { iid: i.iid } },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'DELETE', path: '/v1/trade/orders/all' },
    weight: { request: 1, action: 0 },
  };
}

/** `autoCancel` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function autoCancelFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(autoCancelSchema, input);
  return {
    type: 'autoCancel',
    op: ['autoCancel', [i.time]],
    body: { type: 'autoCancel', args: { time: i.time } },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'PATCH', path: '/v1/trade/auto-cancel' },
    weight: { request: 1, action: 0 },
  };
}

/** Throws `InvalidFieldError` when an autocancel `time` (ms) is neither 0 nor ≥ 5 s after `nowMs`. */
export function assertAutoCancelTime(time: number, nowMs: number): void {
  if (time !== 0 && time < nowMs + AUTO_CANCEL_MIN_LEAD_MS) {
    throw new InvalidFieldError({ field: 'time', reason: 'must be 0 (disarm) or at least 5 s in the future' });
  }
}

/** `updateMargin` from an unchecked value (a request body's `op.args`): its schema is the only check. */
export function updateMarginFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(updateMarginSchema, input);
  return {
    type: 'updateMargin',
    op: ['updateMargin', [i.iid, i.amt]],
    body: { type: 'updateMargin', args: { iid: i.iid, amt: i.amt } },
    signer: 'proxy',
    struct: 'Op',
    endpoint: { method: 'PATCH', path: '/v1/trade/margin' },
    weight: { request: 1, action: 1 },
  };
}
