/**
 * The page-facing method table (issue #6 §3): a literal policy per method — whether it needs a
 * connected origin, an unlocked vault, and which approval — plus the params schema. Unknown methods
 * are refused (4200); nothing is forwarded anywhere by default.
 *
 * `eth_signTypedData_v4` is listed only to be refused with a reason (issue #13): a page never hands
 * Countersign bytes or structs to sign, only decoded requests (`perps_*`, `clob_*`).
 */
import * as v from 'valibot';
import { invalidParams, unsupported } from '../errors/rpc';
import { nonNegativeSafeInteger } from '../validation';
import { clobOrderRequestsSchema } from '../clob/request';

/**
 * What a page method needs before it runs: a `connected` origin (4100 otherwise), an `unlocked` vault
 * (4900 otherwise; a trading session serves only `SESSION_METHODS` in `service.ts`), and which approval
 * it asks for (`refused`: always 4200).
 */
export type MethodPolicy = { connected: boolean; unlocked: boolean; approval: 'none' | 'connect' | 'sign' | 'refused' };

/** The policy of every page method Countersign serves; any other method is refused with 4200. */
export const METHOD_POLICY = {
  eth_chainId: { connected: false, unlocked: false, approval: 'none' },
  eth_accounts: { connected: false, unlocked: false, approval: 'none' },
  // A locked vault opens the unlock in the approval window, then the connection (issue #20 §5).
  eth_requestAccounts: { connected: false, unlocked: false, approval: 'connect' },
  wallet_connect: { connected: false, unlocked: false, approval: 'connect' },
  wallet_requestPermissions: { connected: false, unlocked: false, approval: 'connect' },
  wallet_getPermissions: { connected: false, unlocked: false, approval: 'none' },
  wallet_revokePermissions: { connected: true, unlocked: false, approval: 'none' },
  wallet_grantPermissions: { connected: true, unlocked: true, approval: 'sign' },
  perps_sendCommand: { connected: true, unlocked: true, approval: 'sign' },
  perps_signCommand: { connected: true, unlocked: true, approval: 'sign' },
  clob_postOrders: { connected: true, unlocked: true, approval: 'sign' },
  clob_signRequest: { connected: true, unlocked: true, approval: 'sign' },
  eth_signTypedData_v4: { connected: false, unlocked: false, approval: 'refused' },
} as const satisfies Record<string, MethodPolicy>;

/** A method name listed in `METHOD_POLICY`. */
export type PageMethod = keyof typeof METHOD_POLICY;

/** Whether `m` is a page method Countersign serves (an own key of `METHOD_POLICY`). */
export function isPageMethod(m: string): m is PageMethod {
  return Object.hasOwn(METHOD_POLICY, m);
}

/** A page's key for one submission: 1-64 printable ASCII characters (issue #20). */
const idempotencyKeySchema = v.pipe(v.string('must be a string'), v.regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable ASCII characters'));

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


/** `clob_postOrders` params: 1-15 orders. */
export const clobOrdersParamsSchema = v.strictObject({
  orders: clobOrderRequestsSchema,
  /** Optional: the page's key for this submission; a repeat with the same key joins it or gets its outcome (issue #20). */
  idempotencyKey: v.optional(idempotencyKeySchema),
});

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

/** Why `eth_signTypedData_v4` refuses a payload, by its primary type (issue #13 §1). */
const TYPED_DATA_REFUSALS = new Map<string, string>([
  ['Op', 'Countersign does not sign perps Op typed data from sites: send the command itself with perps_sendCommand or perps_signCommand, which show it decoded and build the signed data in the extension.'],
  ['Withdraw', 'Countersign does not sign Withdraw typed data from sites: send a withdraw command with perps_sendCommand, which shows the destination and amount.'],
  ['CreateProxy', 'Sites cannot issue proxy keys; use the extension.'],
  ['ClobAuth', 'Order-book API credentials are created only in the extension; sites cannot obtain a ClobAuth signature.'],
  ['Order', 'Countersign does not sign exchange Order typed data from sites: use clob_postOrders, which shows each order decoded.'],
]);

/** The 4200 message for an `eth_signTypedData_v4` request (every payload is refused). */
export function typedDataRefusal(params: unknown): string {
  let primary = '';
  try {
    const raw = Array.isArray(params) ? params[1] : undefined;
    const td: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    if (typeof td === 'object' && td !== null && 'primaryType' in td && typeof td.primaryType === 'string') primary = td.primaryType;
  } catch {
    /* not JSON: the generic refusal */
  }
  return TYPED_DATA_REFUSALS.get(primary) ?? "Countersign does not sign typed data for sites; use the venue's methods (perps_sendCommand, perps_signCommand, clob_postOrders).";
}

/**
 * Order-book routes a page may get L2 headers for (issue #13 §3): order placement and cancels, the
 * account's orders and trades reads, balance-allowance and heartbeats. Never the credential and
 * key-management routes (`/auth/…`): their answers carry the API secret. Queries only on reads.
 */
export const L2_PAGE_ROUTES: readonly { method: 'GET' | 'POST' | 'DELETE'; path: RegExp }[] = [
  { method: 'POST', path: /^\/orders?$/ },
  { method: 'DELETE', path: /^\/orders?$/ },
  { method: 'DELETE', path: /^\/cancel-all$/ },
  { method: 'DELETE', path: /^\/cancel-market-orders$/ },
  { method: 'GET', path: /^\/data\/(orders|trades)$/ },
  { method: 'GET', path: /^\/data\/order\/[0-9A-Za-z_-]{1,100}$/ },
  { method: 'GET', path: /^\/balance-allowance$/ },
  { method: 'POST', path: /^\/v1\/heartbeats$/ },
];

/** Throws 4200 unless `method requestPath` is one of `L2_PAGE_ROUTES`. */
export function checkL2Route(method: string, requestPath: string): void {
  const q = requestPath.indexOf('?');
  const path = q === -1 ? requestPath : requestPath.slice(0, q);
  if (/^\/+auth(\/|$)/i.test(path) || /auth/i.test(decodeURIComponentSafe(path))) {
    throw unsupported('Sites cannot get L2 headers for the API-key routes (/auth/…); credentials are managed only in the extension.');
  }
  if (q !== -1 && method !== 'GET') throw invalidParams('requestPath may carry a query string only with GET.');
  if (!L2_PAGE_ROUTES.some((r) => r.method === method && r.path.test(path))) {
    throw unsupported(`Countersign does not sign ${method} ${path.slice(0, 64)} for sites (order, cancel and account-read routes only).`);
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
