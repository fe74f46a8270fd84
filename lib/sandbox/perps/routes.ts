/**
 * The sandbox perps gateway (seed `perps-gateway-api.md` endpoints 1-15 plus PROTOCOL.md §1.3 proxy
 * issuance, get-orders, instruments and book reads), mounted under `/perps`. Routes are grouped as the
 * venue's client groups its paths:
 *
 * | path | module |
 * |---|---|
 * | `/v1/account/*` | `account.ts`: owner-signed commands and proxy-header reads |
 * | `/v1/trade/*` | `trade.ts`: proxy-signed trading commands |
 * | `/v1/info/*` | `info.ts`: public reads |
 *
 * `gateway.ts` holds what they share (command verification, proxy authentication, weights).
 */
import { Hono } from 'hono';
import type { SandboxContext } from '../context';
import { accountCommandRoutes, accountReadRoutes, portfolioReadRoutes } from './account';
import { PerpsGateway } from './gateway';
import { infoRoutes } from './info';
import { tradeRoutes } from './trade';

/** The perps gateway app of `ctx` (paths relative to its `/perps` mount). */
export function perpsRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  const gw = new PerpsGateway(ctx);
  tradeRoutes(app, gw);
  accountCommandRoutes(app, gw);
  accountReadRoutes(app, gw);
  portfolioReadRoutes(app, gw);
  infoRoutes(app, gw);
  return app;
}
