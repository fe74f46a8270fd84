/**
 * The sandbox gateway: one Hono app with each service under its own prefix, so paths below the prefix
 * match the seeds exactly. Node only — never imported by the extension.
 *
 * | prefix | service |
 * |---|---|
 * | `/perps` | perps gateway (seed 1) |
 * | `/clob` | order-book exchange (seed 2) |
 * | `/gamma` | catalogue |
 * | `/data` | data service v2 |
 * | `/relayer`, `/bridge` | relayer and bridge |
 * | `/rpc` | chain JSON-RPC stand-in (what the relayer client reads; not a chain) |
 * | `/admin` | sandbox-only controls (exchange mode, clock, deposits, request log, silent venue) |
 * | `/demo` | the demo dapp page |
 *
 * WebSocket streams on the same port (`streams/hub.ts`): `/perps/v1/ws`, `/clob/ws/market`,
 * `/clob/ws/user`.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { AddressInfo } from 'node:net';
import { adminRoutes, SILENCEABLE } from './admin';
import { bridgeRoutes } from './bridge';
import { catalogueRoutes } from './catalogue';
import { clobRoutes } from './clob/routes';
import { DEFAULT_CONFIG, SandboxContext, type SandboxConfig } from './context';
import { dataRoutes } from './data';
import { internalError } from './http';
import { perpsRoutes } from './perps/routes';
import { relayerRoutes } from './relayer/routes';
import { rpcRoutes } from './relayer/rpc';
import { seed, type DemoAccounts } from './seed';
import { mountDemo } from './demo';
import { createStreams, type SandboxStreams } from './streams/hub';

/** Options of {@link createSandbox} / {@link startSandbox}: config overrides, the clock, extra routes. */
export type SandboxOptions = {
  config?: Partial<SandboxConfig>;
  /** Sandbox clock in ms (defaults to `Date.now`). */
  now?: () => number;
  /** Extra routes to mount (e.g. the demo page). */
  extend?: (app: Hono, ctx: SandboxContext) => void;
};

/** A built sandbox: the Hono app, its state (`ctx`), the demo accounts `seed` created and its streams. */
export type Sandbox = { app: Hono; ctx: SandboxContext; demo: DemoAccounts; streams: SandboxStreams };

/** Builds the sandbox app with seeded demo state (no socket yet). */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const config = { ...DEFAULT_CONFIG, ...options.config };
  const ctx = new SandboxContext(config, options.now ?? Date.now);
  const demo = seed(ctx);
  const app = new Hono();
  const streams = createStreams(ctx, async (req) => app.fetch(req));

  // A slow service (test hook, `ctx.delayMs`) answers late; a silent one (`ctx.setSilent`) logs the
  // request with status 0 and holds it unanswered.
  app.use('*', async (c, next) => {
    const path = new URL(c.req.url).pathname;
    const service = SILENCEABLE.find((s) => path.startsWith(`/${s}/`));
    if (!service) return next();
    const delay = ctx.sessionRequests.has(c.req.raw) ? undefined : ctx.delayMs.get(service);
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (!ctx.silent.has(service)) return next();
    const body = c.req.method === 'GET' || c.req.method === 'OPTIONS' ? '' : (await c.req.text()).slice(0, 65_536);
    ctx.requestLog.push({ at: ctx.now(), method: c.req.method, path, status: 0, ...(body ? { body } : {}) });
    await ctx.untilSpeaking(service);
    return c.json({ error: 'sandbox: the service was silent' }, 503);
  });
  app.use('*', async (c, next) => {
    // The exact body text received (tests compare it with what the extension showed for approval).
    const body = c.req.method === 'GET' || c.req.method === 'OPTIONS' ? '' : (await c.req.text()).slice(0, 65_536);
    await next();
    const path = new URL(c.req.url).pathname;
    if (!path.startsWith('/admin/')) {
      ctx.requestLog.push({
        at: ctx.now(),
        method: c.req.method,
        path,
        status: c.res.status,
        ...(body ? { body } : {}),
      });
      if (ctx.requestLog.length > 10_000) ctx.requestLog.splice(0, 5_000);
    }
    ctx.pruneReplay();
    streams.sync();
  });
  // The extension calls the sandbox from its background worker; pages (the demo) from their origin.
  app.use('*', cors({ origin: (o) => o, allowHeaders: ['*'], exposeHeaders: ['Retry-After'] }));

  app.route('/perps', perpsRoutes(ctx));
  app.route('/clob', clobRoutes(ctx, '/clob'));
  app.route('/gamma', catalogueRoutes(ctx));
  app.route('/data', dataRoutes(ctx));
  app.route('/relayer', relayerRoutes(ctx));
  app.route('/rpc', rpcRoutes(ctx));
  app.route('/bridge', bridgeRoutes(ctx));
  app.route('/admin', adminRoutes(ctx));
  mountDemo(app, ctx, { counterparty: demo.counterparty.address });
  options.extend?.(app, ctx);
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError(internalError);
  return { app, ctx, demo, streams };
}

/** A running sandbox: its base URL (`http://127.0.0.1:PORT`) and a `close()`. */
export type RunningSandbox = Sandbox & { url: string; port: number; close: () => Promise<void> };

/** Starts the sandbox on 127.0.0.1 (`port` 0 = ephemeral). */
export function startSandbox(port = 0, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = createSandbox(options);
  return new Promise((resolve) => {
    const server = serve({ fetch: sandbox.app.fetch, port, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      server.on('upgrade', sandbox.streams.upgrade);
      resolve({
        ...sandbox,
        port: info.port,
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of SILENCEABLE) sandbox.ctx.setSilent(s, false);
            sandbox.streams.close();
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

export { DEFAULT_CONFIG, type SandboxConfig };
