/**
 * A perps command read back from a JSON body (what a gateway, or a page request, hands us): the body's
 * `op` (`{ type, args, grp? }`) and the envelope's `label` rebuilt into the command, through the same
 * builders as `./commands.ts`, with every error named under `op.` (seed "Endpoints", PROTOCOL.md §1.2).
 */
import * as v from 'valibot';
import { InvalidFieldError, parseOrThrow } from '../validation';
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
import type { PerpsCommand } from './command-types';

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
      const field = err.field === 'label' ? 'label' : root + (err.field.startsWith('[') ? '' : '.') + err.field;
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
      return prefixed('op.args', () => createProxyFrom(withLabel(argsOf(o.args, ['owner', 'proxy', 'expiry']))));
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
