/**
 * Standard permission methods (issue #20 §5): EIP-2255 `wallet_getPermissions` /
 * `wallet_requestPermissions` (the connection as an `eth_accounts` permission with MetaMask's
 * `restrictReturnedAccounts` caveat) and ERC-7715 `wallet_grantPermissions` (a standing grant, issue #17,
 * requested by a dapp in a standard shape with our own permission type `countersign-grant`).
 *
 * Pure: schemas, parsing (every failure an `InvalidFieldError` naming the field, -32602) and the answer
 * shapes. The provider (`service.ts`) asks the person and creates the grant.
 *
 * ERC-7715 as viem 2.x sends it (`viem/experimental` `grantPermissions`): params `[{ expiry (Unix s),
 * permissions: [{ type, data, policies, required? }], signer? }]`; the answer `{ expiry,
 * grantedPermissions, permissionsContext }`. Countersign signs itself, so the only signer it accepts is
 * `{ type: 'wallet' }`; it enforces no ERC-7715 policy, so `policies` must be empty (a policy it cannot
 * enforce is refused rather than silently dropped).
 */
import * as v from 'valibot';
import { grantLimitsSchema } from '../grants/schema';
import { MAX_GRANT_MS, type Grant, type GrantLimits } from '../grants/evaluate';
import { InvalidFieldError, parseOrThrow } from '../validation';
import { unwrapParams } from './methods';

/** The ERC-7715 permission type of a Countersign standing grant; its `data` is the grant's limits (`grantLimitsSchema`). */
export const GRANT_PERMISSION_TYPE = 'countersign-grant';

/** The EIP-2255 capability of a connection. */
export const ACCOUNTS_CAPABILITY = 'eth_accounts';

/** EIP-2255 caveat type restricting the accounts a site sees (MetaMask's name and shape). */
export const RESTRICT_ACCOUNTS_CAVEAT = 'restrictReturnedAccounts';

/**
 * An EIP-2255 permission as `wallet_getPermissions` / `wallet_requestPermissions` answer it: the site
 * (`invoker`, its origin), the capability (`eth_accounts`), the accounts it may see (caveat
 * `restrictReturnedAccounts`, lowercase-preserving addresses) and when it was granted (`date`, Unix ms).
 */
export type AccountsPermission = {
  invoker: string;
  parentCapability: typeof ACCOUNTS_CAPABILITY;
  caveats: [{ type: typeof RESTRICT_ACCOUNTS_CAVEAT; value: string[] }];
  date: number;
};

/** The `eth_accounts` permission of `origin` for `accounts`, granted at `date` (Unix ms). */
export function accountsPermission(origin: string, accounts: string[], date: number): AccountsPermission {
  return { invoker: origin, parentCapability: ACCOUNTS_CAPABILITY, caveats: [{ type: RESTRICT_ACCOUNTS_CAVEAT, value: accounts }], date };
}

/**
 * `wallet_requestPermissions` params: `[{ eth_accounts: {} }]` (or the object alone). Only `eth_accounts`
 * can be requested (a standing grant is `wallet_grantPermissions`); its value may carry no caveats.
 */
export const requestPermissionsSchema = v.strictObject({
  eth_accounts: v.strictObject({}, 'must be {} (Countersign chooses the account: the active one)'),
});

/** Validates `wallet_requestPermissions` params; throws `InvalidFieldError` (-32602) naming the field. */
export function parseRequestPermissions(params: unknown): void {
  parseOrThrow(requestPermissionsSchema, unwrapParams(params), 'params');
}

const hexChainId = v.pipe(v.string('must be a hex chain id'), v.regex(/^0x[0-9a-fA-F]{1,16}$/, 'must be a hex chain id'));

/** One ERC-7715 permission: only `countersign-grant`, with the grant's limits as `data` and no policies. */
const grantPermissionSchema = v.strictObject({
  type: v.literal(GRANT_PERMISSION_TYPE, `must be "${GRANT_PERMISSION_TYPE}" (the only permission type Countersign grants)`),
  data: grantLimitsSchema,
  policies: v.optional(v.pipe(v.array(v.unknown()), v.maxLength(0, 'must be empty: the limits go in data (Countersign enforces no ERC-7715 policy)'))),
  required: v.optional(v.boolean('must be a boolean')),
});

/**
 * `wallet_grantPermissions` params (ERC-7715, one request): `expiry` Unix **seconds**, exactly one
 * `countersign-grant` permission, optional `chainId` (must be Countersign's), `address` (must be the
 * connected account) and `signer` (only `{ type: 'wallet' }`). Unknown fields are refused.
 */
export const grantPermissionsSchema = v.strictObject({
  chainId: v.optional(hexChainId),
  address: v.optional(v.pipe(v.string('must be an address'), v.regex(/^0x[0-9a-fA-F]{40}$/, 'must be an address'))),
  expiry: v.pipe(v.number('must be Unix seconds'), v.safeInteger('must be Unix seconds'), v.minValue(1, 'must be Unix seconds')),
  signer: v.optional(v.strictObject({ type: v.literal('wallet', 'must be "wallet": Countersign signs, no other key or account'), data: v.optional(v.strictObject({})) })),
  permissions: v.pipe(v.array(grantPermissionSchema, 'must be a list'), v.length(1, 'must hold exactly one countersign-grant permission (one venue per grant)')),
});

/** What a `wallet_grantPermissions` asks, validated: the limits exactly as they will be stored, and the expiry (Unix ms). */
export type GrantPermissionsRequest = { limits: GrantLimits; expiresAt: number };

/**
 * Parses `wallet_grantPermissions` params for `account` on chain `chainId` at `now` (Unix ms). The
 * expiry must be 1 minute to 24 hours ahead. Throws `InvalidFieldError` (-32602) naming the field
 * (`params.permissions[0].data.maxNotional`, `params.expiry`, `params.address` …).
 */
export function parseGrantPermissions(params: unknown, o: { account: string; chainId: number; now: number }): GrantPermissionsRequest {
  const p = parseOrThrow(grantPermissionsSchema, unwrapParams(params), 'params');
  if (p.chainId !== undefined && BigInt(p.chainId) !== BigInt(o.chainId)) throw new InvalidFieldError({ field: 'params.chainId', reason: `must be Countersign's chain (0x${o.chainId.toString(16)})` });
  if (p.address !== undefined && p.address.toLowerCase() !== o.account.toLowerCase()) throw new InvalidFieldError({ field: 'params.address', reason: 'must be the connected account' });
  const expiresAt = p.expiry * 1000;
  if (!(expiresAt - o.now >= 60_000 && expiresAt - o.now <= MAX_GRANT_MS)) throw new InvalidFieldError({ field: 'params.expiry', reason: 'must be 1 minute to 24 hours from now (Unix seconds)' });
  const [permission] = p.permissions;
  if (!permission) throw new InvalidFieldError({ field: 'params.permissions', reason: 'must hold exactly one countersign-grant permission' });
  return { limits: permission.data, expiresAt };
}

/** The limits of a stored grant (what `grantedPermissions[0].data` answers). */
export function grantLimitsOf(g: Grant): GrantLimits {
  const { id: _i, origin: _o, account: _a, createdAt: _c, expiresAt: _e, names: _n, ...limits } = g;
  return limits;
}

/**
 * The ERC-7715 answer for a created grant: `expiry` (Unix s, the grant's), `grantedPermissions` (one
 * `countersign-grant` with the stored limits — never wider than requested), `permissionsContext` (the
 * grant id; the popup lists and revokes it, `wallet_revokePermissions` ends it with the connection).
 */
export function grantPermissionsAnswer(g: Grant) {
  return {
    expiry: Math.floor(g.expiresAt / 1000),
    grantedPermissions: [{ type: GRANT_PERMISSION_TYPE, data: grantLimitsOf(g), policies: [] }],
    permissionsContext: g.id,
  };
}
