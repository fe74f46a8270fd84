/**
 * The sandbox order-book exchange (seed `order-book-exchange-api.md`; PROTOCOL.md §2 and §3.1: the
 * paths, query names and answer shapes of the official client `@polymarket/clob-client-v2`), mounted
 * under `/clob`. Routes are grouped as that client groups its methods:
 *
 * | authentication | module |
 * |---|---|
 * | L1 (ClobAuth signature): create / derive API key | `l1.ts` |
 * | L2 (API-key HMAC): orders, cancels, heartbeats, trades, balance, API keys | `l2.ts` |
 * | L2: builder API keys; type-3 (deposit-wallet) order checks | `deposit.ts` |
 * | none: book, prices, markets, tick size, fee rate, time | `public.ts` |
 *
 * `exchange.ts` holds what they share (throttling, heartbeat lapses, mode gate, the L1 / L2 middleware);
 * `venue.ts` the in-memory exchange.
 */
import { Hono } from 'hono';
import type { SandboxContext } from '../context';
import { ClobExchange } from './exchange';
import { builderKeyRoutes } from './deposit';
import { l1Routes } from './l1';
import { l2OrderRoutes, l2ReadRoutes } from './l2';
import { publicRoutes } from './public';

/** The order-book exchange app of `ctx`, for a mount at `prefix` (the L2 signed path is below it). */
export function clobRoutes(ctx: SandboxContext, prefix: string): Hono {
  const app = new Hono();
  const ex = new ClobExchange(ctx, prefix);
  ex.mountCommon(app);
  l1Routes(app, ex);
  l2OrderRoutes(app, ex);
  l2ReadRoutes(app, ex);
  builderKeyRoutes(app, ex);
  publicRoutes(app, ex);
  return app;
}

/** Heartbeats lapse after this long without one (ms; re-exported where `lib/background` tests look for it). */
export { HEARTBEAT_TIMEOUT_MS } from './exchange';
