/**
 * Sandbox perps `/v1/account/*` routes (the official client's `account` module): the owner-signed
 * commands — internal transfer, withdraw, create and delete proxy (seed endpoints 1, 2, 13-15;
 * PROTOCOL.md §1.3) — and the reads authenticated by proxy headers (PROTOCOL.md §1.4, §3.2): invite,
 * referral, credentials, config, orders, open orders, portfolio, balances, stats, fills, funding
 * payments, deposits, transfers, withdrawals, equity and PnL history. Every handler receives the
 * authenticated account from the context (`PerpsGateway`).
 */
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { keccak256, toHex } from 'viem';
import { address, baseUnitsString } from '../../validation';
import { abs, fromUnits, toUnits } from '../../decimal';
import { HOUR, INTERVALS, PAGE, px, qInt, timeRange, usd, windowRange, type PerpsGateway } from './gateway';
import { NOTIONAL_DIV, VenueError, type Account, type Instrument, type PerpsVenue, type Position } from './engine';

/** A fresh proxy secret: 32 random bytes, base64url. */
function randomSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}

/** `internalTransfer` / `withdraw` args (`[account, token, amount, to]` of the signed struct). */
const transferArgs = v.object({ account: address, token: address, amount: v.string(), to: address });
const withdrawArgs = v.object({
  account: address,
  token: address,
  amount: v.pipe(
    baseUnitsString,
    v.transform((s: string) => BigInt(s)),
  ),
  to: address,
});
const createProxyArgs = v.object({ owner: address, proxy: address, expiry: v.number() });

/** Mounts the owner-signed `/v1/account/*` commands of `gw` on `app`. */
export function accountCommandRoutes(app: Hono, gw: PerpsGateway): void {
  const { venue, config, proxyIndex } = gw.ctx;

  gw.command(
    app,
    'POST',
    '/v1/account/internal-transfer',
    { type: 'internalTransfer', args: transferArgs, owner: (a) => a.account },
    (c) => {
      const { account, args, envelope } = c.var;
      const id = venue.nextTransferId++;
      if (args.token.toLowerCase() !== config.usdc.toLowerCase())
        throw new VenueError('unknown_token', 400, { transfer_id: id });
      const amount = toUnits(args.amount, 6);
      if (amount === undefined) throw new VenueError('invalid_amount', 400, { transfer_id: id });
      if (args.to.toLowerCase() === account.owner.toLowerCase())
        throw new VenueError('invalid_destination', 400, { transfer_id: id });
      if (amount > venue.available(account)) throw new VenueError('insufficient_margin', 400, { transfer_id: id });
      const dest = venue.findAccount(args.to) ?? gw.ctx.openAccount(args.to, 0n);
      account.balance -= amount;
      dest.balance += amount;
      venue.snapshot(account);
      venue.snapshot(dest);
      const base = {
        transfer_id: id,
        asset: 'USDC',
        amount: fromUnits(amount, 6),
        created_timestamp: gw.now(),
        label: envelope.command.label ?? '',
      };
      account.transfers.push({ ...base, direction: 'out', counterparty: dest.owner });
      dest.transfers.push({ ...base, direction: 'in', counterparty: account.owner });
      return { status: 'ok', transfer_id: id };
    },
  );

  gw.command(
    app,
    'POST',
    '/v1/account/withdraw',
    { type: 'withdraw', args: withdrawArgs, owner: (a) => a.account },
    (c) => {
      const { account, args } = c.var;
      const id = venue.nextWithdrawId++;
      if (args.token.toLowerCase() !== config.usdc.toLowerCase())
        throw new VenueError('unknown_token', 400, { withdraw_id: id });
      if (args.amount > venue.available(account)) throw new VenueError('insufficient_margin', 400, { withdraw_id: id });
      account.balance -= args.amount;
      account.withdrawals.push({ withdraw_id: id, amount: args.amount, to: args.to, token: args.token, ts: gw.now() });
      venue.snapshot(account);
      return { status: 'ok', withdraw_id: id };
    },
  );

  gw.command(
    app,
    'DELETE',
    '/v1/account/proxy',
    { type: 'deleteProxy', args: v.object({ proxy: v.string() }) },
    (c) => {
      const { account, args } = c.var;
      const key = args.proxy.toLowerCase();
      if (!account.proxies.has(key)) throw new VenueError('unknown_proxy');
      account.proxies.delete(key);
      proxyIndex.delete(key);
      return { status: 'ok' };
    },
  );

  gw.command(
    app,
    'POST',
    '/v1/account/proxy',
    { type: 'createProxy', args: createProxyArgs, owner: (a) => a.owner },
    (c) => {
      const { account, args, envelope } = c.var;
      const t = gw.now();
      const key = args.proxy.toLowerCase();
      if (args.expiry <= t || args.expiry > t + config.maxProxyLifetimeMs) throw new VenueError('invalid_expiry');
      if (proxyIndex.has(key) || venue.findAccount(key)) throw new VenueError('proxy_exists');
      if (account.proxies.size >= config.maxProxiesPerAccount) throw new VenueError('too_many_proxies');
      const secret = randomSecret();
      account.proxies.set(key, { proxy: args.proxy, secret, expiry: args.expiry, label: envelope.command.label ?? '' });
      proxyIndex.set(key, account.owner.toLowerCase());
      c.header('Cache-Control', 'no-store');
      return { status: 'ok', proxy: args.proxy, expiry: args.expiry, secret };
    },
  );
}

/** Whether `ts` (ms) lies in the query's time range (open at the start). */
const within = (r: { start: number | undefined; end: number }, ts: number) => ts >= (r.start ?? 0) && ts <= r.end;
/** `{ data, more }`: the first page of `rows`. */
const page = <T>(rows: T[]) => ({ data: rows.slice(0, PAGE), more: rows.length > PAGE });

/** Mounts the proxy-header `/v1/account/*` reads of the account's profile, funds movements and orders. */
export function accountReadRoutes(app: Hono, gw: PerpsGateway): void {
  const { venue, config } = gw.ctx;
  const now = () => gw.now();
  const mine = (a: Account) => [...venue.orders.values()].filter((o) => o.owner === a.owner.toLowerCase());

  gw.accountRead(app, 'invite', (c, a) => {
    if (!a.invite) a.invite = `CS${a.owner.slice(2, 8).toUpperCase()}`;
    return c.json({
      status: 'ok',
      code: a.invite,
      referrals_available: Math.max(0, config.referralCap - a.children),
      cooldown_ms: null,
    });
  });

  gw.accountRead(app, 'deposits', (c, a) => {
    const status = c.req.query('status');
    if (status !== undefined && !['pending', 'confirmed', 'removed'].includes(status))
      throw new VenueError('invalid_status');
    const hash = c.req.query('hash');
    const r = timeRange(c, now());
    const rows = a.deposits
      .map((d) => ({
        hash: d.hash,
        asset: d.asset,
        amount: d.amount.toString(),
        from: d.from,
        to: d.to,
        confirmations: venue.confirmations(d, config.depositConfirmationMs),
        required_confirmations: d.requiredConfirmations,
        created_timestamp: d.created,
        ...(d.credited
          ? { confirmed_timestamp: d.created + d.requiredConfirmations * config.depositConfirmationMs }
          : {}),
        status: d.removed ? 'removed' : d.credited ? 'confirmed' : 'pending',
      }))
      .filter((d) => (!status || d.status === status) && (!hash || d.hash === hash) && within(r, d.created_timestamp))
      .sort((x, y) => y.created_timestamp - x.created_timestamp);
    return c.json(page(rows));
  });

  gw.accountRead(app, 'internalTransfers', (c, a) => {
    const direction = c.req.query('direction');
    if (direction !== undefined && direction !== 'in' && direction !== 'out') throw new VenueError('invalid_direction');
    const r = timeRange(c, now());
    const rows = a.transfers
      .filter((x) => (!direction || x.direction === direction) && within(r, x.created_timestamp))
      .sort((x, y) => y.created_timestamp - x.created_timestamp);
    return c.json(page(rows));
  });

  gw.accountRead(app, 'config', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const ids = iid === undefined ? [...venue.instruments.keys()] : venue.instruments.has(iid) ? [iid] : [];
    return c.json(ids.map((id) => ({ instrument_id: id, ...venue.configOf(a, id) })));
  });

  gw.accountRead(app, 'referral', (c, a) =>
    c.json({
      code: a.invite ?? '',
      children_count: a.children,
      referrals_left: Math.max(0, config.referralCap - a.children),
      fee_share_rate: '0.2',
      ...(a.parent ? { parent: a.parent } : {}),
    }),
  );

  gw.accountRead(app, 'credentials', (c, a) =>
    c.json({
      address: a.owner,
      keys: [...a.proxies.values()].map((p) => ({ proxy: p.proxy, expiry: p.expiry, label: p.label })),
    }),
  );

  /**
   * `GET /v1/account/orders`: the account's orders, newest first, filtered by `order_id`, `client_order_id`,
   * `instrument_id` and time.
   */
  gw.accountRead(app, 'orders', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const oid = qInt(c, 'order_id') ?? qInt(c, 'oid');
    const coid = c.req.query('client_order_id') ?? c.req.query('coid');
    const r = timeRange(c, now());
    const rows = mine(a)
      .filter(
        (o) =>
          (iid === undefined || o.iid === iid) &&
          (oid === undefined || o.oid === oid) &&
          (coid === undefined || o.coid === coid) &&
          within(r, o.created),
      )
      .sort((x, y) => y.oid - x.oid)
      .slice(0, PAGE)
      .map((o) => venue.view(o));
    return c.json(rows);
  });

  /** `GET /v1/account/open-orders`: resting and untriggered orders. */
  gw.accountRead(app, 'openOrders', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    return c.json(
      mine(a)
        .filter((o) => (o.status === 'open' || o.status === 'untriggered') && (iid === undefined || o.iid === iid))
        .sort((x, y) => y.oid - x.oid)
        .map((o) => venue.view(o)),
    );
  });
}

/** Mounts the proxy-header `/v1/account/*` reads of positions, balances, fills, funding, withdrawals and history. */
export function portfolioReadRoutes(app: Hono, gw: PerpsGateway): void {
  const { venue } = gw.ctx;
  const now = () => gw.now();

  /** `GET /v1/account/portfolio`: {@link portfolioOf} the account now. */
  gw.accountRead(app, 'portfolio', (c, a) => c.json(portfolioOf(venue, a, now())));

  gw.accountRead(app, 'balances', (c, a) =>
    c.json([{ asset: 'USDC', balance: usd(a.balance), value: usd(a.balance) }]),
  );

  gw.accountRead(app, 'stats', (c, a) => {
    const since = now() - 7 * 24 * HOUR;
    let taker = 0n;
    let maker = 0n;
    for (const f of a.fills) {
      if (f.ts < since) continue;
      const n = (f.qty * f.price) / NOTIONAL_DIV;
      if (f.taker) taker += n;
      else maker += n;
    }
    const total = taker + maker;
    return c.json({
      volume_7d: usd(total),
      taker_volume_7d: usd(taker),
      maker_volume_7d: usd(maker),
      account_maker_share_7d: total === 0n ? '0' : fromUnits((maker * 10n ** 6n) / total, 6),
    });
  });

  /** `GET /v1/account/fills`: the account's fills, newest first, `{ data, more }`. */
  gw.accountRead(app, 'fills', (c, a) => {
    const iid = qInt(c, 'instrument_id');
    const r = timeRange(c, now());
    const rows = a.fills.filter((f) => (iid === undefined || f.iid === iid) && within(r, f.ts)).reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((f) => ({
        trade_id: f.tradeId,
        order_id: f.oid,
        instrument_id: f.iid,
        side: f.buy ? 'long' : 'short',
        price: px(f.price),
        quantity: px(f.qty),
        taker: f.taker,
        fee: usd(f.fee),
        fee_asset: 'USDC',
        previous_size: px(f.prevSize),
        previous_entry_price: px(f.prevEntry),
        pnl: usd(f.pnl),
        liquidation: false,
        timestamp: f.ts,
        hash: '0x',
      })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/account/funding`: hourly funding payments, newest first (`funding` + received, − paid). */
  gw.accountRead(app, 'fundingPayments', (c, a) => {
    venue.settleFunding(a);
    const iid = qInt(c, 'instrument_id');
    const r = timeRange(c, now());
    const rows = a.funding.filter((f) => (iid === undefined || f.iid === iid) && within(r, f.ts)).reverse();
    return c.json({
      data: rows.slice(0, PAGE).map((f) => ({
        id: f.id,
        instrument_id: f.iid,
        size: px(f.size),
        funding_rate: f.rate,
        funding_asset: 'USDC',
        funding: usd(f.amount),
        timestamp: f.ts,
      })),
      more: rows.length > PAGE,
    });
  });

  /** `GET /v1/account/withdrawals`: newest first; the sandbox confirms a withdrawal at once (12 of 12). Times in ms. */
  gw.accountRead(app, 'withdrawals', (c, a) => {
    const r = timeRange(c, now());
    const rows = a.withdrawals
      .filter((w) => within(r, w.ts))
      .slice()
      .reverse();
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
        created_timestamp: w.ts,
        confirmed_timestamp: w.ts,
      })),
      more: rows.length > PAGE,
    });
  });

  /**
   * Equity (`pick` 1) or cumulative PnL (`pick` 2) points (`[ts, value]`, oldest first) sampled at `interval` over the
   * range.
   */
  const history = (c: Context, a: Account, pick: 1 | 2) => {
    venue.settleFunding(a);
    venue.snapshot(a);
    const step = INTERVALS[c.req.query('interval') ?? '1h'] ?? HOUR;
    const { start, end } = windowRange(c, now(), 24 * HOUR);
    const pts: [number, string][] = [];
    for (let t = Math.floor(start / step) * step; t <= end && pts.length < 1000; t += step) {
      const last = [...a.history].reverse().find((h) => h[0] <= t + step - 1);
      pts.push([t, usd(last ? last[pick] : pick === 1 ? a.balance : 0n)]);
    }
    return c.json({ data: pts, more: false });
  };
  gw.accountRead(app, 'equity', (c, a) => history(c, a, 1));
  gw.accountRead(app, 'pnl', (c, a) => history(c, a, 2));
}

/** One position row of the portfolio, and its margins (base units) for the summary. */
function positionRow(venue: PerpsVenue, a: Account, inst: Instrument, p: Position) {
  const cfg = venue.configOf(a, inst.iid);
  const value = (abs(p.size) * inst.mark) / NOTIONAL_DIV;
  const initial = value / BigInt(cfg.leverage);
  const maint = venue.maintenance(inst.iid, p);
  const upnl = venue.unrealized(inst.iid, p);
  const liq = venue.liquidationPrice(a, inst.iid);
  // At the instrument's price precision, rounded toward the entry (the conservative side).
  const liqOnTick = p.size > 0n ? liq + ((inst.tick - (liq % inst.tick)) % inst.tick) : liq - (liq % inst.tick);
  const row = {
    instrument_id: inst.iid,
    symbol: inst.symbol,
    size: px(p.size),
    entry_price: px(p.entry),
    leverage: cfg.leverage,
    cross: cfg.cross,
    initial_margin: usd(initial),
    maintenance_margin: usd(maint),
    position_value: usd(value),
    liquidation_price: px(liqOnTick),
    unrealized_pnl: usd(upnl),
    return_on_equity: initial === 0n ? '0' : fromUnits((upnl * 10n ** 6n) / initial, 6),
    cumulative_funding: usd(p.funding ?? 0n),
  };
  return { row, initial, maint, value };
}

/**
 * The portfolio of `a` at `now` (ms) as `GET /v1/account/portfolio` and the `portfolio` stream channel
 * answer it (`@polymarket/bindings/perps` `PerpsPortfolioSchema`): positions with entry, mark value,
 * liquidation price, unrealised PnL, return on equity and cumulative funding; the margin summary;
 * withdrawable = free collateral. Decimal strings (USDC amounts at 6 decimals). Settles funding first.
 */
export function portfolioOf(venue: PerpsVenue, a: Account, now: number) {
  venue.settleFunding(a);
  let im = 0n;
  let mm = 0n;
  let pv = 0n;
  const positions = [];
  for (const [iid, p] of a.positions) {
    const inst = venue.instruments.get(iid);
    if (!inst) continue;
    const r = positionRow(venue, a, inst, p);
    im += r.initial;
    mm += r.maint;
    pv += r.value;
    positions.push(r.row);
  }
  return {
    positions,
    margin: {
      total_account_value: usd(venue.equity(a)),
      total_initial_margin: usd(im),
      total_maintenance_margin: usd(mm),
      total_position_value: usd(pv),
    },
    withdrawable: usd(venue.available(a)),
    in_liquidation: false,
    timestamp: now,
  };
}
