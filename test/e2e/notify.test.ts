/**
 * In real Chromium, notifications come from the background with the popup closed, and the
 * perps stream survives the popup closing and a service-worker restart (with a grant live, and with only
 * open orders). The worker's
 * `chrome.notifications.create` is wrapped (through the service-worker handle) to record each
 * notification's text; fills are made at the sandbox from outside the extension.
 * 1. Popup closed (an open order keeps the stream wanted): a fill raises "Order filled" without a REST
 *    read of the account.
 * 2. With a grant live, the worker is stopped over CDP (as the dead-man tests do); the new worker's
 *    stream reconnects, resyncs over REST, and the next fill raises a notification.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CDPSession, Page, Worker } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { createOrders, type PerpsCommand } from '../../lib/perps/commands';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { sendPerpsCommand } from '../../lib/perps/client';
import { grantInWindow, startDemoSession, type Harness } from './harness';

let h: Harness;
let popup: Page;
let demo: Page;
let cdp: CDPSession;
let running = 'running';

async function outside(command: PerpsCommand): Promise<unknown> {
  const proxy = privateKeyToAccount(h.sandbox.demo.proxy.privateKey);
  const envelope = await signPerpsCommand(proxy, {
    command,
    domain: h.sandbox.ctx.config.perpsDomain,
    nowMs: Date.now(),
  });
  return sendPerpsCommand(`${h.sandbox.url}/perps`, command, envelope);
}
const accountReads = () =>
  h.sandbox.ctx.requestLog.filter(
    (r) => r.method === 'GET' && /\/v1\/account\/(open-orders|portfolio|orders)/.test(r.path),
  ).length;
async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
type Created = { id: string; title: string; message: string };
/** The extension's current service worker (a new one after a restart). */
const worker = (): Worker | undefined =>
  h.ctx
    .serviceWorkers()
    .filter((w) => w.url().startsWith(`chrome-extension://${h.extensionId}/`))
    .at(-1);
/** Wraps the worker's `chrome.notifications.create` to record what it is asked to show. */
async function record(w: Worker): Promise<void> {
  await w.evaluate(() => {
    const g = globalThis as unknown as {
      __created?: unknown[];
      chrome: { notifications: { create: (...a: unknown[]) => unknown } };
    };
    if (g.__created) return;
    g.__created = [];
    const n = g.chrome.notifications;
    const orig = n.create.bind(n);
    n.create = (...a: unknown[]) => {
      const [id, o] = a as [string, { title: string; message: string }];
      g.__created?.push({ id, title: o.title, message: o.message });
      return orig(...a);
    };
  });
}
const created = async (): Promise<Created[]> =>
  ((await worker()?.evaluate(() => (globalThis as unknown as { __created?: unknown[] }).__created ?? [])) ??
    []) as Created[];
const best = () => Number(h.sandbox.ctx.venue.levels(1).bids[0]?.[0]);

beforeAll(async () => {
  ({ h, popup, demo } = await startDemoSession('correct horse battery staple'));
  cdp = await h.ctx.newCDPSession(await h.ctx.newPage());
  cdp.on('ServiceWorker.workerVersionUpdated', (e) => {
    for (const v of e.versions)
      if (v.scriptURL.startsWith(`chrome-extension://${h.extensionId}/`)) running = v.runningStatus;
  });
  await cdp.send('ServiceWorker.enable');
  await popup.reload();
  await popup
    .getByRole('status')
    .filter({ hasText: /^live$/ })
    .waitFor({ timeout: 15_000 });
}, 90_000);
afterAll(async () => {
  await h?.close();
});

describe('notifications and the stream with the popup closed (Chromium)', () => {
  it('a fill at the venue with the popup closed raises a notification, pushed without a REST read', async () => {
    // A resting order keeps the stream wanted once the popup is gone.
    await outside(createOrders({ orders: [{ iid: 1, buy: true, p: String(best() - 500), qty: '0.001', tif: 'gtc' }] }));
    await new Promise((r) => setTimeout(r, 500));
    await popup.close();
    const w = worker();
    if (!w) throw new Error('no service worker');
    await record(w);
    await new Promise((r) => setTimeout(r, 16_000)); // past the popup's 15 s hold: only the open order keeps the stream
    h.sandbox.ctx.requestLog.length = 0;
    await outside(
      createOrders({ orders: [{ iid: 1, buy: true, p: String(Math.round(best() * 1.05)), qty: '0.002', tif: 'ioc' }] }),
    );
    await until(async () => (await created()).some((n) => n.title === 'Order filled'), 5_000, 'the fill notification');
    const n = (await created()).find((x) => x.title === 'Order filled');
    expect(n?.message).toMatch(/^Buy 0\.002 \S+ \(#\d+\) at an average ≈?[\d,.]+ \(0\.002 of 0\.002 filled\)\.$/);
    expect(accountReads()).toBe(0);
    expect(JSON.stringify(await created())).not.toContain(h.sandbox.demo.proxy.secret);
  }, 60_000);

  it('after a worker restart (grant live) the stream reconnects, resyncs and the next fill is notified', async () => {
    await grantInWindow(h, demo, 'perps_sendCommand', {
      op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3100', tif: 'gtc', po: true }] },
    });
    await cdp.send('ServiceWorker.stopAllWorkers');
    await until(() => running === 'stopped', 10_000, 'the worker to stop');
    h.sandbox.ctx.requestLog.length = 0;
    // Any extension event starts the worker again; a page request through the content script does.
    await demo.evaluate(() =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
        method: 'eth_accounts',
      }),
    );
    await until(() => running === 'running' && !!worker(), 10_000, 'the worker to start');
    await until(() => accountReads() > 0, 20_000, 'the new stream’s REST resync');
    const w = worker();
    if (!w) throw new Error('no service worker');
    await record(w);
    await new Promise((r) => setTimeout(r, 1_000));
    await outside(
      createOrders({
        orders: [{ iid: 1, buy: false, p: String(Math.round(best() * 0.95)), qty: '0.001', tif: 'ioc' }],
      }),
    );
    await until(
      async () => (await created()).some((n) => n.title === 'Order filled' && n.message.startsWith('Sell 0.001')),
      5_000,
      'the fill notification after the restart',
    );
  }, 90_000);

  it(
    'after a worker restart with only open orders (no grant, ' +
      'popup closed) the stream comes back and a fill is notified',
    async () => {
      // The site gives its permission back: only the resting orders can keep a stream now.
      await demo.evaluate(() =>
        (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
          method: 'wallet_revokePermissions',
          params: [{ eth_accounts: {} }],
        }),
      );
      await cdp.send('ServiceWorker.stopAllWorkers');
      await until(() => running === 'stopped', 10_000, 'the worker to stop');
      h.sandbox.ctx.requestLog.length = 0;
      await demo.evaluate(() =>
        (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
          method: 'eth_chainId',
        }),
      );
      await until(() => running === 'running' && !!worker(), 10_000, 'the worker to start');
      // The venues' open orders read once, then the stream's resync (portfolio).
      await until(
        () => h.sandbox.ctx.requestLog.some((r) => r.path.endsWith('/v1/account/portfolio')),
        20_000,
        'the stream kept by the open orders',
      );
      const w = worker();
      if (!w) throw new Error('no service worker');
      await record(w);
      await new Promise((r) => setTimeout(r, 1_000));
      await outside(
        createOrders({
          orders: [{ iid: 1, buy: false, p: String(Math.round(best() * 0.95)), qty: '0.001', tif: 'ioc' }],
        }),
      );
      await until(
        async () => (await created()).some((n) => n.title === 'Order filled'),
        5_000,
        'the fill notification with only open orders',
      );
    },
    90_000,
  );
});
