/**
 * Notifications from the background (issue #22), against the in-process sandbox with `ws` as the
 * worker's WebSocket: a fill made at the sandbox (not through the extension) raises a browser
 * notification from the stream pushes, with the instrument's name and no secret; switched off with
 * `notifications.set`, the next fill raises none; the preferences are their own record.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { WebSocket as NodeWebSocket } from 'ws';
import { createOrders } from '../perps/commands';
import { startHarness, type Harness } from '../sandbox/testkit';
import { DEFAULT_NOTIFICATION_PREFS } from '../notifications/prefs';
import { startBackground } from './index';
import { BOUNDS, browser as kitBrowser, KDF } from './testkit';

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
const popup = () => ({ id: fakeBrowser.runtime.id, url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html` });

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

describe('background notifications', () => {
  it('a fill at the venue raises a notification; switched off, the next raises none', async () => {
    const bg = startBackground({ browser, dbName: 'notify-0', kdf: KDF, bounds: BOUNDS, WebSocket: NodeWebSocket });
    const call = async (type: string, payload: unknown = {}) => {
      const r = await bg.handle({ type, payload }, popup());
      if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r)}`);
      return r.result;
    };
    await call('vault.create', { password: 'a good password' });
    await call('settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl, gammaUrl: `${h.url}/gamma`, dataUrl: `${h.url}/data` });
    await call('vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
    await call('proxy.import', { account: h.demo.owner.address, privateKey: h.demo.proxy.privateKey, proxy: h.demo.proxy.address, secret: h.demo.proxy.secret, expiry: h.demo.proxy.expiry });
    expect(await call('notifications.get')).toEqual(DEFAULT_NOTIFICATION_PREFS);
    await until(async () => JSON.stringify(await call('streams.status')).includes('"live"'));

    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
    await until(() => created.some((n) => n.title === 'Order filled'));
    const n = created.find((x) => x.title === 'Order filled');
    expect(n?.message).toMatch(/^Buy 0\.002 BTC[^ ]* at an average [\d,.]+ \(0\.002 of 0\.002 filled\)\.$/);
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
});
