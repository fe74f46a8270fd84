/**
 * Notifications from the background, against the in-process sandbox with `ws` as the
 * worker's WebSocket: a fill made at the sandbox (not through the extension) raises a browser
 * notification from the stream pushes, with the instrument's name and no secret; switched off with
 * `notifications.set`, the next fill raises none; the preferences are their own record. An order-book
 * order cancelled outside Countersign raises one; one Countersign cancelled raises none. A mark moved at
 * the venue (`/admin/mark`) toward a position's liquidation price raises one with no REST read (the
 * sandbox pushes the portfolio on a mark move); the venue's kill switch firing (the dead-man's cancel)
 * raises one, also without a read. A fill of the person's resting order-book order as the maker names the
 * person's side, size, price and token (the exchange's top-level trade fields are the taker's), in the
 * notification and the trades read the activity list shows; another client cancelling 20 orders at once
 * raises one notification naming 20.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { WebSocket as NodeWebSocket } from 'ws';
import { autoCancel, createOrders } from '../perps/commands';
import { clobL2Request, createOrDeriveApiKey } from '../clob/client';
import { toOrderAmounts } from '../clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../clob/order';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BURST_MS } from '../notifications/bursts';
import { shortToken } from '../validation/venue-text';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { DEFAULT_NOTIFICATION_PREFS } from '../notifications/prefs';
import { startBackground } from './index';
import { BOUNDS, browser as kitBrowser, KDF } from '../../test/kits/background';

const created: { id: string; title: string; message: string }[] = [];
const browser = {
  ...kitBrowser,
  runtime: { ...kitBrowser.runtime, id: fakeBrowser.runtime.id, sendMessage: async () => undefined },
  notifications: {
    create: async (id: string, o: { title: string; message: string }) => {
      created.push({ id, title: o.title, message: o.message });
      return id;
    },
  },
};
const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function until(cond: () => boolean | Promise<boolean>, ms = 4_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A background (`ws` as its WebSocket) with a vault holding the demo owner key, gateways at the sandbox; `call` a popup
 * procedure (throws on an error reply).
 */
async function demoBackground(dbName: string) {
  const bg = startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, WebSocket: NodeWebSocket });
  const call = async (type: string, payload: unknown = {}) => {
    const r = await bg.handle({ type, payload }, popup());
    if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r)}`);
    return r.result;
  };
  await call('vault.create', { password: 'a good password' });
  await call('settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await call('vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  return { bg, call };
}

describe('background notifications', () => {
  it('a fill at the venue raises a notification; switched off, the next raises none', async () => {
    const { bg, call } = await demoBackground('notify-0');
    await call('proxy.import', {
      account: h.demo.owner.address,
      privateKey: h.demo.proxy.privateKey,
      proxy: h.demo.proxy.address,
      secret: h.demo.proxy.secret,
      expiry: h.demo.proxy.expiry,
    });
    expect(await call('notifications.get')).toEqual(DEFAULT_NOTIFICATION_PREFS);
    await until(async () => JSON.stringify(await call('streams.status')).includes('"live"'));

    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
    await until(() => created.some((n) => n.title === 'Order filled'));
    const n = created.find((x) => x.title === 'Order filled');
    expect(n?.message).toMatch(/^Buy 0\.002 BTC[^ ]* \(#1\) at an average ≈?[\d,.]+ \(0\.002 of 0\.002 filled\)\.$/);
    const all = JSON.stringify(created);
    expect(all).not.toContain(h.demo.proxy.secret);
    expect(all.toLowerCase()).not.toContain(h.demo.proxy.privateKey.slice(2).toLowerCase());

    expect(await call('notifications.set', { fills: false })).toEqual({ ...DEFAULT_NOTIFICATION_PREFS, fills: false });
    expect((await bg.handle({ type: 'notifications.set', payload: { liquidationPct: 0 } }, popup())).ok).toBe(false);
    const before = created.length;
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
    await new Promise((r) => setTimeout(r, 500));
    expect(created.slice(before).filter((x) => x.title.startsWith('Order'))).toEqual([]);
    // Their own record: the settings are untouched.
    expect(await bg.db().get('settings', 'notifications')).toMatchObject({ version: 1, values: { fills: false } });
    await bg.lock();
  });

  it(
    'an order-book order cancelled outside Countersign raises ' +
      'a notification; one Countersign cancelled raises none',
    async () => {
      const { bg, call } = await demoBackground('notify-1');
      await call('clob.createOrDerive', { account: h.demo.owner.address });
      await until(
        async () =>
          JSON.stringify(await call('streams.status')).includes('"venue":"clob"') &&
          JSON.stringify(await call('streams.status')).includes('"live"'),
      );
      const m = h.ctx.clob.markets[0];
      if (!m) throw new Error('no market');
      const post = async () =>
        (
          (await call('clob.postOrders', {
            account: h.demo.owner.address,
            orders: [{ tokenId: m.tokenIds[0], side: 'BUY', price: '0.01', size: '10', orderType: 'GTC' }],
          })) as { orderID?: string }[]
        )[0]?.orderID ?? '';
      const [ours, theirs] = [await post(), await post()];
      const before = created.length;
      await call('clob.cancel', { account: h.demo.owner.address, orderIds: [ours] });
      // Another client with the same API key cancels the other (the venue's own cancels look the same on the channel).
      await clobL2Request(h.clobUrl, {
        address: h.demo.owner.address,
        credentials: h.demo.clob,
        method: 'DELETE',
        requestPath: '/order',
        body: { orderID: theirs },
        timestamp: Math.floor(h.clock.now / 1000),
      });
      await until(() =>
        created.slice(before).some((n) => n.title === 'Order-book order cancelled outside Countersign'),
      );
      await new Promise((r) => setTimeout(r, 300));
      const cancels = created.slice(before).filter((n) => n.title.includes('cancelled'));
      expect(cancels).toHaveLength(1);
      expect(cancels[0]?.message).toBe(
        `Buy 10 “Yes” shares (token ${shortToken(m.tokenIds[0])}) at 0.01: cancelled ` +
          `by the venue (a lapsed heartbeat, the market closing) or by another client.`,
      );
      expect(JSON.stringify(created)).not.toContain(h.demo.clob.secret);
      await bg.lock();
    },
  );

  /** A background of the demo account with its order-book API credentials, its user channel live. */
  async function liveClob(dbName: string) {
    const bg = await demoBackground(dbName);
    await bg.call('clob.createOrDerive', { account: h.demo.owner.address });
    await until(async () =>
      JSON.stringify(await bg.call('streams.status')).includes(
        `"venue":"clob","account":"${h.demo.owner.address}","state":"live"`,
      ),
    );
    const m = h.ctx.clob.markets[0];
    if (!m) throw new Error('no market');
    return { ...bg, m, token: m.tokenIds[0] };
  }

  /**
   * Another trader (its own key and API credentials) takes `size` of `tokenId` at `price` with a fill-and-kill order.
   */
  async function counterpartyTakes(tokenId: string, side: 'BUY' | 'SELL', price: string, size: string): Promise<void> {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const nowS = Math.floor(h.clock.now / 1000);
    const creds = (
      await createOrDeriveApiKey(h.clobUrl, wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS, nonce: 0 })
    ).credentials;
    const m = h.ctx.clob.markets[0];
    if (!m) throw new Error('no market');
    h.ctx.clob.credit(wallet.address, 1_000_000_000n);
    h.ctx.clob.creditToken(wallet.address, tokenId, 1_000_000_000n);
    const amounts = toOrderAmounts({ side, price, size, tickSize: m.tickSize });
    const order = buildClobOrder({
      signer: wallet.address,
      signatureType: 0,
      tokenId,
      side,
      ...amounts,
      timestampMs: h.clock.now,
    });
    const signature = await signClobOrder(wallet, {
      chainId: h.ctx.config.clobChainId,
      verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
      order,
    });
    const body = toPostOrderBody({ order, signature, owner: creds.apiKey, orderType: 'FAK', postOnly: false });
    await clobL2Request(h.clobUrl, {
      address: wallet.address,
      credentials: creds,
      method: 'POST',
      requestPath: '/order',
      body,
      timestamp: nowS,
    });
  }

  it(
    'a fill of the person’s resting order as the maker names the person’s ' +
      'side, size, price and token, not the taker’s; so does the trades read',
    async () => {
      const { bg, call, token } = await liveClob('notify-maker');
      // The person sells 10 "Yes" one tick under the best ask: their order rests as the best ask.
      const book = h.ctx.clob.book(token);
      const bestAsk = Math.min(...book.asks.map((o) => Number(o.price)));
      expect(bestAsk - 10_000).toBeGreaterThan(Math.max(...book.bids.map((o) => Number(o.price))));
      const price = ((bestAsk - 10_000) / 1e6).toFixed(2);
      const [posted] = (await call('clob.postOrders', {
        account: h.demo.owner.address,
        orders: [{ tokenId: token, side: 'SELL', price, size: '10', orderType: 'GTC' }],
      })) as { orderID?: string }[];
      expect(h.ctx.clob.orders.get(posted?.orderID as `0x${string}`)?.status).toBe('live');
      const before = created.length;
      // The taker buys: the exchange's trade says BUY at its top level (the taker's order).
      await counterpartyTakes(token, 'BUY', price, '10');
      await until(() => created.slice(before).some((n) => n.title === 'Order-book order filled'));
      const fills = created.slice(before).filter((n) => n.title === 'Order-book order filled');
      expect(fills.map((n) => n.message)).toEqual([
        `Sold 10 “Yes” shares (token ${shortToken(token)}) at ${price} (maker).`,
      ]);
      // The activity list's read: the person's own order in the trade.
      const [trade] = (await call('clob.trades', { account: h.demo.owner.address })) as unknown[];
      expect(trade).toMatchObject({
        trader_side: 'MAKER',
        own: [{ order_id: posted?.orderID, side: 'SELL', size: '10', price, asset_id: token, outcome: 'Yes' }],
      });
      expect(JSON.stringify(trade)).not.toContain(h.demo.clob.apiKey);
      await bg.lock();
    },
  );

  it('another client cancelling 20 order-book orders at once raises one notification naming 20', async () => {
    const { bg, call, token } = await liveClob('notify-burst');
    const post = async (n: number) =>
      (
        (await call('clob.postOrders', {
          account: h.demo.owner.address,
          orders: Array.from({ length: n }, () => ({
            tokenId: token,
            side: 'BUY',
            price: '0.01',
            size: '10',
            orderType: 'GTC',
          })),
        })) as { orderID?: string }[]
      ).map((r) => r.orderID ?? '');
    const ids = [...(await post(15)), ...(await post(5))];
    expect(new Set(ids.filter(Boolean)).size).toBe(20);
    const before = created.length;
    await clobL2Request(h.clobUrl, {
      address: h.demo.owner.address,
      credentials: h.demo.clob,
      method: 'DELETE',
      requestPath: '/orders',
      body: ids,
      timestamp: Math.floor(h.clock.now / 1000),
    });
    await until(() => created.slice(before).some((n) => n.title.includes('cancelled outside Countersign')));
    await new Promise((r) => setTimeout(r, BURST_MS + 300));
    const cancels = created.slice(before).filter((n) => n.title.includes('cancelled'));
    expect(cancels.map((n) => n.title)).toEqual(['20 order-book orders cancelled outside Countersign']);
    expect(cancels[0]?.message).toMatch(
      new RegExp(
        String.raw`^(Buy 10 “Yes” shares \(token \d{6}…\d{4}\) at 0\.01; ){3}and 17 more: ` +
          String.raw`cancelled by the venue \(a lapsed heartbeat, the market closing\) or by another client\.$`,
      ),
    );
    await bg.lock();
  });

  /** A background unlocked with the demo account and its proxy, its perps stream live. */
  async function livePerps(dbName: string) {
    const { bg, call } = await demoBackground(dbName);
    await call('proxy.import', {
      account: h.demo.owner.address,
      privateKey: h.demo.proxy.privateKey,
      proxy: h.demo.proxy.address,
      secret: h.demo.proxy.secret,
      expiry: h.demo.proxy.expiry,
    });
    await until(async () => JSON.stringify(await call('streams.status')).includes('"live"'));
    return bg;
  }
  const accountReads = () =>
    h.ctx.requestLog.filter(
      (r) => r.path.startsWith('/perps/v1/account') || r.path.startsWith('/perps/v1/trade/orders'),
    );

  it(
    'a mark moved toward the liquidation price raises a ' + 'notification from the pushed portfolio, with no REST read',
    async () => {
      const bg = await livePerps('notify-2');
      const account = h.ctx.venue.findAccount(h.demo.owner.address);
      if (!account) throw new Error('no demo account');
      // A thin account: 2 000 USDC behind a 0.1 BTC long (liquidation well above zero).
      account.balance = 2_000_000_000n;
      const filled = created.length;
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.1', tif: 'ioc' }] }));
      const liq = h.ctx.venue.liquidationPrice(account, 1);
      expect(liq).toBeGreaterThan(0n);
      // 5 % above the liquidation price (inside the default 10 %), on the 0.5 tick; the account stays solvent.
      const mark = ((liq * 105n) / 100n / 50_000_000n) * 50_000_000n;
      await until(() => created.slice(filled).some((n) => n.title === 'Order filled'), 10_000);
      const before = created.length;
      h.ctx.requestLog.length = 0;
      const res = await fetch(`${h.url}/admin/mark`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ instrument_id: 1, price: (Number(mark) / 1e8).toString() }),
      });
      expect(res.status).toBe(200);
      await until(() => created.slice(before).some((n) => n.title === 'Position near liquidation'), 10_000);
      expect(h.ctx.venue.findAccount(h.demo.owner.address)?.positions.has(1)).toBe(true);
      const n = created.slice(before).find((x) => x.title === 'Position near liquidation');
      expect(n?.message).toMatch(
        /^Long 0\.1\d* BTC[^ ]* \(#1\): mark [\d,.]+ is [\d.]+ % from the liquidation price [\d,.]+\.$/,
      );
      expect(accountReads()).toEqual([]);
      await bg.lock();
    },
  );

  it('the venue’s kill switch firing (the dead-man’s cancel) raises a notification, with no REST read', async () => {
    const bg = await livePerps('notify-3');
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '50000', qty: '0.001', tif: 'gtc' }] }));
    expect(await h.send(h.proxy, autoCancel({ time: h.clock.now + 10_000 }))).toMatchObject({ status: 'ok' });
    const before = created.length;
    h.ctx.requestLog.length = 0;
    h.clock.advance(11_000);
    await until(() => created.slice(before).some((n) => n.title === 'Order cancelled by the dead-man switch'), 10_000);
    const n = created.slice(before).find((x) => x.title === 'Order cancelled by the dead-man switch');
    expect(n?.message).toMatch(
      new RegExp(
        String.raw`^Buy 0\.001 BTC[^ ]* \(#1\) at 50,?000(\.0)?: ` +
          String.raw`the venue's auto-cancel fired because the kill switch was not renewed\.$`,
      ),
    );
    expect(accountReads()).toEqual([]);
    await bg.lock();
  });
});
