/**
 * Admit, the page path's stage after capture (`request.ts`, stage 2): the origin must be an https site (or localhost),
 * the method one of `METHOD_POLICY` (a literal policy per method: whether it needs a connected origin, an unlocked
 * vault, and which approval). Unknown methods are refused (4200); nothing is forwarded anywhere by default.
 *
 * `eth_signTypedData_v4` is listed only to be refused with a reason: a page never hands Countersign
 * bytes or structs to sign, only decoded requests (`perps_*`, `clob_*`).
 */
import { unauthorized, unsupported } from '../errors/rpc';
import type { GRANTABLE_PAGE_METHODS } from '../grants/requests';

/**
 * What a page method needs before it runs: a `connected` origin (4100 otherwise), an `unlocked` vault
 * (4900 otherwise; a trading session serves only `SESSION_METHODS`), and which approval
 * it asks for (`refused`: always 4200).
 */
export type MethodPolicy = { connected: boolean; unlocked: boolean; approval: 'none' | 'connect' | 'sign' | 'refused' };

/** The policy of every page method Countersign serves; any other method is refused with 4200. */
export const METHOD_POLICY = {
  eth_chainId: { connected: false, unlocked: false, approval: 'none' },
  eth_accounts: { connected: false, unlocked: false, approval: 'none' },
  // A locked vault opens the unlock in the approval window, then the connection.
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
  // The extension's version and the methods it serves (`capabilities.ts`): anyone may ask, nothing is read.
  countersign_getCapabilities: { connected: false, unlocked: false, approval: 'none' },
} as const satisfies Record<string, MethodPolicy>;

/** A method name listed in `METHOD_POLICY`. */
export type PageMethod = keyof typeof METHOD_POLICY;

/** Compile-time check: every method a grant may cover (`GRANTABLE_PAGE_METHODS`) is a page method. */
type IsTrue<T extends true> = T;
// A check the compiler runs; nothing uses the type.
type GrantableArePageMethods = IsTrue<(typeof GRANTABLE_PAGE_METHODS)[number] extends PageMethod ? true : false>;

/** Whether `m` is a page method Countersign serves (an own key of `METHOD_POLICY`). */
export function isPageMethod(m: string): m is PageMethod {
  return Object.hasOwn(METHOD_POLICY, m);
}

/** Why `eth_signTypedData_v4` refuses a payload, by its primary type. */
const TYPED_DATA_REFUSALS = new Map<string, string>([
  [
    'Op',
    'Countersign does not sign perps Op typed data from sites: send the command itself with ' +
      'perps_sendCommand or perps_signCommand, which show it decoded and build the signed data in the extension.',
  ],
  [
    'Withdraw',
    'Countersign does not sign Withdraw typed data from sites: send a withdraw ' +
      'command with perps_sendCommand, which shows the destination and amount.',
  ],
  ['CreateProxy', 'Sites cannot issue proxy keys; use the extension.'],
  [
    'ClobAuth',
    'Order-book API credentials are created only in the extension; sites cannot obtain a ClobAuth signature.',
  ],
  [
    'Order',
    'Countersign does not sign exchange Order typed data from ' +
      'sites: use clob_postOrders, which shows each order decoded.',
  ],
]);

/** The 4200 message for an `eth_signTypedData_v4` request (every payload is refused). */
export function typedDataRefusal(params: unknown): string {
  let primary = '';
  try {
    const raw = Array.isArray(params) ? params[1] : undefined;
    const td: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    if (typeof td === 'object' && td !== null && 'primaryType' in td && typeof td.primaryType === 'string')
      primary = td.primaryType;
  } catch {
    /* not JSON: the generic refusal */
  }
  return (
    TYPED_DATA_REFUSALS.get(primary) ??
    "Countersign does not sign typed data for sites; use the venue's " +
      'methods (perps_sendCommand, perps_signCommand, clob_postOrders).'
  );
}

/** `https:` origins, or `http:` on localhost / 127.0.0.1 / [::1]. */
export function isAllowedOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Of the methods with `unlocked: true`, those a trading session serves (only what a live grant covers; the others are
 * 4900 until the vault is unlocked). `sessionGates` (`gates.ts`) reads this set only for `unlocked` methods: one that
 * does not need the vault unlocked is served in a trading session whether it is listed here or not.
 */
export const SESSION_METHODS: ReadonlySet<PageMethod> = new Set<PageMethod>([
  'perps_sendCommand',
  'clob_postOrders',
  'eth_accounts',
]);

/**
 * Admits a request of `origin` for `method` (the origin is the browser's sender, never the message's)
 * and returns the method as a `PageMethod`: throws 4100 for an origin that is not https (or http on localhost), 4200
 * for a method not in `METHOD_POLICY` and for a refused one (`typedDataRefusal` reads `params` only to name the
 * reason).
 */
export function admit(origin: string, method: string, params: unknown): PageMethod {
  if (!isAllowedOrigin(origin)) throw unauthorized('Countersign only serves https sites (and localhost).');
  if (!isPageMethod(method)) throw unsupported(`Countersign does not support ${method.slice(0, 64)}.`);
  const policy: MethodPolicy = METHOD_POLICY[method];
  if (policy.approval === 'refused') throw unsupported(typedDataRefusal(params));
  return method;
}
