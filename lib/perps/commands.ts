/**
 * Perps gateway commands: one validated input per command → the positional tuple that is signed and
 * the named JSON body that is sent, built together so they can never disagree.
 *
 * Source: seed `perps-gateway-api.md` ("Order item", "Other command arguments", "Endpoints", "Limits")
 * and PROTOCOL.md §1.2–§1.3 (tuple shapes, `tif`, who signs what). Where they differ, PROTOCOL.md wins:
 * internal transfer, withdraw and delete-proxy are signed by the **owner** key.
 *
 * Every builder throws `InvalidFieldError` (naming the field, e.g. `args[0].qty`) before anything
 * is built; a returned command is always well-formed.
 */
import * as v from 'valibot';
import type { Address } from 'viem';
import {
  address,
  baseUnitsString,
  clientOrderId,
  InvalidFieldError,
  nonNegativeSafeInteger,
  parseOrThrow,
  positiveDecimalString,
  positiveSafeInteger,
  signedDecimalString,
  utf8Length,
} from '../validation';

/** Most orders (or ids) accepted in one batch command. The seed leaves the gateway's maximum unshown; this is our bound. */
export const PERPS_MAX_BATCH = 100;

/** Time in force of a non-trigger order (PROTOCOL.md §1.2). */
export type TimeInForce = 'gtc' | 'ioc' | 'fok';

/** A trigger (take-profit / stop-loss) on an order. `trp` is the decimal trigger price. */
export type PerpsTriggerInput = { tpsl: 'tp' | 'sl'; trp: string; market?: boolean };

/**
 * One order as the JSON body carries it (seed "Order item" plus `tif` from PROTOCOL.md §1.2).
 * - `iid` instrument id; `buy` side; `qty` decimal quantity (> 0); `p` decimal price (> 0), absent for
 *   market-style ioc/fok; `tif` required unless `tr` is given (then forbidden); `po` post-only (only with
 *   gtc, default false); `ro` reduce-only (`false` is dropped); `c` client order id (32 lowercase hex);
 *   `tr` trigger.
 */
export type PerpsOrderInput = {
  iid: number;
  buy: boolean;
  qty: string;
  p?: string;
  tif?: TimeInForce;
  po?: boolean;
  ro?: boolean;
  c?: string;
  tr?: PerpsTriggerInput;
};

/** Trigger tuple `[market?, trp, kind]`. */
export type PerpsTriggerTuple = [true, string, 'tp' | 'sl'] | [string, 'tp' | 'sl'];
/** Order tuple `[iid, buy, price?, qty, tif?, po, ro?, coid?, trigger?]`, `undefined` slots kept (compacted when hashed). */
export type PerpsOrderTuple = [
  number,
  boolean,
  string | undefined,
  string,
  TimeInForce | undefined,
  boolean,
  true | undefined,
  string | undefined,
  PerpsTriggerTuple | undefined,
];

/** The positional tuple signed for a command (PROTOCOL.md §1.2): `[type, args, group?]`. */
export type PerpsOpTuple = readonly [string, readonly unknown[]] | readonly [string, readonly unknown[], string];

/** Which typed-data struct a command's signature covers (PROTOCOL.md §1.2–§1.3). */
export type PerpsStruct = 'Op' | 'Withdraw' | 'CreateProxy';

/** HTTP method and path of a command, relative to the perps base URL (seed "Endpoints"). */
export type PerpsEndpoint = { method: 'POST' | 'DELETE' | 'PATCH'; path: string };

/** Every command type this module builds. The last three come from the reference SDK (PROTOCOL.md §1.2). */
export type PerpsCommandType =
  | 'createOrders'
  | 'cancelOrders'
  | 'cancelOrdersCOID'
  | 'updateLeverage'
  | 'internalTransfer'
  | 'deleteProxy'
  | 'withdraw'
  | 'createProxy'
  | 'cancelAll'
  | 'autoCancel'
  | 'updateMargin';

/**
 * JSON `op` of the envelope: `{ type, args, grp? }`, one member per command type (seed "Endpoints";
 * PROTOCOL.md §1.2). Switch on `type` to read `args`. Decimals are strings; `time`/`expiry` Unix ms;
 * withdraw `amount` integer base units, internalTransfer `amount` decimal USDC.
 */
export type PerpsBodyOp =
  | { type: 'createOrders'; args: PerpsOrderInput[]; grp?: string }
  | { type: 'cancelOrders'; args: number[] }
  | { type: 'cancelOrdersCOID'; args: string[] }
  | { type: 'updateLeverage'; args: { iid: number; lev: number; cross: boolean } }
  | { type: 'internalTransfer'; args: { account: string; token: string; amount: string; to: string } }
  | { type: 'deleteProxy'; args: { proxy: string } }
  | { type: 'withdraw'; args: { account: string; token: string; amount: string; to: string } }
  | { type: 'createProxy'; args: { owner: string; proxy: string; expiry: number } }
  | { type: 'cancelAll'; args: { iid?: number } }
  | { type: 'autoCancel'; args: { time: number } }
  | { type: 'updateMargin'; args: { iid: number; amt: string } };

/**
 * A built command.
 * - `op`: positional tuple. For `Op`-signed commands it is what `hashPerpsOp` hashes; for `withdraw`
 *   and `createProxy` it lists the struct's fields in order (`[account, token, amount, to]`,
 *   `[proxy, expiry]`) and `message` holds the typed values that are signed.
 * - `body`: the JSON `op` object sent to the gateway.
 * - `signer`: which key signs it. `label`: unsigned top-level envelope field, when given.
 * - `weight`: request and action weight (seed "Limits"); `endpoint`: where it is sent.
 */
export type PerpsCommand = {
  type: PerpsCommandType;
  op: PerpsOpTuple;
  body: PerpsBodyOp;
  signer: 'proxy' | 'owner';
  struct: PerpsStruct;
  endpoint: PerpsEndpoint;
  weight: { request: number; action: number };
  label?: string;
  /** Withdraw: the `Withdraw` values (amount in base units). */
  withdraw?: { account: Address; token: Address; amount: bigint; to: Address };
  /** createProxy: the `CreateProxy` values (`expiry` in Unix ms). */
  createProxy?: { owner: Address; proxy: Address; expiry: number };
};

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
    qty: positiveDecimalString,
    p: v.optional(positiveDecimalString),
    tif: v.optional(v.picklist(['gtc', 'ioc', 'fok'], 'must be "gtc", "ioc" or "fok"')),
    po: v.optional(v.boolean('must be a boolean')),
    ro: v.optional(v.boolean('must be a boolean')),
    c: v.optional(clientOrderId),
    tr: v.optional(triggerSchema),
  }),
  v.forward(
    v.check((o) => (o.tr ? o.tif === undefined : o.tif !== undefined), 'is required on a non-trigger order and not allowed on a trigger order'),
    ['tif'],
  ),
  v.forward(v.check((o) => o.tif !== 'gtc' || o.p !== undefined, 'is required for a gtc order'), ['p']),
  v.forward(v.check((o) => !o.po || o.tif === 'gtc', 'post-only is only valid with gtc'), ['po']),
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
    group: v.optional(
      v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/, 'must be a short identifier such as "normalTpsl"')),
    ),
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

/** Input of `createOrders`: 1..PERPS_MAX_BATCH orders and an optional group (becomes `op.grp`). */
export type CreateOrdersInput = { orders: PerpsOrderInput[]; group?: string };
/** Input of `cancelOrders`: order ids. */
export type CancelOrdersInput = { oids: number[] };
/** Input of `cancelOrdersCOID`: client order ids. */
export type CancelOrdersCoidInput = { coids: string[] };
/** Input of `updateLeverage`: instrument id, leverage (1..2^31−1), cross margin flag. */
export type UpdateLeverageInput = { iid: number; lev: number; cross: boolean };
/** Input of `internalTransfer`: `amount` decimal (human units); `label` unsigned, 1-64 UTF-8 bytes. */
export type InternalTransferInput = { account: string; token: string; amount: string; to: string; label?: string };
/** Input of `withdraw`: `amount` integer base units as a string. */
export type WithdrawInput = { account: string; token: string; amount: string; to: string };
/** Input of `deleteProxy`. */
export type DeleteProxyInput = { proxy: string };
/** Input of `createProxy`: `expiry` Unix ms. */
export type CreateProxyInput = { owner: string; proxy: string; expiry: number; label?: string };
/** Input of `cancelAll`: optionally one instrument. */
export type CancelAllInput = { iid?: number };
/** Input of `autoCancel`: `time` Unix ms (0 disarms). */
export type AutoCancelInput = { time: number };
/** Input of `updateMargin`: signed decimal amount. */
export type UpdateMarginInput = { iid: number; amt: string };

// ---------------------------------------------------------------------------------------------
// Weights (seed "Limits")

/** Request weight of a batch command of `n` items: `1 + floor(n / 20)`. */
export function batchRequestWeight(n: number): number {
  return 1 + Math.floor(n / 20);
}

/** Autocancel lead time the gateway requires when arming (PROTOCOL.md §1.2): 5 s. */
export const AUTO_CANCEL_MIN_LEAD_MS = 5_000;

// ---------------------------------------------------------------------------------------------
// Builders

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

/** createOrders (seed endpoint 3; proxy key). Request weight `1 + floor(n/20)`, action weight `n`. */
export function createOrders(input: CreateOrdersInput): PerpsCommand {
  return createOrdersFrom(input);
}

/** `createOrders` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function createOrdersFrom(input: unknown): PerpsCommand {
  const i = parseOrThrow(createOrdersSchema, input);
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

/** cancelOrders by order id (seed endpoint 5; proxy key). Request weight `1 + floor(n/20)`, action 0. */
export function cancelOrders(input: CancelOrdersInput): PerpsCommand {
  return cancelOrdersFrom(input);
}

/** `cancelOrders` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function cancelOrdersFrom(input: unknown): PerpsCommand {
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

/** cancelOrdersCOID by client order id (seed endpoint 4; proxy key). Request weight `1 + floor(n/20)`, action 0. */
export function cancelOrdersCOID(input: CancelOrdersCoidInput): PerpsCommand {
  return cancelOrdersCOIDFrom(input);
}

/** `cancelOrdersCOID` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function cancelOrdersCOIDFrom(input: unknown): PerpsCommand {
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

/** updateLeverage (seed endpoint 1; proxy key). Request weight 1, action weight 1. */
export function updateLeverage(input: UpdateLeverageInput): PerpsCommand {
  return updateLeverageFrom(input);
}

/** `updateLeverage` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function updateLeverageFrom(input: unknown): PerpsCommand {
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

/** internalTransfer (seed endpoint 6; **owner** key per PROTOCOL.md §1.3). `label` is unsigned. Weight 1 / 0. */
export function internalTransfer(input: InternalTransferInput): PerpsCommand {
  return internalTransferFrom(input);
}

/** `internalTransfer` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function internalTransferFrom(input: unknown): PerpsCommand {
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

/** deleteProxy (seed endpoint 8; **owner** key per PROTOCOL.md §1.3). Weight 1 / 0. */
export function deleteProxy(input: DeleteProxyInput): PerpsCommand {
  return deleteProxyFrom(input);
}

/** `deleteProxy` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function deleteProxyFrom(input: unknown): PerpsCommand {
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

/**
 * withdraw (seed endpoint 7; **owner** key, `Withdraw` struct on the withdraw domain, `ts` in Unix
 * seconds; PROTOCOL.md §1.3). `amount` is integer base units. Weight 1 / 0.
 */
export function withdraw(input: WithdrawInput): PerpsCommand {
  return withdrawFrom(input);
}

/** `withdraw` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function withdrawFrom(input: unknown): PerpsCommand {
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

/**
 * createProxy: issues a proxy key (`POST /v1/account/proxy`; **owner** key, `CreateProxy` struct on the
 * command domain; PROTOCOL.md §1.3). `expiry` Unix ms. Weight 1 / 0 (the seed does not list it).
 */
export function createProxy(input: CreateProxyInput): PerpsCommand {
  return createProxyFrom(input);
}

/** `createProxy` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function createProxyFrom(input: unknown): PerpsCommand {
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

/** cancelAll (reference SDK, `DELETE /v1/trade/orders/all`; proxy key). Weight 1 / 0 (our assumption). */
export function cancelAll(input: CancelAllInput = {}): PerpsCommand {
  return cancelAllFrom(input);
}

/** `cancelAll` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function cancelAllFrom(input: unknown): PerpsCommand {
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

/**
 * autoCancel (reference SDK, `PATCH /v1/trade/auto-cancel`; proxy key): `time` Unix ms, `0` disarms.
 * Arming closer than 5 s ahead is checked by `assertAutoCancelTime`. Weight 1 / 0 (our assumption).
 */
export function autoCancel(input: AutoCancelInput): PerpsCommand {
  return autoCancelFrom(input);
}

/** `autoCancel` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function autoCancelFrom(input: unknown): PerpsCommand {
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

/** updateMargin (reference SDK, isolated margin; proxy key): signed decimal `amt`. Weight 1 / 1 (our assumption). */
export function updateMargin(input: UpdateMarginInput): PerpsCommand {
  return updateMarginFrom(input);
}

/** `updateMargin` from an unchecked value (a request body's `op.args`): its schema is the only check. */
function updateMarginFrom(input: unknown): PerpsCommand {
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

// ---------------------------------------------------------------------------------------------
// From a JSON body back to a command (what a gateway, or a page request, hands us)

const bodyOpSchema = v.object({
  type: v.picklist(
    [
      'createOrders',
      'cancelOrders',
      'cancelOrdersCOID',
      'updateLeverage',
      'internalTransfer',
      'deleteProxy',
      'withdraw',
      'createProxy',
      'cancelAll',
      'autoCancel',
      'updateMargin',
    ],
    'must be a known command type',
  ),
  args: v.unknown(),
  grp: v.optional(v.unknown()),
});

function prefixed<T>(root: string, fn: () => T, wrapper?: string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof InvalidFieldError && wrapper && err.field.startsWith(wrapper)) {
      // The builder's wrapper key (`oids`, `coids`) is not in the body: `oids[0]` → `op.args[0]`.
      const rest = err.field.slice(wrapper.length);
      throw new InvalidFieldError({ field: root + rest, reason: err.reason });
    }
    if (err instanceof InvalidFieldError) {
      // `label` is a top-level envelope field, not part of `op.args`.
      // Fields already named from the body (`op.…`) keep their name.
      if (err.field.startsWith('op.') || err.field === 'op') throw err;
      const field =
        err.field === 'label' ? 'label' : root + (err.field.startsWith('[') ? '' : '.') + err.field;
      throw new InvalidFieldError({ field, reason: err.reason });
    }
    throw err;
  }
}

function argsOf(args: unknown, keys: readonly string[]): object {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new InvalidFieldError({ field: 'op.args', reason: 'must be an object' });
  }
  for (const k of Object.keys(args)) {
    if (!keys.includes(k)) throw new InvalidFieldError({ field: `op.args.${k}`, reason: 'is not a known field' });
  }
  return args;
}

function arrayArgs(args: unknown): unknown[] {
  if (!Array.isArray(args)) throw new InvalidFieldError({ field: 'op.args', reason: 'must be an array' });
  return args;
}

/**
 * Rebuilds a command from the JSON `op` of an envelope (`{ type, args, grp? }`) plus the envelope's
 * top-level `label`. Used by the gateway to rebuild the signed tuple, and by the bridge to validate a
 * page's request. Throws `InvalidFieldError` naming the field under `op.` when anything is off.
 */
export function commandFromBody(op: unknown, label?: unknown): PerpsCommand {
  const o = parseOrThrow(bodyOpSchema, op, 'op');
  const withLabel = (x: object) => (label === undefined ? x : { ...x, label });
  const labelNotAllowed = () => {
    if (label !== undefined) throw new InvalidFieldError({ field: 'label', reason: `is not allowed on ${o.type}` });
  };
  if (o.grp !== undefined && o.type !== 'createOrders') {
    throw new InvalidFieldError({ field: 'op.grp', reason: 'is only allowed on createOrders' });
  }
  switch (o.type) {
    case 'createOrders': {
      labelNotAllowed();
      const orders = arrayArgs(o.args);
      return prefixed('op', () => {
        try {
          return createOrdersFrom({ orders, ...(o.grp === undefined ? {} : { group: o.grp }) });
        } catch (err) {
          if (err instanceof InvalidFieldError) {
            const f = err.field.replace(/^orders/, 'args').replace(/^group/, 'grp');
            throw new InvalidFieldError({ field: f, reason: err.reason });
          }
          throw err;
        }
      });
    }
    case 'cancelOrders':
      labelNotAllowed();
      return prefixed('op.args', () => cancelOrdersFrom({ oids: arrayArgs(o.args) }), 'oids');
    case 'cancelOrdersCOID':
      labelNotAllowed();
      return prefixed('op.args', () => cancelOrdersCOIDFrom({ coids: arrayArgs(o.args) }), 'coids');
    case 'updateLeverage':
      labelNotAllowed();
      return prefixed('op.args', () => updateLeverageFrom(argsOf(o.args, ['iid', 'lev', 'cross'])));
    case 'internalTransfer':
      return prefixed('op.args', () =>
        internalTransferFrom(withLabel(argsOf(o.args, ['account', 'token', 'amount', 'to']))),
      );
    case 'deleteProxy':
      labelNotAllowed();
      return prefixed('op.args', () => deleteProxyFrom(argsOf(o.args, ['proxy'])));
    case 'withdraw':
      labelNotAllowed();
      return prefixed('op.args', () => withdrawFrom(argsOf(o.args, ['account', 'token', 'amount', 'to'])));
    case 'createProxy':
      return prefixed('op.args', () =>
        createProxyFrom(withLabel(argsOf(o.args, ['owner', 'proxy', 'expiry']))),
      );
    case 'cancelAll':
      labelNotAllowed();
      return prefixed('op.args', () => cancelAllFrom(argsOf(o.args, ['iid'])));
    case 'autoCancel':
      labelNotAllowed();
      return prefixed('op.args', () => autoCancelFrom(argsOf(o.args, ['time'])));
    case 'updateMargin':
      labelNotAllowed();
      return prefixed('op.args', () => updateMarginFrom(argsOf(o.args, ['iid', 'amt'])));
  }
}
