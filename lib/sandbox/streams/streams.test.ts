/**
 * The sandbox streams (PROTOCOL.md §5): the perps session (auth, sub, commands through the
 * REST code path, acknowledgement before the order event, per-channel `sq`, ping, public channels) and
 * the order-book market and user channels. Every event frame must validate under
 * `@polymarket/bindings/subscriptions`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  MarketEventSchema,
  PerpsMarketDataEventSchema,
  PerpsSessionUpdateEventSchema,
  UserEventSchema,
} from '@polymarket/bindings/subscriptions';
import {
  autoCancel,
  cancelOrders,
  cancelOrdersCOID,
  createOrders,
  updateLeverage,
  type PerpsCommand,
} from '../../perps/commands';
import { signPerpsCommand } from '../../perps/envelope';
import { createOrDeriveApiKey, clobL2Request } from '../../clob/client';
import { toOrderAmounts } from '../../clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../../clob/order';
import { startHarness, type Harness } from '../../../test/kits/sandbox';
import { openTestSocket, type TestSocket } from '../../../test/kits/sandbox-streams';

let h: Harness;
const sockets: TestSocket[] = [];
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  await h.close();
});

const open = async (path: string) => {
  const s = await openTestSocket(`${h.url.replace('http', 'ws')}${path}`);
  sockets.push(s);
  return s;
};
const isObj = (f: unknown): f is Record<string, unknown> => f !== null && typeof f === 'object' && !Array.isArray(f);
const reply = (id: number) => (f: unknown) => isObj(f) && f.id === id;
const onChannel = (ch: string) => (f: unknown) => isObj(f) && f.ch === ch;
const COID = 'c0ffee00c0ffee00c0ffee00c0ffee01';

/** Opens a perps session authenticated with the demo proxy and subscribed to the client's channel list. */
async function session(): Promise<TestSocket> {
  const s = await open('/perps/v1/ws');
  s.send({ id: 1, op: { args: { proxy: h.proxyAuth.proxy, secret: h.proxyAuth.secret }, type: 'auth' }, req: 'post' });
  expect(await s.next(reply(1))).toEqual({ id: 1, data: { status: 'ok' } });
  s.send({
    id: 2,
    req: 'sub',
    chs: ['balances', 'portfolio', 'orders', 'fills', 'funding', 'deposits', 'withdrawals', 'tpsl'],
  });
  expect(await s.next(reply(2))).toEqual({ id: 2, data: { status: 'ok' } });
  return s;
}

async function command(s: TestSocket, id: number, cmd: PerpsCommand, signer: LocalAccount = h.proxy) {
  const env = await signPerpsCommand(signer, { command: cmd, domain: h.ctx.config.perpsDomain, nowMs: h.clock.now });
  s.send({ ...env, id, req: 'post' });
}

describe('perps session', () => {
  it(
    'acknowledges a resting order, then sends its orders event; ' +
      'cancels by id and by client id; sq counts per channel',
    async () => {
      const s = await session();
      await command(
        s,
        3,
        createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc', c: COID }] }),
      );
      const ack = await s.next(reply(3));
      expect(ack).toMatchObject({ id: 3, data: [{ status: 'ok', coid: COID }] });
      const ackAt = s.frames.indexOf(ack);
      const ev = await s.next((f) => onChannel('orders')(f) && isObj(f) && isObj(f.data) && f.data.status === 'open');
      // The official client waits for the order event only after the acknowledgement (PROTOCOL.md §5.1).
      expect(s.frames.indexOf(ev)).toBeGreaterThan(ackAt);
      const oid = isObj(ev) && isObj(ev.data) ? ev.data.oid : undefined;
      expect(ev).toMatchObject({
        data: { iid: 1, buy: true, p: '60000', qty: '0.001', rest: '0.001', fill: '0', coid: COID },
      });

      await command(s, 4, cancelOrders({ oids: [Number(oid)] }));
      expect(await s.next(reply(4))).toEqual({ id: 4, data: [{ status: 'ok', oid }] });
      const cancelled = await s.next(
        (f) => onChannel('orders')(f) && isObj(f) && isObj(f.data) && f.data.status === 'cancelled',
      );
      expect(isObj(cancelled) && cancelled.sq).toBe(2);

      await command(
        s,
        5,
        createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc', c: COID }] }),
      );
      await s.next(reply(5));
      await command(s, 6, cancelOrdersCOID({ coids: [COID] }));
      expect(await s.next(reply(6))).toMatchObject({ id: 6, data: [{ status: 'ok', coid: COID }] });
      await s.next(
        (f) =>
          onChannel('orders')(f) && isObj(f) && isObj(f.data) && f.data.status === 'cancelled' && f.data.coid === COID,
      );
      const orderEvents = s.frames.filter(onChannel('orders'));
      expect(orderEvents.map((f) => isObj(f) && f.sq)).toEqual([1, 2, 3, 4]);
      for (const f of s.frames.filter((x) => isObj(x) && 'ch' in x))
        expect(PerpsSessionUpdateEventSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
    },
  );

  it('fills a crossing order: orders, then fills, portfolio and balances, all valid under the bindings', async () => {
    const s = await session();
    await command(s, 3, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
    const ackAt = s.frames.indexOf(await s.next(reply(3)));
    // The subscription's snapshots (portfolio, balances) came before the command; take what follows its
    // acknowledgement.
    const after = (ch: string) => (f: unknown) => onChannel(ch)(f) && s.frames.indexOf(f) > ackAt;
    const order = await s.next(after('orders'));
    const fills = await s.next(after('fills'));
    const portfolio = await s.next(after('portfolio'));
    const balances = await s.next(after('balances'));
    expect(order).toMatchObject({ data: { status: 'filled', fill: '0.002' } });
    expect(fills).toMatchObject({ data: [{ side: 'long', taker: true, fea: 'USDC' }] });
    expect(portfolio).toMatchObject({ data: { positions: [{ instrument_id: 1, size: '0.002' }] } });
    expect(isObj(balances) && isObj(balances.data) && balances.data.asset).toBe('USDC');
    const at = (f: unknown) => s.frames.indexOf(f);
    expect([at(order), at(fills), at(portfolio), at(balances)]).toEqual(
      [...[at(order), at(fills), at(portfolio), at(balances)]].sort((a, b) => a - b),
    );
    for (const f of [order, fills, portfolio, balances])
      expect(PerpsSessionUpdateEventSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
  });

  it('keeps the acknowledgement before the order event with latency added to every answer and frame', async () => {
    const s = await session();
    h.ctx.delayMs.set('perps', 30);
    await command(s, 3, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
    const ack = await s.next(reply(3));
    const ev = await s.next(onChannel('orders'));
    expect(s.frames.indexOf(ev)).toBeGreaterThan(s.frames.indexOf(ack));
    // The delay is the venue's latency once: the command's own run through REST is not delayed again.
    h.ctx.delayMs.set('perps', 300);
    const t0 = performance.now();
    await command(s, 4, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
    await s.next(reply(4));
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(580);
  });

  it('updates leverage as REST does, and refuses what REST refuses with the same error', async () => {
    const s = await session();
    await command(s, 3, updateLeverage({ iid: 2, lev: 5, cross: false }));
    expect(await s.next(reply(3))).toEqual({
      id: 3,
      data: { status: 'ok', instrument_id: 2, leverage: 5, cross: false },
    });
    await command(s, 4, updateLeverage({ iid: 2, lev: 500, cross: false }));
    expect(await s.next(reply(4))).toEqual({ id: 4, data: { status: 'err', error: 'invalid_leverage' } });
    // The same signed frame twice: the REST replay check refuses the second.
    const env = await signPerpsCommand(h.proxy, {
      command: updateLeverage({ iid: 2, lev: 6, cross: false }),
      domain: h.ctx.config.perpsDomain,
      nowMs: h.clock.now,
    });
    s.send({ ...env, id: 5, req: 'post' });
    s.send({ ...env, id: 6, req: 'post' });
    expect(await s.next(reply(5))).toMatchObject({ data: { status: 'ok' } });
    expect(await s.next(reply(6))).toEqual({ id: 6, data: { status: 'err', error: 'replayed' } });
  });

  it(
    'refuses commands before auth, a wrong secret, account ' +
      'channels without auth, and a command signed by another key',
    async () => {
      const s = await open('/perps/v1/ws');
      await command(s, 1, createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc' }] }));
      expect(await s.next(reply(1))).toEqual({ id: 1, data: { status: 'err', error: 'unauthenticated' } });
      s.send({ id: 2, req: 'sub', chs: ['orders'] });
      expect(await s.next(reply(2))).toEqual({ id: 2, data: { status: 'err', error: 'unauthenticated' } });
      s.send({ id: 3, op: { args: { proxy: h.proxyAuth.proxy, secret: 'nope' }, type: 'auth' }, req: 'post' });
      expect(await s.next(reply(3))).toEqual({ id: 3, data: { status: 'err', error: 'unauthorized' } });

      const authed = await session();
      // Another account's proxy cannot take the session over.
      const other = h.ctx.openAccount(privateKeyToAccount(generatePrivateKey()).address);
      const otherAddress = privateKeyToAccount(generatePrivateKey()).address;
      const otherProxy = otherAddress.toLowerCase();
      other.proxies.set(otherProxy, {
        proxy: otherAddress,
        secret: 'other-secret',
        expiry: h.clock.now + 60_000,
        label: 'other',
      });
      h.ctx.proxyIndex.set(otherProxy, other.owner.toLowerCase());
      authed.send({ id: 8, op: { args: { proxy: otherProxy, secret: 'other-secret' }, type: 'auth' }, req: 'post' });
      expect(await authed.next(reply(8))).toEqual({ id: 8, data: { status: 'err', error: 'already_authenticated' } });
      const stranger = privateKeyToAccount(generatePrivateKey());
      await command(
        authed,
        9,
        createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc' }] }),
        stranger,
      );
      expect(await authed.next(reply(9))).toEqual({ id: 9, data: { status: 'err', error: 'session_signer_mismatch' } });
      expect([...h.ctx.venue.orders.values()].filter((o) => o.owner === h.owner.address.toLowerCase())).toEqual([]);
    },
  );

  it(
    'reports a trigger order on tpsl::<iid> (subscribed ' + 'as the client does, with "tpsl") and its cancellation',
    async () => {
      const s = await session();
      await command(
        s,
        3,
        createOrders({ orders: [{ iid: 1, buy: false, p: '60000', qty: '0.001', tr: { tpsl: 'sl', trp: '61000' } }] }),
      );
      const ack = await s.next(reply(3));
      expect(ack).toMatchObject({ data: [{ status: 'ok' }] });
      const armed = await s.next(onChannel('tpsl::1'));
      expect(armed).toMatchObject({ sq: 1, data: { st: 'untriggered' } });
      const oid = isObj(armed) && isObj(armed.data) ? Number(armed.data.oid) : 0;
      await command(s, 4, cancelOrders({ oids: [oid] }));
      expect(await s.next(onChannel('tpsl::1'))).toMatchObject({ sq: 2, data: { oid, st: 'cancelled' } });
      for (const f of s.frames.filter(onChannel('tpsl::1')))
        expect(PerpsSessionUpdateEventSchema.safeParse(f).success).toBe(true);
    },
  );

  it(
    'reports a trigger order’s lifecycle: untriggered, armed once a position exists, ' +
      'then its fire on orders (triggered) and fills; tpsl frames valid under the bindings',
    async () => {
      const s = await session();
      // A stop-loss that sells 0.001 when the mark falls to 64 000, placed before any position.
      await command(
        s,
        3,
        createOrders({
          orders: [{ iid: 1, buy: false, qty: '0.001', tr: { tpsl: 'sl', trp: '64000', market: true } }],
        }),
      );
      await s.next(reply(3));
      const placed = await s.next(onChannel('tpsl::1'));
      expect(placed).toMatchObject({ data: { st: 'untriggered' } });
      const oid = isObj(placed) && isObj(placed.data) ? Number(placed.data.oid) : 0;
      const mine = (st: string) => (f: unknown) =>
        isObj(f) && isObj(f.data) && f.data.oid === oid && f.data[f.ch === 'orders' ? 'status' : 'st'] === st;
      // A long makes it armed (orders: `armed` with `armed_qty`).
      await command(s, 4, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
      await s.next(reply(4));
      await s.next((f) => onChannel('tpsl::1')(f) && mine('armed')(f));
      expect(await s.next((f) => onChannel('orders')(f) && mine('armed')(f))).toMatchObject({
        data: { tpsl: { kind: 'sl', armed_qty: '0.001' } },
      });
      // The mark falls through the trigger: it fires as a reduce-only market sell.
      h.ctx.venue.setMark(1, 63_900n * 10n ** 8n);
      expect(await s.next((f) => onChannel('orders')(f) && mine('triggered')(f))).toMatchObject({
        data: { fill: '0.001', ro: true },
      });
      expect(
        await s.next(
          (f) =>
            onChannel('fills')(f) && isObj(f) && Array.isArray(f.data) && f.data.some((x) => isObj(x) && x.oid === oid),
        ),
      ).toMatchObject({ data: [{ side: 'short', qty: '0.001' }] });
      const tpsl = s.frames.filter(onChannel('tpsl::1'));
      expect(tpsl.map((f) => isObj(f) && isObj(f.data) && f.data.st)).toEqual(['untriggered', 'armed']);
      for (const f of s.frames.filter((x) => isObj(x) && 'ch' in x))
        expect(PerpsSessionUpdateEventSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
    },
  );

  it(
    'pushes the portfolio of an account holding a position when the mark ' +
      'moves without its own trade, at most once a second, and the ticker',
    async () => {
      const s = await session();
      const pub = await open('/perps/v1/ws');
      pub.send({ id: 1, req: 'sub', chs: ['tickers::1'] });
      await pub.next(reply(1));
      await command(s, 3, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
      await s.next(reply(3));
      await s.next((f) => onChannel('portfolio')(f) && JSON.stringify(f).includes('"size":"0.002"'));
      const before = s.frames.filter(onChannel('portfolio')).length;
      const markOf = (f: unknown) =>
        isObj(f) && isObj(f.data) && Array.isArray(f.data.positions) && isObj(f.data.positions[0])
          ? Math.round(Number(f.data.positions[0].position_value) / 0.002)
          : NaN;
      // Three moves in a row (the admin route's setMark): the last one arrives; the window sends at most two.
      for (const m of [60_000n, 59_000n, 58_000n]) h.ctx.venue.setMark(1, m * 10n ** 8n);
      const last = await s.next((f) => onChannel('portfolio')(f) && markOf(f) === 58_000);
      expect(s.frames.filter(onChannel('portfolio')).length - before).toBeLessThanOrEqual(2);
      expect(PerpsSessionUpdateEventSchema.safeParse(last).success, JSON.stringify(last)).toBe(true);
      const ticker = await pub.next(
        (f) => onChannel('tickers::1')(f) && isObj(f) && isObj(f.data) && f.data.mark === '58000',
      );
      expect(PerpsMarketDataEventSchema.safeParse(ticker).success, JSON.stringify(ticker)).toBe(true);
      // Another account's trade at another price moves the mark too.
      const mm = h.ctx.venue.findAccount(h.demo.counterparty.address);
      if (!mm) throw new Error('no counterparty');
      h.ctx.venue.placeOrders(mm, [{ iid: 1, buy: true, p: '65010', qty: '0.001', tif: 'ioc' }]);
      const traded = Number(h.ctx.venue.instruments.get(1)?.mark) / 1e8;
      expect(traded).toBeGreaterThan(65_000);
      await s.next((f) => onChannel('portfolio')(f) && markOf(f) === traded, 4_000);
    },
  );

  it(
    'fires a due auto-cancel (the kill switch) without ' + 'a request and reports it on orders as auto_cancelled',
    async () => {
      const s = await session();
      await command(s, 3, createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc' }] }));
      await s.next(reply(3));
      await command(s, 4, autoCancel({ time: h.clock.now + 10_000 }));
      expect(await s.next(reply(4))).toMatchObject({ data: { status: 'ok' } });
      h.clock.advance(11_000);
      const ev = await s.next(
        (f) => onChannel('orders')(f) && isObj(f) && isObj(f.data) && f.data.status === 'auto_cancelled',
      );
      expect(PerpsSessionUpdateEventSchema.safeParse(ev).success, JSON.stringify(ev)).toBe(true);
    },
  );

  it('ignores frames that are not JSON objects and refuses unknown or oversized channel lists', async () => {
    const s = await open('/perps/v1/ws');
    s.send('not json');
    s.send([1, 2]);
    s.send({ id: 1, req: 'sub', chs: ['orders::1'] });
    expect(await s.next(reply(1))).toEqual({ id: 1, data: { status: 'err', error: 'unknown_channel: orders::1' } });
    s.send({ id: 2, req: 'sub', chs: Array.from({ length: 101 }, (_, i) => `book::${i}`) });
    expect(await s.next(reply(2))).toEqual({ id: 2, data: { status: 'err', error: 'invalid_channels' } });
    expect(s.frames).toHaveLength(2);
  });

  it('answers ping with id 0', async () => {
    const s = await open('/perps/v1/ws');
    s.send({ id: 0, req: 'post', op: { type: 'ping' } });
    expect(await s.next(reply(0))).toEqual({ id: 0, data: { status: 'ok' } });
  });

  it(
    'serves public channels without auth: book and bbo snapshots, ' +
      'then trades, book, bbo, tickers, statistics and klines on a trade',
    async () => {
      const pub = await open('/perps/v1/ws');
      const chs = ['trades::1', 'bbo::1', 'book::1', 'tickers::all', 'statistics::1', 'klines::1::1m'];
      pub.send({ id: 1, req: 'sub', chs });
      await pub.next(reply(1));
      await pub.next(onChannel('book::1'));
      await pub.next(onChannel('bbo::1'));
      const s = await session();
      await command(s, 3, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
      for (const ch of ['trades::1', 'book::1', 'bbo::1', 'statistics::1', 'klines::1::1m'])
        await pub.next(onChannel(ch));
      await pub.next((f) => onChannel('tickers::all')(f) && isObj(f) && isObj(f.data) && f.data.iid === 1);
      const events = pub.frames.filter((f) => isObj(f) && 'ch' in f);
      expect(new Set(events.map((f) => isObj(f) && f.ch))).toEqual(new Set([...chs]));
      for (const f of events) expect(PerpsMarketDataEventSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
    },
  );

  it('refuses an upgrade on any other path', async () => {
    await expect(openTestSocket(`${h.url.replace('http', 'ws')}/perps/v1/other`)).rejects.toThrow(/404/);
  });
});

describe('order-book channels', () => {
  let wallet: LocalAccount;
  let creds: { apiKey: string; secret: string; passphrase: string };
  const market = () => h.ctx.clob.markets[0]!;
  const nowS = () => Math.floor(h.clock.now / 1000);
  beforeEach(async () => {
    wallet = privateKeyToAccount(generatePrivateKey());
    creds = (
      await createOrDeriveApiKey(h.clobUrl, wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS(), nonce: 0 })
    ).credentials;
    h.ctx.clob.credit(wallet.address, 1_000_000_000n);
  });
  const post = async (price: string, size: string, orderType: 'GTC' | 'FAK' = 'GTC') => {
    const m = market();
    const amounts = toOrderAmounts({ side: 'BUY', price, size, tickSize: m.tickSize });
    const order = buildClobOrder({
      signer: wallet.address,
      signatureType: 0,
      tokenId: m.tokenIds[0],
      side: 'BUY',
      ...amounts,
      timestampMs: h.clock.now,
    });
    const signature = await signClobOrder(wallet, {
      chainId: h.ctx.config.clobChainId,
      verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
      order,
    });
    const body = toPostOrderBody({ order, signature, owner: creds.apiKey, orderType, postOnly: false });
    return clobL2Request(h.clobUrl, {
      address: wallet.address,
      credentials: creds,
      method: 'POST',
      requestPath: '/order',
      body,
      timestamp: nowS(),
    });
  };
  const events = (s: TestSocket) => s.frames.flatMap((f) => (Array.isArray(f) ? f : [])).filter(isObj);

  it(
    'dumps the book of every subscribed id, then sends price_change ' +
      'and last_trade_price; unsubscribed ids get nothing',
    async () => {
      const [yes, no] = market().tokenIds;
      const s = await open('/clob/ws/market');
      s.send({ assets_ids: [yes], custom_feature_enabled: false, type: 'market' });
      await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'book' && e.asset_id === yes));
      s.send({ assets_ids: [no], custom_feature_enabled: false, operation: 'subscribe' });
      await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'book' && e.asset_id === no));
      s.send({ assets_ids: [no], operation: 'unsubscribe' });
      s.send('PING');
      expect(await s.next((f) => f === 'PONG')).toBe('PONG');
      await post('0.2', '10');
      await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'price_change'));
      await post('0.99', '5', 'FAK');
      await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'last_trade_price'));
      const all = events(s);
      const change = all.find((e) => e.event_type === 'price_change');
      expect(change).toMatchObject({ price_changes: [{ asset_id: yes, price: '0.2', size: '10', side: 'BUY' }] });
      for (const e of all) expect(MarketEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
      expect(
        all.filter((e) => e.event_type !== 'book').every((e) => e.asset_id === yes || JSON.stringify(e).includes(yes)),
      ).toBe(true);
    },
  );

  it(
    'takes a subscribe naming 5 000 token ids (no cap): ' + 'the known ones get their book and their price changes',
    async () => {
      const [yes] = market().tokenIds;
      const others = Array.from({ length: 4_999 }, (_, i) => (10n ** 76n + BigInt(i)).toString());
      const frame = JSON.stringify({ assets_ids: [...others, yes], type: 'market' });
      expect(frame.length).toBeGreaterThan(5_000 * 78);
      const s = await open('/clob/ws/market');
      s.send(frame);
      const dump = await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'book'), 10_000);
      expect(Array.isArray(dump) && dump.map((e) => isObj(e) && e.asset_id)).toEqual([yes]);
      await post('0.2', '10');
      await s.next(
        (f) =>
          Array.isArray(f) &&
          f.some((e) => isObj(e) && e.event_type === 'price_change' && JSON.stringify(e).includes(yes)),
      );
    },
  );

  it('sends tick_size_change when a market’s tick changes (admin route), and orders follow the new tick', async () => {
    const [yes] = market().tokenIds;
    const s = await open('/clob/ws/market');
    s.send({ assets_ids: [yes], type: 'market' });
    await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'book'));
    const res = await fetch(`${h.url}/admin/tick`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ condition_id: market().conditionId, tick_size: '0.001' }),
    });
    expect(await res.json()).toMatchObject({ old_tick_size: '0.01', tick_size: '0.001' });
    const f = await s.next((x) => Array.isArray(x) && x.some((e) => isObj(e) && e.event_type === 'tick_size_change'));
    const change = Array.isArray(f) ? f.find((e) => isObj(e) && e.event_type === 'tick_size_change') : undefined;
    expect(change).toMatchObject({
      asset_id: yes,
      market: market().conditionId,
      old_tick_size: '0.01',
      new_tick_size: '0.001',
    });
    expect(MarketEventSchema.safeParse(change).success, JSON.stringify(change)).toBe(true);
    expect(await (await fetch(`${h.clobUrl}/tick-size?token_id=${yes}`)).json()).toEqual({ minimum_tick_size: 0.001 });
    const bad = await fetch(`${h.url}/admin/tick`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ condition_id: market().conditionId, tick_size: '2' }),
    });
    expect(bad.status).toBe(400);
  });

  it('sends no book dump with initial_dump: false, and still the price changes', async () => {
    const [yes] = market().tokenIds;
    const s = await open('/clob/ws/market');
    s.send({ assets_ids: [yes], type: 'market', initial_dump: false });
    s.send('PING');
    await s.next((f) => f === 'PONG');
    await post('0.2', '10');
    await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'price_change'));
    expect(events(s).filter((e) => e.event_type === 'book')).toEqual([]);
    // A later subscribe of another id without the flag dumps that one.
    const [, no] = market().tokenIds;
    s.send({ assets_ids: [no], operation: 'subscribe' });
    await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'book' && e.asset_id === no));
  });

  it(
    'authenticates the user channel with the API credentials ' + 'and sends the account’s order and trade events only',
    async () => {
      const s = await open('/clob/ws/user');
      s.send({
        auth: { apiKey: creds.apiKey, passphrase: creds.passphrase, secret: creds.secret },
        type: 'user',
        markets: [market().conditionId],
      });
      const stranger = await open('/clob/ws/user');
      stranger.send({
        auth: { apiKey: h.demo.clob.apiKey, passphrase: h.demo.clob.passphrase, secret: h.demo.clob.secret },
        type: 'user',
      });
      await new Promise((r) => setTimeout(r, 50));
      await post('0.99', '5', 'FAK');
      await s.next((f) => Array.isArray(f) && f.some((e) => isObj(e) && e.event_type === 'trade'));
      const all = events(s);
      expect(all.find((e) => e.event_type === 'order')).toMatchObject({
        type: 'PLACEMENT',
        status: 'MATCHED',
        owner: creds.apiKey,
      });
      for (const e of all) expect(UserEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
      expect(events(stranger).filter((e) => e.owner === creds.apiKey)).toEqual([]);
    },
  );

  it('closes the user channel on wrong credentials', async () => {
    const s = await open('/clob/ws/user');
    s.send({ auth: { apiKey: creds.apiKey, passphrase: creds.passphrase, secret: 'AAAA' }, type: 'user' });
    expect(await s.closed).toBe(4001);
  });
});
