/**
 * The background's live streams (issue #22) against the in-process sandbox, `ws` as the worker's
 * WebSocket: the open popup brings the active account's perps stream up, events reach extension pages
 * as derived pushes (never the proxy secret or key), and lock or an account switch closes the socket.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey } from 'viem/accounts';
import { WebSocket as NodeWebSocket } from 'ws';
import * as v from 'valibot';
import { createOrders } from '../perps/commands';
import { streamPushSchema, type StreamPush } from '../messaging/streams';
import { startHarness, type Harness } from '../sandbox/testkit';
import { startBackground, type BackgroundBrowser } from './index';
import { BOUNDS, browser as kitBrowser, KDF } from './testkit';

const made: NodeWebSocket[] = [];
class TrackedWebSocket extends NodeWebSocket {
  constructor(url: string) {
    super(url);
    made.push(this);
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
const popup = () => ({ id: fakeBrowser.runtime.id, url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html` });

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
});

let n = 0;
async function ready() {
  const bg = startBackground({ browser, dbName: `streams-${n++}`, kdf: KDF, bounds: BOUNDS, WebSocket: TrackedWebSocket });
  const call = async (type: string, payload: unknown = {}) => {
    const r = await bg.handle({ type, payload }, popup());
    if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r)}`);
    return r.result;
  };
  await call('vault.create', { password: 'a good password' });
  await call('settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl, gammaUrl: `${h.url}/gamma`, dataUrl: `${h.url}/data` });
  await call('vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  await call('proxy.import', { account: h.demo.owner.address, privateKey: h.demo.proxy.privateKey, proxy: h.demo.proxy.address, secret: h.demo.proxy.secret, expiry: h.demo.proxy.expiry });
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
const stateOf = async (call: (t: string) => Promise<unknown>) => JSON.stringify(await call('streams.status'));

describe('background streams', () => {
  it('opens the active account’s stream for the open popup and pushes fills, orders and the portfolio without the secret', async () => {
    const { call } = await ready();
    await until(async () => (await stateOf(call)).includes('"live"'));
    expect(await call('streams.status')).toEqual({ streams: [{ venue: 'perps', account: h.demo.owner.address, state: 'live', lastEventAt: expect.anything() }], market: { perps: 'down', clob: 'down' } });
    await until(() => typed().some((p) => p.push.kind === 'resync'));
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
    await until(() => typed().some((p) => p.push.kind === 'fills'));
    await until(() => typed().some((p) => p.push.kind === 'order' && p.push.order.status === 'filled'));
    expect(typed().find((p) => p.push.kind === 'fills')).toMatchObject({ account: h.demo.owner.address, push: { fills: [{ instrument_id: 1, quantity: '0.002', side: 'long' }] } });
    // Every push is a valid contract message, and none carries a credential.
    expect(typed().length).toBe(pushes.length);
    const all = JSON.stringify(pushes) + (await stateOf(call));
    expect(all).not.toContain(h.demo.proxy.secret);
    expect(all.toLowerCase()).not.toContain(h.demo.proxy.privateKey.slice(2).toLowerCase());
  });

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
});
