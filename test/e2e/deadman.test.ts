/**
 * The dead-man timer against the background's real lifecycle in Chromium: with a standing
 * grant live, the service worker is stopped over CDP (`ServiceWorker.stopAllWorkers`), as the browser may
 * do at any time. The next granted request is signed only after the new worker re-armed the kill
 * switches; `deadman.status` is armed; renewals and heartbeats go on after the restart, also when no page
 * asks (the backstop alarm wakes the worker); and once the browser is closed, the venues cancel the
 * orders. The sandbox's clock is moved past the perps lead after the browser closed, so the test does not
 * wait a minute for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CDPSession, Page } from 'playwright-core';
import { grantInWindow, grantOrderBook, messenger, startDemoSession, type Harness } from './harness';
import { PERPS_LEAD_MS } from '../../lib/background/deadman-switches';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
let send: Awaited<ReturnType<typeof startDemoSession>>['send'];
let cdp: CDPSession;
/** Added to the sandbox's clock (moved only after the browser is closed). */
let skew = 0;

type Provider = { request: (a: unknown) => Promise<unknown> };
type VenueStatus = {
  venue: 'perps' | 'clob';
  armed: boolean;
  renewals: number;
  perpsCancelAt?: number;
  lastHeartbeat?: number;
};
const owner = () => h.sandbox.demo.owner.address.toLowerCase();
const openPerps = () =>
  [...h.sandbox.ctx.venue.orders.values()].filter(
    (o) => o.owner === owner() && (o.status === 'open' || o.status === 'untriggered'),
  );
const liveClob = () =>
  [...h.sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner() && o.status === 'live');
const log = () => h.sandbox.ctx.requestLog;
const renewalsAfter = (i: number) =>
  log()
    .slice(i)
    .filter((r) => r.path === '/perps/v1/trade/auto-cancel' && r.status === 200).length;
const heartbeatsAfter = (i: number) =>
  log()
    .slice(i)
    .filter((r) => r.path === '/clob/v1/heartbeats' && r.status === 200).length;
const ethOrder = (price: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: price, tif: 'gtc', po: true }] },
});
const pageRequest = (method: string, params?: unknown) =>
  demo.evaluate(
    ([m, p]) =>
      (window as unknown as { countersign: Provider }).countersign
        .request({ method: m, ...(p === undefined ? {} : { params: p }) })
        .then(
          (r) => ({ ok: true, r }),
          (e: { code: number; message: string }) => ({ ok: false, code: e.code, message: e.message }),
        ),
    [method, params] as const,
  ) as Promise<{ ok: boolean; r?: unknown; code?: number; message?: string }>;
async function status(): Promise<{ armed: boolean; venues: VenueStatus[] }> {
  const r = await send('deadman.status');
  return r.result as { armed: boolean; venues: VenueStatus[] };
}
/** Polls `fn` every 250 ms until true (at most `ms`). */
async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
/** The extension worker's running status as CDP last reported it. */
let running = 'running';
/** Stops every service worker over CDP and waits until the extension's worker is stopped. */
async function stopWorker(): Promise<void> {
  await cdp.send('ServiceWorker.stopAllWorkers');
  await until(() => running === 'stopped', 10_000, 'the worker to stop');
}

beforeAll(async () => {
  ({ h, popup, send, demo } = await startDemoSession(PASSWORD, { now: () => Date.now() + skew }));
  // A blank page holds the CDP session (the service-worker domain is browser-wide).
  cdp = await h.ctx.newCDPSession(await h.ctx.newPage());
  cdp.on('ServiceWorker.workerVersionUpdated', (e) => {
    for (const v of e.versions)
      if (v.scriptURL.startsWith(`chrome-extension://${h.extensionId}/`)) running = v.runningStatus;
  });
  await cdp.send('ServiceWorker.enable');
  // A grant, offered from the approval window of a first order and saved with the form's defaults.
  await grantInWindow(h, demo, 'perps_sendCommand', ethOrder('3100'));
  // A grant names one venue: an order-book grant too, so both kill switches are armed.
  await grantOrderBook(h, demo);
  expect(
    (
      await send('clob.postOrders', {
        account: h.sandbox.demo.owner.address,
        orders: [
          {
            tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0],
            side: 'BUY',
            price: '0.31',
            size: '10',
            orderType: 'GTC',
          },
        ],
      })
    ).ok,
  ).toBe(true);
  await until(async () => (await status()).armed, 15_000, 'the dead-man armed');
}, 90_000);
afterAll(async () => {
  await h?.close();
});

describe('dead-man across service-worker restarts (Chromium)', () => {
  it(
    'after the worker is stopped, the next granted request is ' +
      'signed only once the new worker has re-armed both switches',
    async () => {
      await until(async () => (await status()).armed, 10_000, 'the dead-man armed');
      await popup.close(); // no extension page keeps the worker busy
      await stopWorker();
      const cut = log().length;
      const r = await pageRequest('perps_sendCommand', ethOrder('3099'));

      expect(r.ok).toBe(true);
      const orderAt = log().findIndex((x, i) => i >= cut && x.path === '/perps/v1/trade/orders' && x.status === 200);
      expect(orderAt).toBeGreaterThan(cut);
      const renewedAt = log().findIndex(
        (x, i) => i >= cut && x.path === '/perps/v1/trade/auto-cancel' && x.status === 200,
      );
      expect(renewedAt).toBeGreaterThan(cut);
      expect(renewedAt).toBeLessThan(orderAt);
      expect(openPerps().length).toBe(2);

      popup = await h.openPopup();
      send = messenger(popup);
      await until(
        async () => (await status()).venues.filter((v) => v.armed).length === 2,
        10_000,
        'both switches armed after the restart',
      );
      const s = await status();
      expect(s.armed).toBe(true);
      expect(s.venues.find((v) => v.venue === 'perps')!.perpsCancelAt).toBeGreaterThan(Date.now() + 30_000);
      // Renewals go on in the new worker: more auto-cancel renewals and heartbeats reach the venues.
      await until(() => renewalsAfter(cut) >= 2 && heartbeatsAfter(cut) >= 3, 20_000, 'renewals after the restart');
    },
    60_000,
  );

  it('a worker stopped with no page asking is woken by the backstop alarm and re-arms by itself', async () => {
    await popup.close();
    await stopWorker();
    const cut = log().length;
    // Nothing sends a message or a request now; only the 30 s backstop alarm can start the worker.
    await until(() => renewalsAfter(cut) >= 1 && heartbeatsAfter(cut) >= 1, 45_000, 'a renewal from the woken worker');
    expect(liveClob().length + openPerps().length).toBeGreaterThan(0);
  }, 60_000);

  it(
    'once the browser is closed, the venues cancel the orders ' +
      '(perps at the lead, the order book at the heartbeat lapse)',
    async () => {
      // The heartbeat lapse may already have cancelled the order-book order while the worker was stopped above
      // (that is the safe side); place a fresh one so the lapse after closing is what the test sees.
      popup = await h.openPopup();
      send = messenger(popup);
      await until(
        async () => (await status()).venues.filter((v) => v.armed).length === 2,
        10_000,
        'both switches armed',
      );
      expect(
        (
          await send('clob.postOrders', {
            account: h.sandbox.demo.owner.address,
            orders: [
              {
                tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0],
                side: 'BUY',
                price: '0.32',
                size: '10',
                orderType: 'GTC',
              },
            ],
          })
        ).ok,
      ).toBe(true);
      expect(openPerps().length).toBe(2);
      expect(liveClob().length).toBeGreaterThanOrEqual(1);
      await h.ctx.close(); // the browser dies: nothing renews any more
      skew += PERPS_LEAD_MS + 1_000; // the venues' clock passes the lead (and the 10 s heartbeat lapse)
      // The venues apply their timers on the next request of the account (any read does).
      await fetch(`${h.sandbox.url}/perps/v1/account/open-orders`, {
        headers: { 'SERVICE-PROXY': h.sandbox.demo.proxy.address, 'SERVICE-SECRET': h.sandbox.demo.proxy.secret },
      });
      await fetch(`${h.sandbox.url}/clob/ok`);
      expect(openPerps()).toEqual([]);
      expect(liveClob()).toEqual([]);
    },
    60_000,
  );
});
