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
 *
 * The shapes are in `./command-types.ts`, the schemas and builders in `./command-build.ts`, the body →
 * command path in `./command-body.ts`; this module is their one entry.
 */
import {
  createOrdersFrom,
  cancelOrdersFrom,
  cancelOrdersCOIDFrom,
  updateLeverageFrom,
  internalTransferFrom,
  deleteProxyFrom,
  withdrawFrom,
  createProxyFrom,
  cancelAllFrom,
  autoCancelFrom,
  updateMarginFrom,
} from './command-build';
import type {
  AutoCancelInput,
  CancelAllInput,
  CancelOrdersCoidInput,
  CancelOrdersInput,
  CreateOrdersInput,
  CreateProxyInput,
  DeleteProxyInput,
  InternalTransferInput,
  PerpsCommand,
  UpdateLeverageInput,
  UpdateMarginInput,
  WithdrawInput,
} from './command-types';

export * from './command-types';
export { assertAutoCancelTime } from './command-build';
export { commandFromBody } from './command-body';

/** createOrders (seed endpoint 3; proxy key). Request weight `1 + floor(n/20)`, action weight `n`. */
export function createOrders(input: CreateOrdersInput): PerpsCommand {
  return createOrdersFrom(input);
}

/** cancelOrders by order id (seed endpoint 5; proxy key). Request weight `1 + floor(n/20)`, action 0. */
export function cancelOrders(input: CancelOrdersInput): PerpsCommand {
  return cancelOrdersFrom(input);
}

/** cancelOrdersCOID by client order id (seed endpoint 4; proxy key). Request weight `1 + floor(n/20)`, action 0. */
export function cancelOrdersCOID(input: CancelOrdersCoidInput): PerpsCommand {
  return cancelOrdersCOIDFrom(input);
}

/** updateLeverage (seed endpoint 1; proxy key). Request weight 1, action weight 1. */
export function updateLeverage(input: UpdateLeverageInput): PerpsCommand {
  return updateLeverageFrom(input);
}

/** internalTransfer (seed endpoint 6; **owner** key per PROTOCOL.md §1.3). `label` is unsigned. Weight 1 / 0. */
export function internalTransfer(input: InternalTransferInput): PerpsCommand {
  return internalTransferFrom(input);
}

/** deleteProxy (seed endpoint 8; **owner** key per PROTOCOL.md §1.3). Weight 1 / 0. */
export function deleteProxy(input: DeleteProxyInput): PerpsCommand {
  return deleteProxyFrom(input);
}

/**
 * withdraw (seed endpoint 7; **owner** key, `Withdraw` struct on the withdraw domain, `ts` in Unix
 * seconds; PROTOCOL.md §1.3). `amount` is integer base units. Weight 1 / 0.
 */
export function withdraw(input: WithdrawInput): PerpsCommand {
  return withdrawFrom(input);
}

/**
 * createProxy: issues a proxy key (`POST /v1/account/proxy`; **owner** key, `CreateProxy` struct on the
 * command domain; PROTOCOL.md §1.3). `expiry` Unix ms. Weight 1 / 0 (the seed does not list it).
 */
export function createProxy(input: CreateProxyInput): PerpsCommand {
  return createProxyFrom(input);
}

/** cancelAll (reference SDK, `DELETE /v1/trade/orders/all`; proxy key). Weight 1 / 0 (our assumption). */
export function cancelAll(input: CancelAllInput = {}): PerpsCommand {
  return cancelAllFrom(input);
}

/**
 * autoCancel (reference SDK, `PATCH /v1/trade/auto-cancel`; proxy key): `time` Unix ms, `0` disarms.
 * Arming closer than 5 s ahead is checked by `assertAutoCancelTime`. Weight 1 / 0 (our assumption).
 */
export function autoCancel(input: AutoCancelInput): PerpsCommand {
  return autoCancelFrom(input);
}

/** updateMargin (reference SDK, isolated margin; proxy key): signed decimal `amt`. Weight 1 / 1 (our assumption). */
export function updateMargin(input: UpdateMarginInput): PerpsCommand {
  return updateMarginFrom(input);
}
