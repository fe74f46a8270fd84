/**
 * Perps command shapes (seed `perps-gateway-api.md` "Order item", "Other command arguments", "Limits";
 * PROTOCOL.md §1.2–§1.3): each command's input, the positional tuple that is signed, the JSON body that
 * is sent, the endpoint, the signer and the request and action weights. Built by `./command-build.ts`,
 * read back from a body by `./command-body.ts`; `./commands.ts` is the module to import.
 */
import type { Address } from 'viem';

/**
 * Most orders (or ids) accepted in one batch command. The seed leaves the gateway's maximum unshown; this is our bound.
 */
export const PERPS_MAX_BATCH = 100;

/**
 * The groups `createOrders` may carry as `op.grp` (PROTOCOL.md §5; the SDK's `PerpsTpSlScope`): `"order"`
 * ties take-profit / stop-loss legs to an entry order of the same batch; `"position"` holds legs that
 * protect the whole position (quantity `"0"`: the venue closes what the position holds when one triggers).
 */
export const PERPS_TPSL_GROUPS = ['order', 'position'] as const;
/** A `createOrders` group (`PERPS_TPSL_GROUPS`). */
export type PerpsTpslGroup = (typeof PERPS_TPSL_GROUPS)[number];

/**
 * Whether order `o` of a built command is a leg protecting a whole position: a trigger of quantity `"0"`,
 * which only a `"position"` group signs (`createOrders` refuses a zero quantity anywhere else).
 */
export const isWholePositionLeg = (o: Pick<PerpsOrderInput, 'qty' | 'tr'>): boolean =>
  o.tr !== undefined && o.qty === '0';

/** Time in force of a non-trigger order (PROTOCOL.md §1.2). */
export type TimeInForce = 'gtc' | 'ioc' | 'fok';

/** A trigger (take-profit / stop-loss) on an order. `trp` is the decimal trigger price. */
export type PerpsTriggerInput = { tpsl: 'tp' | 'sl'; trp: string; market?: boolean };

/**
 * One order as the JSON body carries it (seed "Order item" plus `tif` from PROTOCOL.md §1.2).
 * - `iid` instrument id; `buy` side; `qty` decimal quantity (> 0; exactly `"0"` on a leg of a `"position"`
 *   group: `isWholePositionLeg`); `p` decimal price (> 0), absent for
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
/**
 * Order tuple `[iid, buy, price?, qty, tif?, po, ro?, coid?, trigger?]`, `undefined` slots kept (compacted when
 * hashed).
 */
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
  | { type: 'createOrders'; args: PerpsOrderInput[]; grp?: PerpsTpslGroup }
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

/** Input of `createOrders`: 1..PERPS_MAX_BATCH orders and an optional group (becomes `op.grp`; `PERPS_TPSL_GROUPS`). */
export type CreateOrdersInput = { orders: PerpsOrderInput[]; group?: PerpsTpslGroup };
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
