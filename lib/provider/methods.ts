/**
 * The page-facing method table (issue #6 §3): a literal policy per method — whether it needs a
 * connected origin, an unlocked vault, and which approval — plus the params schema. Unknown methods
 * are refused (4200); nothing is forwarded anywhere by default.
 */
import * as v from 'valibot';
import { nonNegativeSafeInteger } from '../validation';
import { clobOrderRequestsSchema } from '../clob/request';

export type MethodPolicy = { connected: boolean; unlocked: boolean; approval: 'none' | 'connect' | 'sign' };

export const METHOD_POLICY = {
  eth_chainId: { connected: false, unlocked: false, approval: 'none' },
  eth_accounts: { connected: false, unlocked: false, approval: 'none' },
  eth_requestAccounts: { connected: false, unlocked: true, approval: 'connect' },
  wallet_connect: { connected: false, unlocked: true, approval: 'connect' },
  wallet_revokePermissions: { connected: true, unlocked: false, approval: 'none' },
  perps_sendCommand: { connected: true, unlocked: true, approval: 'sign' },
  perps_signCommand: { connected: true, unlocked: true, approval: 'sign' },
  clob_postOrders: { connected: true, unlocked: true, approval: 'sign' },
  clob_signRequest: { connected: true, unlocked: true, approval: 'sign' },
  eth_signTypedData_v4: { connected: true, unlocked: true, approval: 'sign' },
} as const satisfies Record<string, MethodPolicy>;

export type PageMethod = keyof typeof METHOD_POLICY;

export function isPageMethod(m: string): m is PageMethod {
  return Object.hasOwn(METHOD_POLICY, m);
}

/** `perps_sendCommand` / `perps_signCommand` params. */
export const perpsParamsSchema = v.strictObject({
  op: v.strictObject({ type: v.string('must be a command type'), args: v.unknown(), grp: v.optional(v.unknown()) }),
  exp: v.optional(nonNegativeSafeInteger),
  label: v.optional(v.unknown()),
});


/** `clob_postOrders` params: 1-15 orders. */
export const clobOrdersParamsSchema = v.strictObject({ orders: clobOrderRequestsSchema });

/** `clob_signRequest` params: method, path (with query) and the exact body text. */
export const clobSignParamsSchema = v.strictObject({
  method: v.picklist(['GET', 'POST', 'DELETE', 'PUT'], 'must be GET, POST, DELETE or PUT'),
  requestPath: v.pipe(v.string('must be a string'), v.regex(/^\/[\x21-\x7e]{0,511}$/, 'must be a path starting with / (printable ASCII, at most 512 characters)')),
  body: v.optional(v.pipe(v.string('must be the exact JSON text to send'), v.maxLength(60_000, 'is too long'))),
});

/** Accepts params as an object or as a one-element array holding it (both EIP-1193 styles). */
export function unwrapParams(params: unknown): unknown {
  return Array.isArray(params) && params.length === 1 ? params[0] : params;
}
