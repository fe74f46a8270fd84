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
import { keccak256, toHex, type Address } from 'viem';
import { InvalidFieldError } from '../../validation';
import type { PerpsCommandType, PerpsOrderInput } from '../../perps/commands';
import { parsePerpsEnvelope, recoverPerpsSigner, type ParsedPerpsEnvelope } from '../../perps/verify';
import { PERPS_READS } from '../../perps/reads';
import { l2SignaturesEqual } from '../../clob/auth';
import { abs, fromUnits, toUnits } from '../../decimal';
import type { SandboxContext } from '../context';
import { MAKER_FEE, NOTIONAL_DIV as NOTIONAL_DIV_6, PX_SCALE, TAKER_FEE, VenueError, type Account } from './engine';

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

  /**
   * A time range in ms: the venue's `start_timestamp` / `end_timestamp` (the official client's names),
   * or the seed's `start_time` / `end_time`. `end` defaults to now, `start` to `end − windowMs` (0: none).
   */
  const range = (c: Context, windowMs: number) => {
    const end = qInt(c, 'end_timestamp') ?? qInt(c, 'end_time') ?? now();
    const start = qInt(c, 'start_timestamp') ?? qInt(c, 'start_time') ?? (windowMs ? end - windowMs : undefined);
    if (start !== undefined && start > end) throw new VenueError('invalid_time_range');
    return { start, end };
  };

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
        // The venue answers cancel-all with a bare acknowledgement (PROTOCOL.md §3.4).
        venue.cancelAll(acct, args.iid as number | undefined);
        return { status: 'ok' };
      case 'autoCancel': {
        const time = args.time as number;
        if (time !== 0 && time < t + 5_000) throw new VenueError('auto_cancel_too_soon');
        acct.autoCancelAt = time === 0 ? undefined : time;
        return { status: 'ok', deadline: time };
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
        venue.snapshot(acct);
        venue.snapshot(dest);
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
        venue.snapshot(acct);
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
    const { start, end } = range(c, 0);
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
          ...(d.credited ? { confirmed_timestamp: d.created + d.requiredConfirmations * config.depositConfirmationMs } : {}),
          status: st,
        };
      })
      .filter((d) => (!status || d.status === status) && (!hash || d.hash === hash) && d.created_timestamp >= (start ?? 0) && d.created_timestamp <= end)
      .sort((x, y) => y.created_timestamp - x.created_timestamp);
    return c.json({ data: rows.slice(0, PAGE), more: rows.length > PAGE });
  });

  read('internalTransfers', (c, a) => {
    const direction = c.req.query('direction');
    if (direction !== undefined && direction !== 'in' && direction !== 'out') throw new VenueError('invalid_direction');
    const { start, end } = range(c, 0);
    const rows = a!.transfers
      .filter((x) => (!direction || x.direction === direction) && x.created_timestamp >= (start ?? 0) && x.created_timestamp <= end)
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
    const r = range(c, 7 * 24 * HOUR);
    const end = r.end;
    const start = r.start!;
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

  const PX = (v: bigint) => fromUnits(v, PX_SCALE);
  const USD = (v: bigint) => fromUnits(v, 6);
  const mine = (a: Account) => [...venue.orders.values()].filter((o) => o.owner === a.owner.toLowerCase());

  /** `GET /v1/account/orders`: the account's orders, newest first, filtered by `order_id`, `client_order_id`, `instrument_id` and time. */
  read('orders', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const oid = qInt(c, 'order_id') ?? qInt(c, 'oid');
    const coid = c.req.query('client_order_id') ?? c.req.query('coid');
    const { start, end } = range(c, 0);
    const rows = mine(a!)
      .filter((o) => (iid === undefined || o.iid === iid) && (oid === undefined || o.oid === oid) && (coid === undefined || o.coid === coid) && o.created >= (start ?? 0) && o.created <= end)
      .sort((x, y) => y.oid - x.oid)
      .slice(0, PAGE)
      .map((o) => venue.view(o));
    return c.json(rows);
  });

  /** `GET /v1/account/open-orders`: resting and untriggered orders. */
  read('openOrders', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    return c.json(
      mine(a!)
        .filter((o) => (o.status === 'open' || o.status === 'untriggered') && (iid === undefined || o.iid === iid))
        .sort((x, y) => y.oid - x.oid)
        .map((o) => venue.view(o)),
    );
  });

  read('instruments', (c) =>
    c.json(
      [...venue.instruments.values()].map((i) => ({
        instrument_id: i.iid,
        instrument_type: 'perpetual',
        category: 'crypto',
        symbol: i.symbol,
        base_asset: i.symbol.replace(/-PERP$/, ''),
        quote_asset: 'USDC',
        funding_interval: '1h',
        quantity_decimals: (PX(i.lot).split('.')[1] ?? '').length,
        price_decimals: (PX(i.tick).split('.')[1] ?? '').length,
        price_bounds: '0.1',
        liquidation_fee: '0.01',
        max_order_count: 1000,
        min_notional: '10',
        max_market_notional: '1000000',
        max_limit_notional: '5000000',
        max_leverage: i.maxLeverage,
        isolated_only: false,
        risk_tiers: [{ lower_bound: '0', max_leverage: i.maxLeverage }],
        // Sandbox extras (not in the venue's schema, which ignores unknown keys): exact tick and lot.
        tick_size: PX(i.tick),
        lot_size: PX(i.lot),
        mark_price: PX(i.mark),
      })),
    ),
  );

  /** `GET /v1/info/book?instrument_id=&depth=`: `[price, quantity]` levels, best first. */
  read('book', (c) => {
    const iid = qInt(c, 'instrument_id');
    if (iid === undefined || !venue.instruments.has(iid)) throw new VenueError('unknown_instrument');
    const depth = qInt(c, 'depth') ?? 100;
    return c.json({ instrument_id: iid, ...venue.levels(iid, Math.min(depth, 1000)), timestamp: now(), sequence: venue.bookSequence });
  });

  const mid = (iid: number) => {
    const b = venue.book(iid);
    const bid = b.bids[0]?.price;
    const ask = b.asks[0]?.price;
    return bid !== undefined && ask !== undefined ? (bid + ask) / 2n : venue.instruments.get(iid)!.mark;
  };
  const HOUR = 3_600_000;
  const iidsOf = (c: Context) => {
    const iid = qInt(c, 'instrument_id');
    if (iid !== undefined && !venue.instruments.has(iid)) throw new VenueError('unknown_instrument');
    return iid === undefined ? [...venue.instruments.keys()] : [iid];
  };

  /** `GET /v1/info/tickers`: index (= mark here), mark, last, mid, open interest, funding rate and next funding time. */
  read('tickers', (c) =>
    c.json(
      iidsOf(c).map((iid) => {
        const i = venue.instruments.get(iid)!;
        const last = [...venue.trades].reverse().find((t) => t.iid === iid)?.price ?? i.mark;
        let oi = 0n;
        for (const a of venue.accounts.values()) {
          const p = a.positions.get(iid);
          if (p && p.size > 0n) oi += p.size;
        }
        return {
          instrument_id: iid,
          symbol: i.symbol,
          index_price: PX(i.mark),
          mark_price: PX(i.mark),
          last_price: PX(last),
          mid_price: PX(mid(iid)),
          open_interest: PX(oi),
          funding_rate: ctx.fundingRate(iid, now()),
          next_funding: Math.floor(now() / HOUR) * HOUR + HOUR,
          timestamp: now(),
        };
      }),
    ),
  );

  /** 24 h candles of an instrument from its public trades (the mark when an hour had none). */
  const candles = (iid: number, start: number, end: number, stepMs: number) => {
    const out: [number, string, string, string, string, string, number][] = [];
    const i = venue.instruments.get(iid)!;
    let prev = i.mark;
    for (let t = Math.floor(start / stepMs) * stepMs; t <= end && out.length < 1000; t += stepMs) {
      const ts = venue.trades.filter((x) => x.iid === iid && x.ts >= t && x.ts < t + stepMs);
      const ps = ts.map((x) => x.price);
      const open = ps[0] ?? prev;
      const close = ps[ps.length - 1] ?? prev;
      const hi = ps.reduce((a, b) => (b > a ? b : a), open);
      const lo = ps.reduce((a, b) => (b < a ? b : a), open);
      const vol = ts.reduce((a, x) => a + x.qty, 0n);
      out.push([t, PX(open), PX(hi), PX(lo), PX(close), PX(vol), ts.length]);
      prev = close;
    }
    return out;
  };
  const INTERVALS: Record<string, number> = { '1s': 1_000, '1m': 60_000, '5m': 300_000, '15m': 900_000, '30m': 1_800_000, '1h': HOUR, '4h': 4 * HOUR, '1d': 24 * HOUR, '1w': 7 * 24 * HOUR };

  read('statistics', (c) =>
    c.json(
      iidsOf(c).map((iid) => {
        const k = candles(iid, now() - 24 * HOUR, now(), HOUR);
        const vol = venue.trades.filter((x) => x.iid === iid && x.ts >= now() - 24 * HOUR).reduce((a, x) => a + x.qty, 0n);
        return { instrument_id: iid, symbol: venue.instruments.get(iid)!.symbol, volume: PX(vol), open_price: k[0]?.[1] ?? PX(venue.instruments.get(iid)!.mark), klines: k };
      }),
    ),
  );

  /** `GET /v1/info/klines?instrument_id=&interval=&start_timestamp=&end_timestamp=`: `{ data: [ts, o, h, l, c, volume, trades][], more }`. */
  read('klines', (c) => {
    const iid = qInt(c, 'instrument_id');
    if (iid === undefined || !venue.instruments.has(iid)) throw new VenueError('unknown_instrument');
    const step = INTERVALS[c.req.query('interval') ?? '1h'];
    if (!step) throw new VenueError('invalid_interval');
    const { start, end } = range(c, 24 * HOUR);
    const data = candles(iid, start!, end, step);
    return c.json({ data, more: data.length >= 1000 });
  });

  /** `GET /v1/info/trades?instrument_id=`: public trades, newest first, `{ data, more }`. */
  read('trades', (c) => {
    const iid = qInt(c, 'instrument_id');
    const { start, end } = range(c, 0);
    const rows = venue.trades.filter((t) => (iid === undefined || t.iid === iid) && t.ts >= (start ?? 0) && t.ts <= end).reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((t) => ({ trade_id: t.tradeId, instrument_id: t.iid, side: t.buy ? 'long' : 'short', price: PX(t.price), quantity: PX(t.qty), timestamp: t.ts, hash: '0x' })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/info/fees`: the sandbox's flat schedule (taker 5 bp, maker 1 bp) with one volume tier. */
  read('fees', (c) =>
    c.json({
      fee_schedule: [
        {
          instrument_type: 'perpetual',
          category: 'crypto',
          taker_fee_rate: fromUnits((TAKER_FEE.num * 10n ** 6n) / TAKER_FEE.den, 6),
          maker_fee_rate: fromUnits((MAKER_FEE.num * 10n ** 6n) / MAKER_FEE.den, 6),
          tiers: [{ min_volume_30d: '0', taker_fee_rate: fromUnits((TAKER_FEE.num * 10n ** 6n) / TAKER_FEE.den, 6), maker_fee_rate: fromUnits((MAKER_FEE.num * 10n ** 6n) / MAKER_FEE.den, 6) }],
        },
      ],
    }),
  );

  /**
   * `GET /v1/account/portfolio`: positions with entry, mark value, liquidation price, unrealised PnL,
   * return on equity and cumulative funding; the margin summary; withdrawable = free collateral.
   */
  read('portfolio', (c, a) => {
    venue.settleFunding(a!);
    let im = 0n;
    let mm = 0n;
    let pv = 0n;
    const positions = [...a!.positions].map(([iid, p]) => {
      const i = venue.instruments.get(iid)!;
      const cfg = venue.configOf(a!, iid);
      const value = (abs(p.size) * i.mark) / NOTIONAL_DIV_6;
      const initial = value / BigInt(cfg.leverage);
      const maint = venue.maintenance(iid, p);
      const upnl = venue.unrealized(iid, p);
      im += initial;
      mm += maint;
      pv += value;
      return {
        instrument_id: iid,
        symbol: i.symbol,
        size: PX(p.size),
        entry_price: PX(p.entry),
        leverage: cfg.leverage,
        cross: cfg.cross,
        initial_margin: USD(initial),
        maintenance_margin: USD(maint),
        position_value: USD(value),
        // At the instrument's price precision, rounded toward the entry (the conservative side).
        liquidation_price: PX(((liq) => (p.size > 0n ? liq + ((i.tick - (liq % i.tick)) % i.tick) : liq - (liq % i.tick)))(venue.liquidationPrice(a!, iid))),
        unrealized_pnl: USD(upnl),
        return_on_equity: initial === 0n ? '0' : fromUnits((upnl * 10n ** 6n) / initial, 6),
        cumulative_funding: USD(p.funding ?? 0n),
      };
    });
    return c.json({
      positions,
      margin: { total_account_value: USD(venue.equity(a!)), total_initial_margin: USD(im), total_maintenance_margin: USD(mm), total_position_value: USD(pv) },
      withdrawable: USD(venue.available(a!)),
      in_liquidation: false,
      timestamp: now(),
    });
  });

  read('balances', (c, a) => c.json([{ asset: 'USDC', balance: USD(a!.balance), value: USD(a!.balance) }]));

  read('stats', (c, a) => {
    const since = now() - 7 * 24 * HOUR;
    let taker = 0n;
    let maker = 0n;
    for (const f of a!.fills) {
      if (f.ts < since) continue;
      const n = (f.qty * f.price) / NOTIONAL_DIV_6;
      if (f.taker) taker += n;
      else maker += n;
    }
    const total = taker + maker;
    return c.json({
      volume_7d: USD(total),
      taker_volume_7d: USD(taker),
      maker_volume_7d: USD(maker),
      account_maker_share_7d: total === 0n ? '0' : fromUnits((maker * 10n ** 6n) / total, 6),
    });
  });

  /** `GET /v1/account/fills`: the account's fills, newest first, `{ data, more }`. */
  read('fills', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const { start, end } = range(c, 0);
    const rows = a!.fills.filter((f) => (iid === undefined || f.iid === iid) && f.ts >= (start ?? 0) && f.ts <= end).reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((f) => ({
        trade_id: f.tradeId,
        order_id: f.oid,
        instrument_id: f.iid,
        side: f.buy ? 'long' : 'short',
        price: PX(f.price),
        quantity: PX(f.qty),
        taker: f.taker,
        fee: USD(f.fee),
        fee_asset: 'USDC',
        previous_size: PX(f.prevSize),
        previous_entry_price: PX(f.prevEntry),
        pnl: USD(f.pnl),
        liquidation: false,
        timestamp: f.ts,
        hash: '0x',
      })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/account/funding`: hourly funding payments, newest first (`funding` + received, − paid). */
  read('fundingPayments', (c, a) => {
    venue.settleFunding(a!);
    const iid = qInt(c, 'instrument_id');
    const { start, end } = range(c, 0);
    const rows = a!.funding.filter((f) => (iid === undefined || f.iid === iid) && f.ts >= (start ?? 0) && f.ts <= end).reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((f) => ({ id: f.id, instrument_id: f.iid, size: PX(f.size), funding_rate: f.rate, funding_asset: 'USDC', funding: USD(f.amount), timestamp: f.ts })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/account/withdrawals`: newest first; the sandbox confirms a withdrawal at once (12 of 12). */
  read('withdrawals', (c, a) => {
    const { start, end } = range(c, 0);
    const rows = a!.withdrawals.filter((w) => w.ts * 1000 >= (start ?? 0) && w.ts * 1000 <= end).slice().reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((w) => ({
        withdraw_id: w.withdraw_id,
        asset: 'USDC',
        amount: w.amount.toString(),
        fee: '0',
        status: 'confirmed',
        to: w.to,
        hash: keccak256(toHex(`sandbox-withdrawal:${w.withdraw_id}`)),
        confirmations: 12,
        required_confirmations: 12,
        created_timestamp: w.ts * 1000,
        confirmed_timestamp: w.ts * 1000,
      })),
      more: rows.length > PAGE,
    });
  });

  /** Equity or cumulative PnL points (`[ts, value]`, oldest first) sampled at `interval` over the range. */
  const history = (c: Context, a: Account, pick: 1 | 2) => {
    venue.settleFunding(a);
    venue.snapshot(a);
    const step = INTERVALS[c.req.query('interval') ?? '1h'] ?? HOUR;
    const { start, end } = range(c, 24 * HOUR);
    const pts: [number, string][] = [];
    for (let t = Math.floor(start! / step) * step; t <= end && pts.length < 1000; t += step) {
      const last = [...a.history].reverse().find((h) => h[0] <= t + step - 1);
      pts.push([t, USD(last ? last[pick] : pick === 1 ? a.balance : 0n)]);
    }
    return c.json({ data: pts, more: false });
  };
  read('equity', (c, a) => history(c, a!, 1));
  read('pnl', (c, a) => history(c, a!, 2));

  return app;
}
