/**
 * The params schemas of the page methods (each record in `methods/` names its own): the parse stage
 * (`request.ts`, stage 4; `methods/index.ts` `parseCall`) validates a request's params ONCE into one typed
 * `PageCall` before anything reads them. Keys, windows, grant checks and signatures read only the parsed value; a
 * failure is an `InvalidFieldError` naming the field (-32602) and nothing else runs.
 *
 * Params come as an object or as a one-element array holding it (both EIP-1193 styles). Unknown fields
 * are refused everywhere (strict objects). ERC-7715 as viem 2.x sends it (`viem/experimental`
 * `grantPermissions`): `[{ expiry (Unix s), permissions: [{ type, data, policies, required? }], signer? }]`;
 * the checks that need the account, chain and clock are `checkGrantPermissions`.
 */
import * as v from 'valibot';
import { InvalidFieldError, nonNegativeSafeInteger, parseOrThrow } from '../validation';
import { clobOrderRequestsSchema } from '../clob/request';
import { grantLimitsSchema } from '../grants/schema';
import { MAX_GRANT_MS, type GrantLimits } from '../grants/evaluate';

/** A page's key for one submission: 1-64 printable ASCII characters. */
const idempotencyKeySchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable ASCII characters'),
);

/**
 * `perps_sendCommand` / `perps_signCommand` params. `idempotencyKey` (optional, `perps_sendCommand`
 * only — a signed-only command submits nothing): a repeat with the same key joins the pending
 * submission or gets its unknown outcome, for any command (orders, cancels, leverage, transfers).
 */
export const perpsParamsSchema = v.strictObject({
  op: v.strictObject({ type: v.string('must be a command type'), args: v.unknown(), grp: v.optional(v.unknown()) }),
  exp: v.optional(nonNegativeSafeInteger),
  label: v.optional(v.unknown()),
  idempotencyKey: v.optional(idempotencyKeySchema),
});

/**
 * `perps_signCommand` params: those of `perps_sendCommand` without `idempotencyKey` (a signed-only command
 * submits nothing to key; -32602 `params.idempotencyKey`).
 */
export const perpsSignParamsSchema = v.pipe(
  perpsParamsSchema,
  v.forward(
    v.check((p) => p.idempotencyKey === undefined, 'is for perps_sendCommand only (perps_signCommand submits nothing)'),
    ['idempotencyKey'],
  ),
);

/** `clob_postOrders` params: 1-15 orders. */
export const clobOrdersParamsSchema = v.strictObject({
  orders: clobOrderRequestsSchema,
  /** Optional: the page's key for this submission; a repeat with the same key joins it or gets its outcome. */
  idempotencyKey: v.optional(idempotencyKeySchema),
});

/** `clob_signRequest` params: method, path (with query) and the exact body text. */
export const clobSignParamsSchema = v.strictObject({
  method: v.picklist(['GET', 'POST', 'DELETE', 'PUT'], 'must be GET, POST, DELETE or PUT'),
  requestPath: v.pipe(
    v.string('must be a string'),
    v.regex(/^\/[\x21-\x7e]{0,511}$/, 'must be a path starting with / (printable ASCII, at most 512 characters)'),
  ),
  body: v.optional(v.pipe(v.string('must be the exact JSON text to send'), v.maxLength(60_000, 'is too long'))),
});

/**
 * `wallet_requestPermissions` params (EIP-2255): `[{ eth_accounts: {} }]` (or the object alone). Only
 * `eth_accounts` can be requested (a standing grant is `wallet_grantPermissions`); its value may carry no caveats.
 */
export const requestPermissionsSchema = v.strictObject({
  eth_accounts: v.strictObject({}, 'must be {} (Countersign chooses the account: the active one)'),
});

/**
 * The ERC-7715 permission type of a Countersign standing grant; its `data` is the grant's limits (`grantLimitsSchema`).
 */
export const GRANT_PERMISSION_TYPE = 'countersign-grant';

const hexChainId = v.pipe(
  v.string('must be a hex chain id'),
  v.regex(/^0x[0-9a-fA-F]{1,16}$/, 'must be a hex chain id'),
);

/** One ERC-7715 permission: only `countersign-grant`, with the grant's limits as `data` and no policies. */
const grantPermissionSchema = v.strictObject({
  type: v.literal(
    GRANT_PERMISSION_TYPE,
    `must be "${GRANT_PERMISSION_TYPE}" (the only permission type Countersign grants)`,
  ),
  data: grantLimitsSchema,
  policies: v.optional(
    v.pipe(
      v.array(v.unknown()),
      v.maxLength(0, 'must be empty: the limits go in data (Countersign enforces no ERC-7715 policy)'),
    ),
  ),
  required: v.optional(v.boolean('must be a boolean')),
});

/**
 * `wallet_grantPermissions` params (ERC-7715, one request): `expiry` Unix **seconds**, exactly one
 * `countersign-grant` permission, optional `chainId` (must be Countersign's), `address` (must be the
 * connected account) and `signer` (only `{ type: 'wallet' }`: Countersign signs itself). Unknown fields
 * are refused.
 */
export const grantPermissionsSchema = v.strictObject({
  chainId: v.optional(hexChainId),
  address: v.optional(v.pipe(v.string('must be an address'), v.regex(/^0x[0-9a-fA-F]{40}$/, 'must be an address'))),
  expiry: v.pipe(
    v.number('must be Unix seconds'),
    v.safeInteger('must be Unix seconds'),
    v.minValue(1, 'must be Unix seconds'),
  ),
  signer: v.optional(
    v.strictObject({
      type: v.literal('wallet', 'must be "wallet": Countersign signs, no other key or account'),
      data: v.optional(v.strictObject({})),
    }),
  ),
  permissions: v.pipe(
    v.array(grantPermissionSchema, 'must be a list'),
    v.length(1, 'must hold exactly one countersign-grant permission (one venue per grant)'),
  ),
});

/** Parsed `perps_sendCommand` / `perps_signCommand` params. */
export type PerpsParams = v.InferOutput<typeof perpsParamsSchema>;
/** Parsed `clob_postOrders` params. */
export type ClobOrdersParams = v.InferOutput<typeof clobOrdersParamsSchema>;
/** Parsed `clob_signRequest` params. */
export type ClobSignParams = v.InferOutput<typeof clobSignParamsSchema>;
/** Parsed `wallet_grantPermissions` params (before the account, chain and expiry checks). */
export type GrantPermissionsParams = v.InferOutput<typeof grantPermissionsSchema>;

/**
 * What a `wallet_grantPermissions` asks, validated: the limits exactly as they will be stored, and the expiry (Unix
 * ms).
 */
export type GrantPermissionsRequest = { limits: GrantLimits; expiresAt: number };

/**
 * Checks parsed `wallet_grantPermissions` params (`methods/index.ts` `parseCall`) for `account` on chain
 * `chainId` at `now` (Unix ms): the chain and address, when named, must be these; the expiry must be 1 minute to
 * 24 hours ahead. Throws `InvalidFieldError` (-32602) naming the field (`params.expiry`, `params.address` …).
 */
export function checkGrantPermissions(
  p: GrantPermissionsParams,
  o: { account: string; chainId: number; now: number },
): GrantPermissionsRequest {
  if (p.chainId !== undefined && BigInt(p.chainId) !== BigInt(o.chainId))
    throw new InvalidFieldError({
      field: 'params.chainId',
      reason: `must be Countersign's chain (0x${o.chainId.toString(16)})`,
    });
  if (p.address !== undefined && p.address.toLowerCase() !== o.account.toLowerCase())
    throw new InvalidFieldError({ field: 'params.address', reason: 'must be the connected account' });
  const expiresAt = p.expiry * 1000;
  if (!(expiresAt - o.now >= 60_000 && expiresAt - o.now <= MAX_GRANT_MS))
    throw new InvalidFieldError({
      field: 'params.expiry',
      reason: 'must be 1 minute to 24 hours from now (Unix seconds)',
    });
  const [permission] = p.permissions;
  if (!permission)
    throw new InvalidFieldError({
      field: 'params.permissions',
      reason: 'must hold exactly one countersign-grant permission',
    });
  return { limits: permission.data, expiresAt };
}
