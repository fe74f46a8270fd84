/**
 * Perps gateway reads (seed "Endpoints" 2, 9-15, plus the get-orders read the seed leaves unshown):
 * path, auth and request weight, so a caller can meter its budget before sending.
 */

/** How a read authenticates: proxy headers (`SERVICE-PROXY` / `SERVICE-SECRET`, PROTOCOL.md §1.4) or none. */
export type PerpsReadAuth = 'proxy-headers' | 'none';

/** One read endpoint. `weight` is its request weight (action weight is always 0 for reads). */
export type PerpsRead = { method: 'GET' | 'POST'; path: string; auth: PerpsReadAuth; weight: number };

/**
 * The reads, keyed by name. The seed does not give the credentials read's weight; we count it as 1.
 * `orders` (get-orders), `instruments` and `summary` (balance and positions) are not in the seed; the
 * sandbox serves them with weight 2.
 */
export const PERPS_READS = {
  invite: { method: 'POST', path: '/v1/account/invite', auth: 'proxy-headers', weight: 1 },
  deposits: { method: 'GET', path: '/v1/account/deposits', auth: 'proxy-headers', weight: 10 },
  internalTransfers: { method: 'GET', path: '/v1/account/internal-transfers', auth: 'proxy-headers', weight: 10 },
  config: { method: 'GET', path: '/v1/account/config', auth: 'proxy-headers', weight: 2 },
  funding: { method: 'GET', path: '/v1/info/funding', auth: 'none', weight: 10 },
  referral: { method: 'GET', path: '/v1/account/referral', auth: 'proxy-headers', weight: 1 },
  credentials: { method: 'GET', path: '/v1/account/credentials', auth: 'proxy-headers', weight: 1 },
  exchange: { method: 'GET', path: '/v1/info/exchange', auth: 'none', weight: 2 },
  orders: { method: 'GET', path: '/v1/account/orders', auth: 'proxy-headers', weight: 2 },
  instruments: { method: 'GET', path: '/v1/info/instruments', auth: 'none', weight: 2 },
  summary: { method: 'GET', path: '/v1/account/summary', auth: 'proxy-headers', weight: 2 },
} as const satisfies Record<string, PerpsRead>;

/** Name of a perps read. */
export type PerpsReadName = keyof typeof PERPS_READS;

/** Proxy headers for a read (PROTOCOL.md §1.4). The secret is a credential: never log or display it. */
export function proxyHeaders(proxy: string, secret: string): { 'SERVICE-PROXY': string; 'SERVICE-SECRET': string } {
  return { 'SERVICE-PROXY': proxy, 'SERVICE-SECRET': secret };
}
