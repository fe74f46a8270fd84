/**
 * Sandbox perps gateway routes (seed `perps-gateway-api.md` endpoints 1-15 plus PROTOCOL.md §1.3
 * proxy issuance, get-orders, instruments and book reads). Mounted under `/perps`.
 *
 * Every command is verified before anything changes: the envelope is parsed and the signed tuple
 * rebuilt from the JSON body (`lib/perps`), `ts` / `exp` checked against the clock, the signer
 * recovered with viem and checked against the role the command needs (registered, unexpired proxy for
 * trading; the account's owner for owner-signed commands), the (signer, salt, ts) triple checked for
 * replay, then request and action weight taken from the account's budgets.
 */
import { Hono, type Context } from 'hono';
import type { Address } from 'viem';
import { InvalidFieldError } from '../../validation';
import type { PerpsCommandType, PerpsOrderInput } from '../../perps/commands';
import { parsePerpsEnvelope, recoverPerpsSigner, type ParsedPerpsEnvelope } from '../../perps/verify';
import { PERPS_READS } from '../../perps/reads';
import { l2SignaturesEqual } from '../../clob/auth';
import { fromUnits, toUnits } from '../decimal';
import type { SandboxContext } from '../context';
import { PX_SCALE, VenueError, type Account } from './engine';

const PAGE = 100;

function fail(c: Context, status: number, error: string, extra: Record<string, unknown> = {}) {
  return c.json({ status: 'err', error, ...extra }, status as 400);
}

function randomSecret(): string {
  const b = crypto.getRandomValues(new Uint8Array(32));
  return Buffer.from(b).toString('base64url');
}

/** Query integer (ms or id) or undefined; throws VenueError on garbage. */
function qInt(c: Context, name: string): number | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,16}$/.test(v)) throw new VenueError(`invalid_${name}`);
  return Number(v);
}

export function perpsRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  const { venue, config } = ctx;
  const now = () => ctx.now();

  const takeWeight = (c: Context, key: string, request: number, action: number) => {
    const t = now();
    const waitReq = ctx.perpsRequestWeight.check(key, request, t);
    const waitAct = ctx.perpsActionWeight.check(key, action, t);
    const wait = Math.max(waitReq, waitAct);
    if (wait > 0) {
      c.header('Retry-After', String(Math.ceil(wait / 1000)));
      return false;
    }
    ctx.perpsRequestWeight.record(key, request, t);
    ctx.perpsActionWeight.record(key, action, t);
    return true;
  };

  /** Proxy-header authentication for account reads (PROTOCOL.md §1.4). */
  const proxyAuth = (c: Context): Account | undefined => {
    const proxy = c.req.header('SERVICE-PROXY')?.toLowerCase();
    const secret = c.req.header('SERVICE-SECRET') ?? '';
    if (!proxy) return undefined;
    const owner = ctx.proxyIndex.get(proxy);
    const acct = owner ? venue.findAccount(owner) : undefined;
    const p = acct?.proxies.get(proxy);
    if (!acct || !p || !l2SignaturesEqual(p.secret, secret) || p.expiry <= now()) return undefined;
    venue.settleDeposits(acct, config.depositConfirmationMs);
    venue.checkAutoCancel(acct);
    return acct;
  };

  const read = (name: keyof typeof PERPS_READS, handler: (c: Context, a: Account | undefined) => Response | Promise<Response>) => {
    const r = PERPS_READS[name];
    const method = r.method === 'GET' ? app.get.bind(app) : app.post.bind(app);
    method(r.path, async (c) => {
      let acct: Account | undefined;
      if (r.auth === 'proxy-headers') {
        acct = proxyAuth(c);
        if (!acct) return fail(c, 401, 'unauthorized');
      }
      if (!takeWeight(c, acct ? acct.owner.toLowerCase() : 'public', r.weight, 0)) return fail(c, 429, 'rate_limited');
      try {
        return await handler(c, acct);
      } catch (err) {
        if (err instanceof VenueError) return fail(c, err.status, err.error, err.extra);
        throw err;
      }
    });
  };

  // ------------------------------------------------------------------------------------------
  // Commands

  const command = (method: 'post' | 'delete' | 'patch', path: string, types: PerpsCommandType[]) => {
    app[method](path, async (c) => {
      const t = now();
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch {
        return fail(c, 400, 'invalid_json');
      }
      let parsed: ParsedPerpsEnvelope;
      try {
        parsed = parsePerpsEnvelope(body);
      } catch (err) {
        if (err instanceof InvalidFieldError) return fail(c, 400, 'invalid_request', { field: err.field, reason: err.reason });
        throw err;
      }
      const { command: cmd } = parsed;
      if (!types.includes(cmd.type)) return fail(c, 400, 'wrong_command_for_endpoint');
      const unit = cmd.struct === 'Withdraw' ? 1000 : 1;
      const nowTs = Math.floor(t / unit);
      if (parsed.ts > nowTs + Math.ceil(config.clockSkewMs / unit)) return fail(c, 400, 'future_timestamp');
      if (parsed.ts < nowTs - Math.ceil(config.commandTimeoutMs / unit)) return fail(c, 400, 'stale_timestamp');
      if (parsed.exp !== undefined) {
        if (parsed.exp <= t) return fail(c, 400, 'expired');
        if (parsed.exp > t + config.commandTimeoutMs) return fail(c, 400, 'exp_beyond_command_timeout');
      }
      let signer: Address;
      try {
        signer = await recoverPerpsSigner(parsed, { domain: config.perpsDomain, withdrawDomain: config.perpsWithdrawDomain });
      } catch {
        return fail(c, 401, 'invalid_signature');
      }
      const signerKey = signer.toLowerCase();
      let acct: Account | undefined;
      if (cmd.signer === 'proxy') {
        const owner = ctx.proxyIndex.get(signerKey);
        acct = owner ? venue.findAccount(owner) : undefined;
        const p = acct?.proxies.get(signerKey);
        if (!acct || !p) return fail(c, 401, 'unknown_proxy');
        if (p.expiry <= t) return fail(c, 401, 'proxy_expired');
      } else {
        const claimed =
          cmd.createProxy?.owner ?? cmd.withdraw?.account ?? (cmd.type === 'internalTransfer' ? (cmd.op[1][0] as string) : signer);
        if (claimed.toLowerCase() !== signerKey) return fail(c, 401, 'signer_mismatch');
        acct = venue.findAccount(signerKey);
        if (!acct && cmd.type === 'createProxy') acct = ctx.openAccount(signer);
        if (!acct) return fail(c, 401, 'unknown_account');
      }
      const replayKey = `${signerKey}:${parsed.salt}:${parsed.ts}`;
      if (ctx.seenCommands.has(replayKey)) return fail(c, 409, 'replayed');
      if (!takeWeight(c, acct.owner.toLowerCase(), cmd.weight.request, cmd.weight.action)) return fail(c, 429, 'rate_limited');
      ctx.seenCommands.set(replayKey, t);
      venue.settleDeposits(acct, config.depositConfirmationMs);
      venue.checkAutoCancel(acct);
      try {
        return c.json(execute(acct, parsed, c) as object);
      } catch (err) {
        if (err instanceof VenueError) return fail(c, err.status, err.error, err.extra);
        throw err;
      }
    });
  };

  const execute = (acct: Account, parsed: ParsedPerpsEnvelope, c: Context): unknown => {
    const { command: cmd } = parsed;
    const t = now();
    const args = cmd.body.args as Record<string, unknown>;
    switch (cmd.type) {
      case 'createOrders': {
        const placed = venue.placeOrders(acct, cmd.body.args as PerpsOrderInput[]);
        return placed.map((o) => ({ status: 'ok', oid: o.oid, ...(o.coid ? { coid: o.coid } : {}) }));
      }
      case 'cancelOrders':
        return (cmd.body.args as number[]).map((oid) =>
          venue.cancel(acct, venue.orders.get(oid)) ? { status: 'ok', oid } : { status: 'err', oid, error: 'order_not_found' },
        );
      case 'cancelOrdersCOID':
        return (cmd.body.args as string[]).map((coid) => {
          const o = [...venue.orders.values()].find(
            (x) => x.owner === acct.owner.toLowerCase() && x.coid === coid && (x.status === 'open' || x.status === 'untriggered'),
          );
          return o && venue.cancel(acct, o) ? { status: 'ok', oid: o.oid, coid } : { status: 'err', oid: 0, coid, error: 'order_not_found' };
        });
      case 'cancelAll':
        return venue.cancelAll(acct, args.iid as number | undefined).map((oid) => ({ status: 'ok', oid }));
      case 'autoCancel': {
        const time = args.time as number;
        if (time !== 0 && time < t + 5_000) throw new VenueError('auto_cancel_too_soon');
        acct.autoCancelAt = time === 0 ? undefined : time;
        return { status: 'ok', time };
      }
      case 'updateLeverage': {
        const inst = venue.instruments.get(args.iid as number);
        if (!inst) throw new VenueError('unknown_instrument');
        if ((args.lev as number) > inst.maxLeverage) throw new VenueError('invalid_leverage');
        const before = venue.configOf(acct, inst.iid);
        acct.config.set(inst.iid, { leverage: args.lev as number, cross: args.cross as boolean });
        if (venue.usedMargin(acct) > acct.balance) {
          acct.config.set(inst.iid, before);
          throw new VenueError('insufficient_margin');
        }
        return { status: 'ok', instrument_id: inst.iid, leverage: args.lev, cross: args.cross };
      }
      case 'internalTransfer': {
        const id = venue.nextTransferId++;
        if ((args.token as string).toLowerCase() !== config.usdc.toLowerCase()) throw new VenueError('unknown_token', 400, { transfer_id: id });
        const amount = toUnits(args.amount as string, 6);
        if (amount === undefined) throw new VenueError('invalid_amount', 400, { transfer_id: id });
        const to = args.to as string;
        if (to.toLowerCase() === acct.owner.toLowerCase()) throw new VenueError('invalid_destination', 400, { transfer_id: id });
        if (amount > venue.available(acct)) throw new VenueError('insufficient_margin', 400, { transfer_id: id });
        const dest = venue.findAccount(to) ?? ctx.openAccount(to as Address, 0n);
        acct.balance -= amount;
        dest.balance += amount;
        const label = parsed.command.label ?? '';
        const base = { transfer_id: id, asset: 'USDC', amount: fromUnits(amount, 6), created_timestamp: t, label };
        acct.transfers.push({ ...base, direction: 'out', counterparty: dest.owner });
        dest.transfers.push({ ...base, direction: 'in', counterparty: acct.owner });
        return { status: 'ok', transfer_id: id };
      }
      case 'withdraw': {
        const id = venue.nextWithdrawId++;
        const w = cmd.withdraw!;
        if (w.token.toLowerCase() !== config.usdc.toLowerCase()) throw new VenueError('unknown_token', 400, { withdraw_id: id });
        if (w.amount > venue.available(acct)) throw new VenueError('insufficient_margin', 400, { withdraw_id: id });
        acct.balance -= w.amount;
        acct.withdrawals.push({ withdraw_id: id, amount: w.amount, to: w.to, token: w.token, ts: t });
        return { status: 'ok', withdraw_id: id };
      }
      case 'deleteProxy': {
        const key = (args.proxy as string).toLowerCase();
        if (!acct.proxies.has(key)) throw new VenueError('unknown_proxy');
        acct.proxies.delete(key);
        ctx.proxyIndex.delete(key);
        return { status: 'ok' };
      }
      case 'createProxy': {
        const p = cmd.createProxy!;
        const key = p.proxy.toLowerCase();
        if (p.expiry <= t || p.expiry > t + config.maxProxyLifetimeMs) throw new VenueError('invalid_expiry');
        if (ctx.proxyIndex.has(key) || venue.findAccount(key)) throw new VenueError('proxy_exists');
        if (acct.proxies.size >= config.maxProxiesPerAccount) throw new VenueError('too_many_proxies');
        const secret = randomSecret();
        acct.proxies.set(key, { proxy: p.proxy, secret, expiry: p.expiry, label: parsed.command.label ?? '' });
        ctx.proxyIndex.set(key, acct.owner.toLowerCase());
        c.header('Cache-Control', 'no-store');
        return { status: 'ok', proxy: p.proxy, expiry: p.expiry, secret };
      }
      default:
        throw new VenueError('unsupported_command');
    }
  };

  command('patch', '/v1/trade/leverage', ['updateLeverage']);
  command('post', '/v1/trade/orders', ['createOrders']);
  command('delete', '/v1/trade/orders-coid', ['cancelOrdersCOID']);
  command('delete', '/v1/trade/orders', ['cancelOrders']);
  command('delete', '/v1/trade/orders/all', ['cancelAll']);
  command('patch', '/v1/trade/auto-cancel', ['autoCancel']);
  command('post', '/v1/account/internal-transfer', ['internalTransfer']);
  command('post', '/v1/account/withdraw', ['withdraw']);
  command('delete', '/v1/account/proxy', ['deleteProxy']);
  command('post', '/v1/account/proxy', ['createProxy']);

  // ------------------------------------------------------------------------------------------
  // Reads

  read('invite', (c, a) => {
    if (!a!.invite) a!.invite = `CS${a!.owner.slice(2, 8).toUpperCase()}`;
    return c.json({ status: 'ok', code: a!.invite, referrals_available: Math.max(0, config.referralCap - a!.children), cooldown_ms: null });
  });

  read('deposits', (c, a) => {
    const status = c.req.query('status');
    if (status !== undefined && !['pending', 'confirmed', 'removed'].includes(status)) throw new VenueError('invalid_status');
    const hash = c.req.query('hash');
    const end = qInt(c, 'end_time') ?? now();
    const start = qInt(c, 'start_time') ?? 0;
    const rows = a!.deposits
      .map((d) => {
        const conf = venue.confirmations(d, config.depositConfirmationMs);
        const st = d.removed ? 'removed' : d.credited ? 'confirmed' : 'pending';
        return {
          hash: d.hash,
          asset: d.asset,
          amount: d.amount.toString(),
          from: d.from,
          to: d.to,
          confirmations: conf,
          required_confirmations: d.requiredConfirmations,
          created_timestamp: d.created,
          confirmed_timestamp: d.credited ? d.created + d.requiredConfirmations * config.depositConfirmationMs : 0,
          status: st,
        };
      })
      .filter((d) => (!status || d.status === status) && (!hash || d.hash === hash) && d.created_timestamp >= start && d.created_timestamp <= end)
      .sort((x, y) => y.created_timestamp - x.created_timestamp);
    return c.json({ data: rows.slice(0, PAGE), more: rows.length > PAGE });
  });

  read('internalTransfers', (c, a) => {
    const direction = c.req.query('direction');
    if (direction !== undefined && direction !== 'in' && direction !== 'out') throw new VenueError('invalid_direction');
    const end = qInt(c, 'end_time') ?? now();
    const start = qInt(c, 'start_time') ?? 0;
    const rows = a!.transfers
      .filter((x) => (!direction || x.direction === direction) && x.created_timestamp >= start && x.created_timestamp <= end)
      .sort((x, y) => y.created_timestamp - x.created_timestamp);
    return c.json({ data: rows.slice(0, PAGE), more: rows.length > PAGE });
  });

  read('config', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const ids = iid === undefined ? [...venue.instruments.keys()] : venue.instruments.has(iid) ? [iid] : [];
    return c.json(ids.map((id) => ({ instrument_id: id, ...venue.configOf(a!, id) })));
  });

  read('funding', (c) => {
    const iid = qInt(c, 'instrument_id');
    if (iid === undefined || !venue.instruments.has(iid)) throw new VenueError('unknown_instrument');
    const HOUR = 3_600_000;
    const end = qInt(c, 'end_time') ?? now();
    const start = qInt(c, 'start_time') ?? end - 7 * 24 * HOUR;
    if (start > end) throw new VenueError('invalid_time_range');
    const first = Math.ceil(start / HOUR) * HOUR;
    const data: { funding_rate: string; timestamp: number }[] = [];
    let ts = first;
    for (; ts <= end && data.length < PAGE; ts += HOUR) data.push({ funding_rate: ctx.fundingRate(iid, ts), timestamp: ts });
    return c.json({ data, more: ts <= end });
  });

  read('referral', (c, a) =>
    c.json({
      code: a!.invite ?? '',
      children_count: a!.children,
      referrals_left: Math.max(0, config.referralCap - a!.children),
      fee_share_rate: '0.2',
      ...(a!.parent ? { parent: a!.parent } : {}),
    }),
  );

  read('credentials', (c, a) =>
    c.json({ address: a!.owner, keys: [...a!.proxies.values()].map((p) => ({ proxy: p.proxy, expiry: p.expiry, label: p.label })) }),
  );

  read('exchange', (c) =>
    c.json({
      name: config.perpsDomain.name,
      version: config.perpsDomain.version,
      chain_id: config.perpsDomain.chainId,
      contract: config.perpsWithdrawDomain.verifyingContract,
    }),
  );

  read('orders', (c, a) => {
    const status = c.req.query('status') ?? 'all';
    if (!['all', 'open', 'filled', 'cancelled', 'rejected', 'untriggered'].includes(status)) throw new VenueError('invalid_status');
    const iid = qInt(c, 'instrument_id');
    const oid = qInt(c, 'oid');
    const coid = c.req.query('coid');
    const rows = [...venue.orders.values()]
      .filter(
        (o) =>
          o.owner === a!.owner.toLowerCase() &&
          (status === 'all' || o.status === status) &&
          (iid === undefined || o.iid === iid) &&
          (oid === undefined || o.oid === oid) &&
          (coid === undefined || o.coid === coid),
      )
      .sort((x, y) => y.oid - x.oid)
      .slice(0, PAGE)
      .map((o) => venue.view(o));
    return c.json({ data: rows, more: false });
  });

  read('instruments', (c) =>
    c.json(
      [...venue.instruments.values()].map((i) => ({
        instrument_id: i.iid,
        symbol: i.symbol,
        tick_size: fromUnits(i.tick, PX_SCALE),
        lot_size: fromUnits(i.lot, PX_SCALE),
        mark_price: fromUnits(i.mark, PX_SCALE),
        max_leverage: i.maxLeverage,
      })),
    ),
  );

  // Public book read (not in the seed; weight 2 like the other small info reads).
  app.get('/v1/info/book', (c) => {
    let iid: number | undefined;
    try {
      iid = qInt(c, 'instrument_id');
    } catch {
      return fail(c, 400, 'invalid_instrument_id');
    }
    if (iid === undefined || !venue.instruments.has(iid)) return fail(c, 400, 'unknown_instrument');
    if (!takeWeight(c, 'public', 2, 0)) return fail(c, 429, 'rate_limited');
    return c.json({ instrument_id: iid, ...venue.levels(iid) });
  });

  // Positions and balance (not in the seed's shown reads; proxy headers, weight 2).
  app.get('/v1/account/summary', (c) => {
    const a = proxyAuth(c);
    if (!a) return fail(c, 401, 'unauthorized');
    if (!takeWeight(c, a.owner.toLowerCase(), 2, 0)) return fail(c, 429, 'rate_limited');
    return c.json({
      address: a.owner,
      balance: fromUnits(a.balance, 6),
      available: fromUnits(venue.available(a), 6),
      positions: [...a.positions].map(([iid, p]) => ({ instrument_id: iid, size: fromUnits(p.size, PX_SCALE), entry_price: fromUnits(p.entry, PX_SCALE) })),
    });
  });

  return app;
}
