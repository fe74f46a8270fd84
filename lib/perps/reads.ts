/**
 * Perps gateway reads (seed "Endpoints" 2, 9-15, plus the venue's reads the seed leaves unshown,
 * PROTOCOL.md §3.2): path, auth and request weight, so a caller can meter its budget before sending.
 */

/** How a read authenticates: proxy headers (`SERVICE-PROXY` / `SERVICE-SECRET`, PROTOCOL.md §1.4) or none. */
export type PerpsReadAuth = 'proxy-headers' | 'none';

/** One read endpoint. `weight` is its request weight (action weight is always 0 for reads). */
export type PerpsRead = { method: 'GET' | 'POST'; path: string; auth: PerpsReadAuth; weight: number };

/**
 * The reads, keyed by name, on the venue's paths (PROTOCOL.md §3.2; the official client
 * `@polymarket/client` calls them, and `@polymarket/bindings/perps` fixes their answers). Weights not
 * given by the seed are ours: 2 for snapshots, 10 for history pages. History reads answer
 * `{ data, more }`; order reads answer arrays.
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
  openOrders: { method: 'GET', path: '/v1/account/open-orders', auth: 'proxy-headers', weight: 2 },
  instruments: { method: 'GET', path: '/v1/info/instruments', auth: 'none', weight: 2 },
  portfolio: { method: 'GET', path: '/v1/account/portfolio', auth: 'proxy-headers', weight: 2 },
  balances: { method: 'GET', path: '/v1/account/balances', auth: 'proxy-headers', weight: 2 },
  stats: { method: 'GET', path: '/v1/account/stats', auth: 'proxy-headers', weight: 2 },
  fills: { method: 'GET', path: '/v1/account/fills', auth: 'proxy-headers', weight: 10 },
  fundingPayments: { method: 'GET', path: '/v1/account/funding', auth: 'proxy-headers', weight: 10 },
  withdrawals: { method: 'GET', path: '/v1/account/withdrawals', auth: 'proxy-headers', weight: 10 },
  equity: { method: 'GET', path: '/v1/account/equity', auth: 'proxy-headers', weight: 10 },
  pnl: { method: 'GET', path: '/v1/account/pnl', auth: 'proxy-headers', weight: 10 },
  book: { method: 'GET', path: '/v1/info/book', auth: 'none', weight: 2 },
  tickers: { method: 'GET', path: '/v1/info/tickers', auth: 'none', weight: 2 },
  statistics: { method: 'GET', path: '/v1/info/statistics', auth: 'none', weight: 2 },
  trades: { method: 'GET', path: '/v1/info/trades', auth: 'none', weight: 10 },
  klines: { method: 'GET', path: '/v1/info/klines', auth: 'none', weight: 10 },
  fees: { method: 'GET', path: '/v1/info/fees', auth: 'none', weight: 2 },
} as const satisfies Record<string, PerpsRead>;

/** Name of a perps read. */
export type PerpsReadName = keyof typeof PERPS_READS;

/** Proxy headers for a read (PROTOCOL.md §1.4). The secret is a credential: never log or display it. */
export function proxyHeaders(proxy: string, secret: string): { 'SERVICE-PROXY': string; 'SERVICE-SECRET': string } {
  return { 'SERVICE-PROXY': proxy, 'SERVICE-SECRET': secret };
}
