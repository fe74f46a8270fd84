/**
 * What every sandbox order-book route shares (seed `order-book-exchange-api.md`, PROTOCOL.md §2): the
 * `{ error }` answer, throttling (seed "Limits"), heartbeat lapses, the exchange-mode gate, and the two
 * authentications as typed middleware — L1 (a ClobAuth signature, {@link ClobExchange.l1}) and L2 (the
 * HMAC of an API key, {@link ClobExchange.l2}) — so authenticated handlers receive the caller from the
 * context. Header names: the seed's `SVC_*` or the venue's `POLY_*` (`authHeader`).
 *
 * - L1: the ClobAuth signer recovered with viem must equal `SVC_ADDRESS`; `SVC_TIMESTAMP` within the
 *   window; failures → 401 `Invalid L1 Request headers`.
 * - L2: the HMAC over `timestamp + method + path + body` must match (the path below the `/clob` prefix,
 *   without the query string, PROTOCOL.md §2.2); 401 `Unauthorized/Invalid api key` otherwise.
 */
import type { Context, Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import * as v from 'valibot';
import { isAddress, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { buildL2SignatureSync, clobAuthTypedData, l2SignaturesEqual } from '../../clob/auth';
import { MultiWindow } from '../../ratelimit/sliding-window';
import type { SandboxContext } from '../context';
import { authHeader } from '../http';
import type { ApiCreds, ClobVenue } from './venue';

/** The L1 failure message (the venue's). */
export const L1_ERROR = 'Invalid L1 Request headers';
/** The L2 failure message (the venue's). */
const UNAUTHORIZED = 'Unauthorized/Invalid api key';
/** Heartbeats lapse after this long without one (ms). */
export const HEARTBEAT_TIMEOUT_MS = 10_000;

/** Context variables of an L1-authenticated route: the signing wallet and the ClobAuth nonce. */
export type L1Env = { Variables: { l1: { address: Address; nonce: number } } };
/** Context variables of an L2-authenticated route: the API key's credentials and the exact body text signed. */
export type L2Env = { Variables: { creds: ApiCreds; body: string } };

/** Seed "Limits" tables: (method path) → budgets per 10 s / 10 min. */
const LIMITS: [string, { limit: number; windowMs: number }[]][] = [
  [
    'POST /order',
    [
      { limit: 5_000, windowMs: 10_000 },
      { limit: 120_000, windowMs: 600_000 },
    ],
  ],
  [
    'POST /orders',
    [
      { limit: 2_000, windowMs: 10_000 },
      { limit: 21_000, windowMs: 600_000 },
    ],
  ],
  [
    'DELETE /order',
    [
      { limit: 5_000, windowMs: 10_000 },
      { limit: 120_000, windowMs: 600_000 },
    ],
  ],
  [
    'DELETE /orders',
    [
      { limit: 2_000, windowMs: 10_000 },
      { limit: 15_000, windowMs: 600_000 },
    ],
  ],
  [
    'DELETE /cancel-all',
    [
      { limit: 250, windowMs: 10_000 },
      { limit: 6_000, windowMs: 600_000 },
    ],
  ],
  ['GET /book', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /price', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /midpoint', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /tick-size', [{ limit: 200, windowMs: 10_000 }]],
  ['GET /data/orders', [{ limit: 900, windowMs: 10_000 }]],
  ['GET /data/trades', [{ limit: 900, windowMs: 10_000 }]],
  ['AUTH', [{ limit: 100, windowMs: 10_000 }]],
  ['GENERAL', [{ limit: 9_000, windowMs: 10_000 }]],
];

/** The exchange's error answer: `{ error, ...extra }` with an HTTP status. */
export function fail(
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  extra: Record<string, unknown> = {},
): Response {
  return c.json({ error, ...extra }, status);
}

/** L1 headers: address, 65-byte signature, Unix-second timestamp, nonce (default 0). */
const l1Headers = v.object({
  address: v.custom<Address>((s) => typeof s === 'string' && isAddress(s, { strict: false })),
  signature: v.custom<Hex>((s) => typeof s === 'string' && /^0x[0-9a-fA-F]{130}$/.test(s)),
  timestamp: v.pipe(v.string(), v.regex(/^\d{1,12}$/), v.transform(Number)),
  nonce: v.pipe(v.string(), v.regex(/^\d{1,15}$/), v.transform(Number)),
});

/**
 * The wallet that signed the L1 headers (`SVC_ADDRESS`, `SVC_SIGNATURE`, `SVC_TIMESTAMP` in Unix s,
 * `SVC_NONCE` unless `fixedNonce` is given) — ClobAuth on the exchange chain — or undefined when they are
 * malformed, outside `config.clobTimestampWindowS` of the sandbox clock, or signed by another key.
 */
export async function verifyL1(
  ctx: SandboxContext,
  c: Context,
  fixedNonce?: number,
): Promise<{ address: Address; nonce: number } | undefined> {
  const h = v.safeParse(l1Headers, {
    address: authHeader(c, 'SVC_ADDRESS') ?? '',
    signature: authHeader(c, 'SVC_SIGNATURE') ?? '',
    timestamp: authHeader(c, 'SVC_TIMESTAMP') ?? '',
    nonce: fixedNonce === undefined ? (authHeader(c, 'SVC_NONCE') ?? '0') : String(fixedNonce),
  });
  if (!h.success) return undefined;
  const { address, signature, timestamp, nonce } = h.output;
  if (Math.abs(timestamp - Math.floor(ctx.now() / 1000)) > ctx.config.clobTimestampWindowS) return undefined;
  try {
    const recovered = await recoverTypedDataAddress({
      ...clobAuthTypedData(address, { chainId: ctx.config.clobChainId, timestamp, nonce }),
      signature,
    });
    return recovered.toLowerCase() === address.toLowerCase() ? { address: recovered, nonce } : undefined;
  } catch {
    return undefined;
  }
}

/** The order-book exchange's shared machinery for one sandbox, mounted under `prefix`. */
export class ClobExchange {
  readonly venue: ClobVenue;

  constructor(
    readonly ctx: SandboxContext,
    readonly prefix: string,
  ) {
    this.venue = ctx.clob;
  }

  /** The sandbox clock in Unix seconds. */
  nowS(): number {
    return Math.floor(this.ctx.now() / 1000);
  }

  /** The request's path below the prefix, without the query (what L2 signs). */
  path(c: Context): string {
    return new URL(c.req.url).pathname.slice(this.prefix.length);
  }

  private limiter(name: string): MultiWindow {
    let w = this.ctx.clobLimits.get(name);
    if (!w) {
      const budgets = LIMITS.find(([k]) => k === name)?.[1] ?? [];
      w = new MultiWindow(
        budgets.map((b) => ({
          limit: Math.max(1, Math.floor(b.limit * this.ctx.config.clobRateLimitFactor)),
          windowMs: b.windowMs,
        })),
      );
      this.ctx.clobLimits.set(name, w);
    }
    return w;
  }

  /**
   * Mounts the middleware every route passes: heartbeats that lapsed cancel their account's orders
   * first; then throttling — the general budget, then the route's own, per API key or caller (429 with
   * `Retry-After` in seconds).
   */
  mountCommon(app: Hono): void {
    app.use('*', async (_c, next) => {
      this.venue.lapseHeartbeats(this.ctx.now(), HEARTBEAT_TIMEOUT_MS);
      await next();
    });
    app.use('*', async (c, next) => {
      const path = this.path(c) || '/';
      const route = path.startsWith('/auth/') ? 'AUTH' : `${c.req.method} ${path}`;
      const key = authHeader(c, 'SVC_API_KEY') ?? 'anon';
      const t = this.ctx.now();
      for (const name of ['GENERAL', route]) {
        if (!LIMITS.some(([k]) => k === name)) continue;
        const wait = this.limiter(name).take(key, 1, t);
        if (wait > 0) {
          c.header('Retry-After', String(Math.ceil(wait / 1000)));
          return fail(c, 429, 'Too Many Requests');
        }
      }
      await next();
    });
  }

  /** {@link verifyL1} on this exchange's sandbox. */
  verifyL1(c: Context): Promise<{ address: Address; nonce: number } | undefined> {
    return verifyL1(this.ctx, c);
  }

  /** Middleware: L1 authentication (401 `Invalid L1 Request headers`); sets `l1`. */
  readonly l1 = createMiddleware<L1Env>(async (c, next) => {
    const l1 = await this.verifyL1(c);
    if (!l1) return fail(c, 401, L1_ERROR);
    c.set('l1', l1);
    await next();
  });

  /** Middleware: L2 authentication (401 `Unauthorized/Invalid api key`); sets `creds` and `body`. */
  readonly l2 = createMiddleware<L2Env>(async (c, next) => {
    const h = (n: string) => authHeader(c, n);
    const apiKey = h('SVC_API_KEY');
    const creds = apiKey ? this.venue.creds.get(apiKey) : undefined;
    const address = h('SVC_ADDRESS');
    const sig = h('SVC_SIGNATURE');
    const ts = h('SVC_TIMESTAMP');
    if (!creds || !address || !sig || !ts || !/^\d{1,12}$/.test(ts)) return fail(c, 401, UNAUTHORIZED);
    if (h('SVC_PASSPHRASE') !== creds.passphrase || address.toLowerCase() !== creds.address.toLowerCase())
      return fail(c, 401, UNAUTHORIZED);
    if (Math.abs(Number(ts) - this.nowS()) > this.ctx.config.clobTimestampWindowS) return fail(c, 401, UNAUTHORIZED);
    const body = await c.req.text();
    // PROTOCOL.md §2.2: the HMAC covers the path alone; query parameters travel unsigned.
    const expected = buildL2SignatureSync({
      secret: creds.secret,
      timestamp: Number(ts),
      method: c.req.method,
      requestPath: this.path(c),
      body,
    });
    if (!l2SignaturesEqual(expected, sig)) return fail(c, 401, UNAUTHORIZED);
    c.set('creds', creds);
    c.set('body', body);
    await next();
  });

  /**
   * Middleware: the exchange-mode gate before an order (`kind` 'order') or cancel route — 425 while
   * restarting, 503 when disabled, and 503 for orders in cancel-only mode. Runs before authentication.
   */
  gate(kind: 'order' | 'cancel') {
    return createMiddleware(async (c, next) => {
      const mode = this.venue.mode;
      if (mode === 'restarting') return fail(c, 425, 'Matching engine restarting');
      if (mode === 'disabled') return fail(c, 503, 'Trading is currently disabled. No orders or cancels are accepted.');
      if (kind === 'order' && mode === 'cancel-only')
        return fail(c, 503, 'Trading is currently cancel-only. New orders are not accepted, but cancels are allowed.');
      await next();
    });
  }
}
