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
 * | `/admin` | sandbox-only controls (exchange mode, clock, deposits, request log, silent venue) |
 * | `/demo` | the demo dapp page |
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { AddressInfo } from 'node:net';
import { isAddress, type Address } from 'viem';
import { catalogueRoutes } from './catalogue';
import { clobRoutes } from './clob/routes';
import { DEFAULT_CONFIG, SandboxContext, type SandboxConfig, type SilentService } from './context';
import { perpsRoutes } from './perps/routes';
import { seed, type DemoAccounts } from './seed';
import { mountDemo } from './demo';
import type { ExchangeMode } from './clob/venue';

export type SandboxOptions = {
  config?: Partial<SandboxConfig>;
  /** Sandbox clock in ms (defaults to `Date.now`). */
  now?: () => number;
  /** Extra routes to mount (e.g. the demo page). */
  extend?: (app: Hono, ctx: SandboxContext) => void;
};

export type Sandbox = { app: Hono; ctx: SandboxContext; demo: DemoAccounts };

/** Builds the sandbox app with seeded demo state (no socket yet). */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const config = { ...DEFAULT_CONFIG, ...options.config };
  const ctx = new SandboxContext(config, options.now ?? Date.now);
  const demo = seed(ctx);
  const app = new Hono();

  // A slow service (test hook, `ctx.delayMs`) answers late; a silent one (`ctx.setSilent`) logs the
  // request with status 0 and holds it unanswered.
  app.use('*', async (c, next) => {
    const path = new URL(c.req.url).pathname;
    const service = SILENCEABLE.find((s) => path.startsWith(`/${s}/`));
    if (!service) return next();
    const delay = ctx.delayMs.get(service);
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
      ctx.requestLog.push({ at: ctx.now(), method: c.req.method, path, status: c.res.status, ...(body ? { body } : {}) });
      if (ctx.requestLog.length > 10_000) ctx.requestLog.splice(0, 5_000);
    }
    ctx.pruneReplay();
  });
  // The extension calls the sandbox from its background worker; pages (the demo) from their origin.
  app.use('*', cors({ origin: (o) => o, allowHeaders: ['*'], exposeHeaders: ['Retry-After'] }));

  const { gamma, data, relayer, bridge } = catalogueRoutes(ctx);
  app.route('/perps', perpsRoutes(ctx));
  app.route('/clob', clobRoutes(ctx, '/clob'));
  app.route('/gamma', gamma);
  app.route('/data', data);
  app.route('/relayer', relayer);
  app.route('/bridge', bridge);
  app.route('/admin', adminRoutes(ctx));
  mountDemo(app, ctx, { counterparty: demo.counterparty.address });
  options.extend?.(app, ctx);
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    console.error('[sandbox] internal error:', err.message);
    return c.json({ error: 'Internal server error' }, 500);
  });
  return { app, ctx, demo };
}

const SILENCEABLE: SilentService[] = ['perps', 'clob'];

const MODES: ExchangeMode[] = ['normal', 'disabled', 'cancel-only', 'post-only', 'restarting'];

function adminRoutes(ctx: SandboxContext): Hono {
  const admin = new Hono();
  admin.get('/state', (c) =>
    c.json({ clobMode: ctx.clob.mode, retryAfterSeconds: ctx.clob.retryAfterSeconds, now: ctx.now(), requests: ctx.requestLog.length }),
  );
  admin.post('/clob-mode', async (c) => {
    const b = (await c.req.json().catch(() => ({}))) as { mode?: unknown; retry_after_seconds?: unknown };
    if (!MODES.includes(b.mode as ExchangeMode)) return c.json({ error: `mode must be one of ${MODES.join(', ')}` }, 400);
    ctx.clob.mode = b.mode as ExchangeMode;
    if (typeof b.retry_after_seconds === 'number' && Number.isSafeInteger(b.retry_after_seconds) && b.retry_after_seconds > 0) {
      ctx.clob.retryAfterSeconds = b.retry_after_seconds;
    }
    return c.json({ mode: ctx.clob.mode, retry_after_seconds: ctx.clob.retryAfterSeconds });
  });
  // Test hook (issue #17 finding 7): `{ service: 'perps' | 'clob', silent: boolean }` makes a venue stop answering.
  admin.post('/silence', async (c) => {
    const b = (await c.req.json().catch(() => ({}))) as { service?: unknown; silent?: unknown };
    if (!SILENCEABLE.includes(b.service as SilentService) || typeof b.silent !== 'boolean') return c.json({ error: `service must be one of ${SILENCEABLE.join(', ')}; silent a boolean` }, 400);
    ctx.setSilent(b.service as SilentService, b.silent);
    return c.json({ silent: [...ctx.silent] });
  });
  // Test hook: `{ service: 'perps' | 'clob', ms }` delays every answer of a venue by `ms` (0 ends it).
  admin.post('/delay', async (c) => {
    const b = (await c.req.json().catch(() => ({}))) as { service?: unknown; ms?: unknown };
    if (!SILENCEABLE.includes(b.service as SilentService) || typeof b.ms !== 'number' || !Number.isSafeInteger(b.ms) || b.ms < 0 || b.ms > 120_000) return c.json({ error: `service must be one of ${SILENCEABLE.join(', ')}; ms an integer from 0 to 120000` }, 400);
    if (b.ms === 0) ctx.delayMs.delete(b.service as SilentService);
    else ctx.delayMs.set(b.service as SilentService, b.ms);
    return c.json({ service: b.service, ms: b.ms });
  });
  admin.get('/requests', (c) => c.json(ctx.requestLog));
  admin.delete('/requests', (c) => {
    ctx.requestLog.length = 0;
    return c.json({ ok: true });
  });
  admin.post('/deposit', async (c) => {
    const b = (await c.req.json().catch(() => ({}))) as { account?: unknown; amount?: unknown; confirmations?: unknown };
    if (typeof b.account !== 'string' || !isAddress(b.account, { strict: false })) return c.json({ error: 'account must be an address' }, 400);
    if (typeof b.amount !== 'string' || !/^[1-9]\d{0,20}$/.test(b.amount)) return c.json({ error: 'amount must be base units' }, 400);
    const a = ctx.venue.account(b.account as Address);
    const hash = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`;
    a.deposits.push({
      hash,
      asset: 'USDC',
      amount: BigInt(b.amount),
      from: '0x0000000000000000000000000000000000000000',
      to: a.owner,
      requiredConfirmations: typeof b.confirmations === 'number' ? b.confirmations : 12,
      created: ctx.now(),
      credited: false,
    });
    return c.json({ hash });
  });
  admin.post('/funder', async (c) => {
    const b = (await c.req.json().catch(() => ({}))) as { address?: unknown; funder?: unknown };
    if (typeof b.address !== 'string' || typeof b.funder !== 'string' || !isAddress(b.address, { strict: false }) || !isAddress(b.funder, { strict: false })) {
      return c.json({ error: 'address and funder must be addresses' }, 400);
    }
    ctx.clob.funders.set(b.address.toLowerCase(), b.funder.toLowerCase());
    ctx.clob.credit(b.funder, 1_000_000_000n);
    return c.json({ ok: true });
  });
  admin.get('/withdrawals', (c) =>
    c.json({
      perps: [...ctx.venue.accounts.values()].flatMap((a) => a.withdrawals.map((w) => ({ account: a.owner, ...w, amount: w.amount.toString() }))),
      bridge: ctx.bridgeWithdrawals,
    }),
  );
  return admin;
}

/** A running sandbox: its base URL (`http://127.0.0.1:PORT`) and a `close()`. */
export type RunningSandbox = Sandbox & { url: string; port: number; close: () => Promise<void> };

/** Starts the sandbox on 127.0.0.1 (`port` 0 = ephemeral). */
export function startSandbox(port = 0, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = createSandbox(options);
  return new Promise((resolve) => {
    const server = serve({ fetch: sandbox.app.fetch, port, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        ...sandbox,
        port: info.port,
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of SILENCEABLE) sandbox.ctx.setSilent(s, false);
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

export { DEFAULT_CONFIG, type SandboxConfig };
