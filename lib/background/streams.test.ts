/**
 * The background's live streams against the in-process sandbox, `ws` as the worker's
 * WebSocket: the open popup brings the active account's perps stream up, events reach extension pages
 * as derived pushes (never the proxy secret or key), and lock or an account switch closes the socket.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey } from 'viem/accounts';
import { WebSocket as NodeWebSocket } from 'ws';
import * as v from 'valibot';
import { privateKeyToAccount } from 'viem/accounts';
import { createOrders } from '../perps/commands';
import { createOrDeriveApiKey, clobL2Request } from '../clob/client';
import { toOrderAmounts } from '../clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../clob/order';
import { marketPushSchema, type MarketPush } from '../messaging/streams';
import { SESSION_PROCEDURES } from './procedures';
import { streamPushSchema, type StreamPush } from '../messaging/streams';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { startBackground, type BackgroundBrowser } from './index';
import { BOUNDS, browser as kitBrowser, KDF } from '../../test/kits/background';

const made: NodeWebSocket[] = [];
/** When set, a received text frame it accepts is lost on the way (a sequence gap the venue never shows on demand). */
let lose: ((text: string) => boolean) | undefined;
/** The sockets that sent an `auth` frame (the account's session; the others are public market data). */
const authed = new WeakSet<NodeWebSocket>();
class TrackedWebSocket extends NodeWebSocket {
  constructor(url: string) {
    super(url);
    made.push(this);
  }
  override send(data: string): void {
    if (data.includes('"type":"auth"')) authed.add(this);
    super.send(data);
  }
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && lose?.(String(args[0]))) {
      lose = undefined;
      return true;
    }
    return super.emit(event, ...args);
  }
}

let pushes: unknown[] = [];
const browser: BackgroundBrowser = {
  ...kitBrowser,
  runtime: {
    ...kitBrowser.runtime,
    id: fakeBrowser.runtime.id,
    sendMessage: async (m) => {
      pushes.push(m);
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
beforeEach(() => {
  fakeBrowser.reset();
  pushes = [];
  made.length = 0;
  lose = undefined;
});

let n = 0;
/** A clock at a tenth of real time (a read ahead's 1 s window lasts 10 s: no test races it on a busy machine). */
function slowClock(): () => number {
  const start = Date.now();
  return () => start + Math.floor((Date.now() - start) / 10);
}

async function ready(o: { now?: () => number } = {}) {
  const bg = startBackground({
    browser,
    dbName: `streams-${n++}`,
    kdf: KDF,
    bounds: BOUNDS,
    WebSocket: TrackedWebSocket,
    ...o,
  });
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
  await call('proxy.import', {
    account: h.demo.owner.address,
    privateKey: h.demo.proxy.privateKey,
    proxy: h.demo.proxy.address,
    secret: h.demo.proxy.secret,
    expiry: h.demo.proxy.expiry,
  });
  return { bg, call };
}

async function until(cond: () => boolean | Promise<boolean>, ms = 4_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const typed = (): StreamPush[] =>
  pushes.flatMap((p) => {
    const r = v.safeParse(streamPushSchema, p);
    return r.success ? [r.output] : [];
  });
const market = (): MarketPush['push'][] =>
  pushes.flatMap((p) => {
    const r = v.safeParse(marketPushSchema, p);
    return r.success ? [r.output.push] : [];
  });
const bookReads = () => h.ctx.requestLog.filter((r) => r.method === 'GET' && r.path.includes('/v1/info/book')).length;

/** A counterparty at the sandbox (not the extension) sells `size` of the first market's first token at `price`. */
async function counterpartySells(price: string, size: string): Promise<void> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const nowS = Math.floor(h.clock.now / 1000);
  const creds = (
    await createOrDeriveApiKey(h.clobUrl, wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS, nonce: 0 })
  ).credentials;
  const m = h.ctx.clob.markets[0];
  if (!m) throw new Error('no market');
  h.ctx.clob.creditToken(wallet.address, m.tokenIds[0], 1_000_000_000n);
  const amounts = toOrderAmounts({ side: 'SELL', price, size, tickSize: m.tickSize });
  const order = buildClobOrder({
    signer: wallet.address,
    signatureType: 0,
    tokenId: m.tokenIds[0],
    side: 'SELL',
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

const stateOf = async (call: (t: string) => Promise<unknown>) => JSON.stringify(await call('streams.status'));

describe('background streams', () => {
  it(
    'opens the active account’s stream for the open popup and ' +
      'pushes fills, orders and the portfolio without the secret',
    async () => {
      const { call } = await ready();
      await until(async () => (await stateOf(call)).includes('"live"'));
      expect(await call('streams.status')).toEqual({
        streams: [{ venue: 'perps', account: h.demo.owner.address, state: 'live', lastEventAt: expect.anything() }],
        market: { perps: 'down', clob: 'down' },
      });
      await until(() => typed().some((p) => p.push.kind === 'resync'));
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
      await until(() => typed().some((p) => p.push.kind === 'fills'));
      await until(() => typed().some((p) => p.push.kind === 'order' && p.push.order.status === 'filled'));
      expect(typed().find((p) => p.push.kind === 'fills')).toMatchObject({
        account: h.demo.owner.address,
        push: { fills: [{ instrument_id: 1, quantity: '0.002', side: 'long' }] },
      });
      // Every push is a valid contract message, and none carries a credential.
      expect(typed().length).toBe(pushes.length);
      const all = JSON.stringify(pushes) + (await stateOf(call));
      expect(all).not.toContain(h.demo.proxy.secret);
      expect(all.toLowerCase()).not.toContain(h.demo.proxy.privateKey.slice(2).toLowerCase());
      // The popup opens on the account as the live session holds it: the filled order gone, the portfolio current.
      const watched = (await call('streams.watch', { account: h.demo.owner.address })) as {
        perpsAccount: { portfolio: { positions: unknown[] }; openOrders: unknown[] } | null;
      };
      await until(() => typed().some((p) => p.push.kind === 'portfolio'));
      expect(watched.perpsAccount?.openOrders).toEqual([]);
      const now = (await call('streams.watch', { account: h.demo.owner.address })) as typeof watched;
      expect(now.perpsAccount?.portfolio).toEqual(
        typed()
          .filter((p) => p.push.kind === 'portfolio')
          .map((p) => (p.push.kind === 'portfolio' ? p.push.portfolio : undefined))
          .at(-1),
      );
      expect(now.perpsAccount?.portfolio.positions.length).toBeGreaterThan(0);
      // Another account, or no account: nothing.
      expect(await call('streams.watch', { account: '0x00000000000000000000000000000000000000aa' })).toMatchObject({
        perpsAccount: null,
      });
      expect(await call('streams.watch', {})).toMatchObject({ perpsAccount: null });
    },
  );

  it('opens nothing while no popup is open, no grant is live and no order is open', { timeout: 10_000 }, async () => {
    await ready();
    // A full need check (every 5 s) passes without a socket.
    await new Promise((r) => setTimeout(r, 5_300));
    expect(made).toEqual([]);
  });

  it('closes the socket on lock and on an account switch', async () => {
    const { bg, call } = await ready();
    await until(async () => (await stateOf(call)).includes('"live"'));
    const first = made.at(-1);
    await bg.lock();
    await until(() => first?.readyState === NodeWebSocket.CLOSED);
    await call('vault.unlock', { password: 'a good password' });
    await until(async () => (await stateOf(call)).includes('"live"'));
    const second = made.at(-1);
    expect(second).not.toBe(first);
    const other = (await call('vault.importOwnerKey', { privateKey: generatePrivateKey() })) as { address: string };
    await call('account.select', { address: other.address });
    await until(() => second?.readyState === NodeWebSocket.CLOSED);
    // The new account has no proxy: no stream, the popup polls.
    expect(await call('streams.status')).toMatchObject({ streams: [] });
  });

  it('a cold worker: a popup’s first book and account reads are answered by the reads its watch started', async () => {
    const { call } = await ready({ now: slowClock() });
    const account = h.demo.owner.address;
    const portfolioReads = () => h.ctx.requestLog.filter((r) => r.path.includes('/v1/account/portfolio')).length;
    const [books, portfolios] = [bookReads(), portfolioReads()];
    const watched = await call('streams.watch', { perpsIid: 1, account });
    expect(watched).toEqual({ perpsBook: null, perpsAccount: null });
    // Started as the watch was answered, before the popup asks (the sockets' own first reads settle meanwhile).
    await until(() => bookReads() > books && portfolioReads() > portfolios);
    await new Promise((r) => setTimeout(r, 150));
    const sent = [bookReads(), portfolioReads()];
    const book = (await call('perps.read', { name: 'book', query: { instrument_id: 1, depth: 10 } })) as {
      bids: unknown[];
    };
    expect(Array.isArray(book.bids)).toBe(true);
    expect(await call('perps.read', { account, name: 'portfolio' })).toMatchObject({ positions: expect.any(Array) });
    expect([bookReads(), portfolioReads()]).toEqual(sent);
    // Each read ahead answers one read: the next is sent.
    await call('perps.read', { name: 'book', query: { instrument_id: 1, depth: 10 } });
    expect(bookReads()).toBe(sent[0]! + 1);
  });

  it('a read started ahead of a popup answers nothing after a lock: the account read is refused', async () => {
    const { bg, call } = await ready({ now: slowClock() });
    const account = h.demo.owner.address;
    const portfolioReads = () => h.ctx.requestLog.filter((r) => r.path.includes('/v1/account/portfolio')).length;
    const before = [bookReads(), portfolioReads()];
    await call('streams.watch', { perpsIid: 1, account });
    // The reads ahead were answered while unlocked.
    await until(() => bookReads() > before[0]! && portfolioReads() > before[1]!);
    await new Promise((r) => setTimeout(r, 150));
    await bg.lock();
    const r = await bg.handle({ type: 'perps.read', payload: { account, name: 'portfolio' } }, popup());
    expect(r).toMatchObject({ ok: false, error: { name: 'Vault.LockedError' } });
    // Unlocked again within the read's second: the book read ahead (no key needed) was dropped with the lock, so the
    // popup's book read is sent afresh.
    await call('vault.unlock', { password: 'a good password' });
    const books = bookReads();
    await call('perps.read', { name: 'book', query: { instrument_id: 1, depth: 10 } });
    expect(bookReads()).toBeGreaterThan(books);
  });

  it(
    'streams the book of the instrument the popup shows, answers the ' +
      'popup’s book from it, and re-reads it over REST after a gap in sq',
    async () => {
      const { call } = await ready();
      expect(await call('streams.watch', { perpsIid: 1 })).toEqual({ perpsBook: null, perpsAccount: null });
      await until(() => market().some((p) => p.kind === 'perpsBook' && p.iid === 1));
      await until(() => market().some((p) => p.kind === 'perpsTicker') && market().some((p) => p.kind === 'perpsBbo'));
      expect(await call('streams.status')).toMatchObject({ market: { perps: 'live' } });
      // The popup's first book: the one held, with its age.
      const held = (await call('streams.watch', { perpsIid: 1 })) as { perpsBook: { ageMs: number } | null };
      expect(held.perpsBook?.ageMs).toBeLessThan(1_000);
      // A quiet book on a live socket is still current: not shown stale after a second without change.
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await call('streams.watch', { perpsIid: 1 })).toMatchObject({ perpsBook: { ageMs: 0 } });
      // A book change arrives as a push without a REST read.
      const reads = bookReads();
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60003', qty: '0.001', tif: 'gtc' }] }));
      await until(() => market().some((p) => p.kind === 'perpsBook' && p.book.bids.some(([px]) => px === '60003')));
      expect(bookReads()).toBe(reads);
      // One book frame lost on the way: the next one's sq skips, and the book is re-read over REST.
      lose = (t) => t.includes('"ch":"book::1"');
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60004', qty: '0.001', tif: 'gtc' }] }));
      await new Promise((r) => setTimeout(r, 50));
      expect(bookReads()).toBe(reads);
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60005', qty: '0.001', tif: 'gtc' }] }));
      await until(() => bookReads() === reads + 1);
    },
  );

  it('reconnects a dropped public socket and re-reads the book', async () => {
    const { call } = await ready();
    await call('streams.watch', { perpsIid: 1 });
    await until(() => market().some((p) => p.kind === 'perpsBook'));
    const reads = bookReads();
    // The public socket (no auth frame); the account's session may have opened first on the same URL.
    const pub = made.find(
      (w) => w.url.includes('/perps/v1/ws') && !authed.has(w) && w.readyState === NodeWebSocket.OPEN,
    );
    expect(pub).toBeDefined();
    pub?.terminate();
    await until(() => market().some((p) => p.kind === 'status' && p.venue === 'perps' && p.state === 'down'));
    await until(() => bookReads() === reads + 1 && market().at(-1)?.kind === 'perpsBook', 5_000);
    expect(await call('streams.status')).toMatchObject({ market: { perps: 'live' } });
  });

  it(
    'opens the order-book user channel with the account’s API credentials, ' +
      'pushes a counterparty fill, and no credential ever leaves',
    async () => {
      const { call } = await ready();
      await call('clob.createOrDerive', { account: h.demo.owner.address });
      await until(async () =>
        (await stateOf(call)).includes('"venue":"clob","account":"' + h.demo.owner.address + '","state":"live"'),
      ).catch(async (e) => {
        throw new Error(`${String(e)}: ${await stateOf(call)} ${JSON.stringify(pushes.slice(-5))}`);
      });
      const m = h.ctx.clob.markets[0];
      if (!m) throw new Error('no market');
      await call('streams.watch', { clobToken: m.tokenIds[0] });
      await until(() => market().some((p) => p.kind === 'clobBook'));
      // A bid one tick above the best (below the best ask), so the counterparty's sell meets it first.
      const book = h.ctx.clob.book(m.tokenIds[0]);
      const best = Math.max(...book.bids.map((o) => Number(o.price)));
      const price = ((best + 10_000) / 1e6).toFixed(2);
      expect(Math.min(...book.asks.map((o) => Number(o.price)))).toBeGreaterThan(best + 10_000);
      const [posted] = (await call('clob.postOrders', {
        account: h.demo.owner.address,
        orders: [{ tokenId: m.tokenIds[0], side: 'BUY', price, size: '10', orderType: 'GTC' }],
      })) as { ok: boolean; orderID?: string }[];
      await until(() =>
        typed().some(
          (p) => p.push.kind === 'clobOrder' && p.push.order.id === posted?.orderID && p.push.order.status === 'LIVE',
        ),
      );
      await until(() => market().some((p) => p.kind === 'clobBook' && p.bestBid === price));
      await counterpartySells(price, '10');
      await until(() => typed().some((p) => p.push.kind === 'clobTrade'));
      await until(() =>
        typed().some(
          (p) =>
            p.push.kind === 'clobOrder' && p.push.order.id === posted?.orderID && p.push.order.status === 'MATCHED',
        ),
      );
      const all = JSON.stringify(pushes) + (await stateOf(call));
      for (const secret of [h.demo.clob.apiKey, h.demo.clob.secret, h.demo.clob.passphrase])
        expect(all).not.toContain(secret);
    },
  );

  it(
    'after a worker restart, a stream kept only by open orders comes back (the open orders are read once at the venue)',
    { timeout: 15_000 },
    async () => {
      await ready();
      await h.send(h.proxy, createOrders({ orders: [{ iid: 2, buy: true, p: '2000', qty: '0.01', tif: 'gtc' }] }));
      // The same profile started again (the MV3 worker restarted): the vault session is restored, no popup is open.
      const after: NodeWebSocket[] = [];
      class Restarted extends NodeWebSocket {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          after.push(this);
        }
      }
      startBackground({ browser, dbName: `streams-${n - 1}`, kdf: KDF, bounds: BOUNDS, WebSocket: Restarted });
      await until(() => after.some((w) => w.url.includes('/perps/v1/ws')), 7_000);
    },
  );

  it('answers streams.status in a trading session (the session popup asks for the badge)', () => {
    expect(SESSION_PROCEDURES.has('streams.status')).toBe(true);
  });
});
