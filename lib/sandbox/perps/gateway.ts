/**
 * What every sandbox perps route shares (seed `perps-gateway-api.md`, PROTOCOL.md §1.3–§1.4, §3.2): the
 * `{ status: 'err', error }` answer, query parsing, request / action weight, proxy-header
 * authentication as a typed middleware, and the two ways a route is registered — a read of
 * `PERPS_READS` ({@link read}) or a signed command ({@link command}).
 *
 * A command is verified before anything changes: the envelope is parsed and the signed tuple rebuilt
 * from the JSON body (`lib/perps`), `ts` / `exp` checked against the clock, the signer recovered with
 * viem and checked against the role the command needs (registered, unexpired proxy for trading; the
 * account's owner for owner-signed commands), the (signer, salt, ts) triple checked for replay, then
 * request and action weight taken from the account's budgets. Only then does its handler run, with the
 * account and the arguments (parsed by the route's valibot schema) in the context.
 */
import type { Context, Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import * as v from 'valibot';
import type { Address } from 'viem';
import { InvalidFieldError } from '../../validation';
import type { PerpsCommandType } from '../../perps/commands';
import { parsePerpsEnvelope, recoverPerpsSigner, type ParsedPerpsEnvelope } from '../../perps/verify';
import { PERPS_READS, type PerpsReadName } from '../../perps/reads';
import { l2SignaturesEqual } from '../../clob/auth';
import type { SandboxContext } from '../context';
import { authHeader, parseJson } from '../http';
import { fromUnits } from '../../decimal';
import { PX_SCALE, VenueError, type Account } from './engine';

/** Rows per page of the history reads (`{ data, more }`). */
export const PAGE = 100;

/** One hour in ms (funding interval, candle and history steps). */
export const HOUR = 3_600_000;

/** Context variables of a route that authenticated an account (proxy headers or a signed command). */
export type AccountEnv = { Variables: { account: Account } };

/** Context variables of a verified command: its account, the parsed envelope and the typed `op.args`. */
export type CommandEnv<A> = { Variables: { account: Account; envelope: ParsedPerpsEnvelope; args: A } };

/** The gateway's error answer: `{ status: 'err', error, ...extra }` with an HTTP status. */
export function fail(
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  extra: Record<string, unknown> = {},
): Response {
  return c.json({ status: 'err', error, ...extra }, status);
}

/** Query integer (ms or id) or undefined; throws `VenueError('invalid_<name>')` on anything else. */
export function qInt(c: Context, name: string): number | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,16}$/.test(v)) throw new VenueError(`invalid_${name}`);
  return Number(v);
}

/**
 * A time range in ms from the query: the venue's `start_timestamp` / `end_timestamp` (the official
 * client's names) or the seed's `start_time` / `end_time`. `end` defaults to `now`; `start` is absent
 * when not given. Throws `VenueError('invalid_time_range')` when start > end.
 */
export function timeRange(c: Context, now: number): { start: number | undefined; end: number } {
  const end = qInt(c, 'end_timestamp') ?? qInt(c, 'end_time') ?? now;
  const start = qInt(c, 'start_timestamp') ?? qInt(c, 'start_time');
  if (start !== undefined && start > end) throw new VenueError('invalid_time_range');
  return { start, end };
}

/** {@link timeRange} whose `start` defaults to `end − windowMs` (ms). */
export function windowRange(c: Context, now: number, windowMs: number): { start: number; end: number } {
  const { start, end } = timeRange(c, now);
  const from = start ?? end - windowMs;
  if (from > end) throw new VenueError('invalid_time_range');
  return { start: from, end };
}

/** Runs a route's handler and answers a `VenueError` it throws as the gateway's error answer. */
async function answer(c: Context, run: () => Response | Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof VenueError) return fail(c, err.status, err.error, err.extra);
    throw err;
  }
}

/** A perps read that authenticates with proxy headers (`auth: 'proxy-headers'` in `PERPS_READS`). */
export type AccountReadName = {
  [K in PerpsReadName]: (typeof PERPS_READS)[K]['auth'] extends 'proxy-headers' ? K : never;
}[PerpsReadName];

/** A public perps read (`auth: 'none'` in `PERPS_READS`). */
export type InfoReadName = Exclude<PerpsReadName, AccountReadName>;

/** A command route: which command type it accepts, its `op.args` schema, and who claims to own the account. */
export type CommandSpec<S extends v.GenericSchema> = {
  type: PerpsCommandType;
  /** Schema of the command's `op.args` (already validated by `parsePerpsEnvelope`; this types them). */
  args: S;
  /** Owner-signed commands: the account the arguments name (the signer must be it). Default: the signer. */
  owner?: (args: v.InferOutput<S>) => string;
};

/**
 * The perps gateway's shared machinery for one sandbox: weights, proxy-header authentication and route
 * registration. One per `perpsRoutes` call.
 */
export class PerpsGateway {
  constructor(readonly ctx: SandboxContext) {}

  /** The sandbox clock (ms). */
  now(): number {
    return this.ctx.now();
  }

  /**
   * Takes `request` and `action` weight from the budgets of `key` (an account owner, lowercase, or
   * `public`). False (and a `Retry-After` header in seconds) when either budget is spent.
   */
  takeWeight(c: Context, key: string, request: number, action: number): boolean {
    const t = this.now();
    const wait = Math.max(
      this.ctx.perpsRequestWeight.check(key, request, t),
      this.ctx.perpsActionWeight.check(key, action, t),
    );
    if (wait > 0) {
      c.header('Retry-After', String(Math.ceil(wait / 1000)));
      return false;
    }
    this.ctx.perpsRequestWeight.record(key, request, t);
    this.ctx.perpsActionWeight.record(key, action, t);
    return true;
  }

  /**
   * The account whose registered, unexpired proxy and secret the headers name (PROTOCOL.md §1.4; the
   * seed's `SERVICE-*` or the venue's `POLYMARKET-*` names), settled to now.
   */
  proxyAccount(c: Context): Account | undefined {
    const { venue, proxyIndex, config } = this.ctx;
    const proxy = authHeader(c, 'SERVICE-PROXY')?.toLowerCase();
    if (!proxy) return undefined;
    const owner = proxyIndex.get(proxy);
    const acct = owner ? venue.findAccount(owner) : undefined;
    const p = acct?.proxies.get(proxy);
    if (!acct || !p || !l2SignaturesEqual(p.secret, authHeader(c, 'SERVICE-SECRET') ?? '') || p.expiry <= this.now())
      return undefined;
    venue.settleDeposits(acct, config.depositConfirmationMs);
    venue.checkAutoCancel(acct);
    return acct;
  }

  /** Middleware: proxy-header authentication (401 `unauthorized`), then the read's request weight (429). */
  private authenticated(weight: number) {
    return createMiddleware<AccountEnv>(async (c, next) => {
      const account = this.proxyAccount(c);
      if (!account) return fail(c, 401, 'unauthorized');
      if (!this.takeWeight(c, account.owner.toLowerCase(), weight, 0)) return fail(c, 429, 'rate_limited');
      c.set('account', account);
      await next();
    });
  }

  /** Registers an account read on its `PERPS_READS` path; `handler` receives the authenticated account. */
  accountRead(
    app: Hono,
    name: AccountReadName,
    handler: (c: Context<AccountEnv>, account: Account) => Response | Promise<Response>,
  ): void {
    const r = PERPS_READS[name];
    app.on(r.method, r.path, this.authenticated(r.weight), (c) => answer(c, () => handler(c, c.var.account)));
  }

  /** Registers a public read on its `PERPS_READS` path, metered on the shared `public` budget. */
  infoRead(app: Hono, name: InfoReadName, handler: (c: Context) => Response | Promise<Response>): void {
    const r = PERPS_READS[name];
    app.on(r.method, r.path, (c) => {
      if (!this.takeWeight(c, 'public', r.weight, 0)) return fail(c, 429, 'rate_limited');
      return answer(c, () => handler(c));
    });
  }

  /**
   * Registers a signed command on `method path`: the verification above runs as a middleware, then
   * `handler` answers from `c.var.account`, `c.var.envelope` and `c.var.args` (a thrown `VenueError`
   * becomes the error answer; nothing is undone, so handlers check before they change anything).
   */
  command<S extends v.GenericSchema>(
    app: Hono,
    method: 'POST' | 'DELETE' | 'PATCH',
    path: string,
    spec: CommandSpec<S>,
    handler: (c: Context<CommandEnv<v.InferOutput<S>>>) => object,
  ): void {
    app.on(method, path, this.verified(spec), (c) => answer(c, () => c.json(handler(c))));
  }

  /** Middleware verifying a command envelope for `spec` (see the module comment); sets account, envelope and args. */
  private verified<S extends v.GenericSchema>(spec: CommandSpec<S>) {
    return createMiddleware<CommandEnv<v.InferOutput<S>>>(async (c, next) => {
      const { config, venue, proxyIndex, seenCommands } = this.ctx;
      const t = this.now();
      const body = parseJson(await c.req.text());
      if (body === undefined) return fail(c, 400, 'invalid_json');
      let envelope: ParsedPerpsEnvelope;
      try {
        envelope = parsePerpsEnvelope(body);
      } catch (err) {
        if (err instanceof InvalidFieldError)
          return fail(c, 400, 'invalid_request', { field: err.field, reason: err.reason });
        throw err;
      }
      const { command: cmd } = envelope;
      if (cmd.type !== spec.type) return fail(c, 400, 'wrong_command_for_endpoint');
      const args = v.safeParse(spec.args, cmd.body.args);
      if (!args.success) return fail(c, 400, 'invalid_request', { field: 'op.args', reason: args.issues[0].message });
      const unit = cmd.struct === 'Withdraw' ? 1000 : 1;
      const nowTs = Math.floor(t / unit);
      if (envelope.ts > nowTs + Math.ceil(config.clockSkewMs / unit)) return fail(c, 400, 'future_timestamp');
      if (envelope.ts < nowTs - Math.ceil(config.commandTimeoutMs / unit)) return fail(c, 400, 'stale_timestamp');
      if (envelope.exp !== undefined) {
        if (envelope.exp <= t) return fail(c, 400, 'expired');
        if (envelope.exp > t + config.commandTimeoutMs) return fail(c, 400, 'exp_beyond_command_timeout');
      }
      let signer: Address;
      try {
        signer = await recoverPerpsSigner(envelope, {
          domain: config.perpsDomain,
          withdrawDomain: config.perpsWithdrawDomain,
        });
      } catch {
        return fail(c, 401, 'invalid_signature');
      }
      const signerKey = signer.toLowerCase();
      // A session command runs here too: only the session's own proxy may trade on it.
      const sessionProxy = this.ctx.sessionRequests.get(c.req.raw);
      if (sessionProxy !== undefined && sessionProxy !== signerKey) return fail(c, 401, 'session_signer_mismatch');
      let account: Account | undefined;
      if (cmd.signer === 'proxy') {
        const owner = proxyIndex.get(signerKey);
        account = owner ? venue.findAccount(owner) : undefined;
        const p = account?.proxies.get(signerKey);
        if (!account || !p) return fail(c, 401, 'unknown_proxy');
        if (p.expiry <= t) return fail(c, 401, 'proxy_expired');
      } else {
        const claimed = spec.owner ? spec.owner(args.output) : signer;
        if (claimed.toLowerCase() !== signerKey) return fail(c, 401, 'signer_mismatch');
        account = venue.findAccount(signerKey);
        if (!account && cmd.type === 'createProxy') account = this.ctx.openAccount(signer);
        if (!account) return fail(c, 401, 'unknown_account');
      }
      const replayKey = `${signerKey}:${envelope.salt}:${envelope.ts}`;
      if (seenCommands.has(replayKey)) return fail(c, 409, 'replayed');
      if (!this.takeWeight(c, account.owner.toLowerCase(), cmd.weight.request, cmd.weight.action))
        return fail(c, 429, 'rate_limited');
      seenCommands.set(replayKey, t);
      venue.settleDeposits(account, config.depositConfirmationMs);
      venue.checkAutoCancel(account);
      c.set('account', account);
      c.set('envelope', envelope);
      c.set('args', args.output);
      await next();
    });
  }
}

/** A price or quantity (bigint at `PX_SCALE` decimals) as the venue's decimal string. */
export function px(value: bigint): string {
  return fromUnits(value, PX_SCALE);
}

/** A USDC amount (bigint base units, 6 decimals) as the venue's decimal string. */
export function usd(value: bigint): string {
  return fromUnits(value, 6);
}

/** Candle and history intervals the venue accepts (`interval=`), in ms. */
export const INTERVALS: Readonly<Record<string, number>> = {
  '1s': 1_000,
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '30m': 1_800_000,
  '1h': HOUR,
  '4h': 4 * HOUR,
  '1d': 24 * HOUR,
  '1w': 7 * 24 * HOUR,
};
