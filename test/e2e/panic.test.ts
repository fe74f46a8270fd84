/**
 * The panic switch in real Chromium against the sandbox ("Panic is total and
 * bounded"): a granted site flooding orders while the person presses Panic ends with nothing open at
 * either venue and nothing accepted after the cancel; with the order book silent, panic still returns in
 * bounded time, locks, and the report says which kill switch will cancel and when.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startDemoSession, type Harness, grantOrderBook } from './harness';
import { panicBoundMs } from '../../lib/background/panic-timing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
let send: Awaited<ReturnType<typeof startDemoSession>>['send'];
type Provider = { request: (a: unknown) => Promise<unknown> };

const owner = () => h.sandbox.demo.owner.address.toLowerCase();
const openPerps = () =>
  [...h.sandbox.ctx.venue.orders.values()].filter(
    (o) => o.owner === owner() && (o.status === 'open' || o.status === 'untriggered'),
  );
const liveClob = () =>
  [...h.sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner() && o.status === 'live');
const log = () => h.sandbox.ctx.requestLog;
const ethOrder = (price: string, qty = '0.1') => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty, p: price, tif: 'gtc', po: true }] },
});
const nextWindow = () =>
  h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });

/**
 * Sends an order whose approval window offers a grant; saves the default limits (with `fields` changed: input name →
 * value) and approves.
 */
async function grantViaWindow(price: string, fields: Record<string, string> = {}): Promise<void> {
  const opened = nextWindow();
  const first = demo.evaluate(
    (p) =>
      (window as unknown as { countersign: Provider }).countersign
        .request({ method: 'perps_sendCommand', params: p })
        .then(
          () => true,
          () => false,
        ),
    ethOrder(price),
  );
  const w = await opened;
  await w.getByRole('button', { name: 'Allow this site within limits…' }).click();
  for (const [name, value] of Object.entries(fields)) await w.locator(`input[name="${name}"]`).fill(value);
  await w.getByRole('button', { name: 'Save permission' }).click();
  await w.getByText(/Saved for/).waitFor();
  await w.bringToFront();
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 5_000 },
  );
  await w.getByTestId('approve').click();
  expect(await first).toBe(true);
}

/** Presses Panic in the popup and confirms; returns when the report is shown, with how long it took. */
async function pressPanic(): Promise<number> {
  await popup.reload();
  await popup.getByRole('button', { name: 'Panic' }).click();
  const t0 = Date.now();
  await popup.getByTestId('panic-confirm').click();
  await popup.getByTestId('panic-report').waitFor({ timeout: 60_000 });
  return Date.now() - t0;
}

const postClob = async (k: number) => {
  const tokenId = h.sandbox.ctx.clob.markets[0]!.tokenIds[0];
  const orders = Array.from({ length: k }, (_, i) => ({
    tokenId,
    side: 'BUY',
    price: (0.2 + i / 100).toFixed(2),
    size: '10',
    orderType: 'GTC',
  }));
  expect((await send('clob.postOrders', { account: h.sandbox.demo.owner.address, orders })).ok).toBe(true);
};
/** The sandbox's test hooks (`/admin/silence`, `/admin/delay`). */
const admin = async (hook: string, body: unknown) => {
  const r = await fetch(`${h.sandbox.url}/admin/${hook}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
};
const text = async (testId: string) => (await popup.getByTestId(testId).textContent())?.trim();
const unlocked = async () => ((await send('vault.status')) as { result: { unlocked: boolean } }).result.unlocked;

beforeAll(async () => {
  ({ h, popup, send, demo } = await startDemoSession(PASSWORD));
});
afterAll(async () => {
  await h?.close();
});

describe('panic switch in Chromium', () => {
  it(
    'a granted page floods orders while panic runs: when panic returns ' +
      'nothing is open at either venue and nothing was accepted after the cancel',
    async () => {
      // A grant wide enough that the flood is not stopped by its own caps (daily notional, rate).
      await grantViaWindow('3100', { 'grant-rate': '9999' });
      await postClob(5);
      // Three loops of orders under the grant, as fast as the page can send them.
      await demo.evaluate(() => {
        const w = window as unknown as { countersign: Provider; flood: { stop: boolean; ok: number; refused: number } };
        w.flood = { stop: false, ok: 0, refused: 0 };
        for (let loop = 0; loop < 3; loop++) {
          void (async () => {
            for (let i = 0; !w.flood.stop && i < 3_000; i++) {
              const p = (3099 - ((i * 3 + loop) % 60) * 0.05).toFixed(2);
              await w.countersign
                .request({
                  method: 'perps_sendCommand',
                  params: {
                    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.01', p, tif: 'gtc', po: true }] },
                  },
                })
                .then(
                  () => w.flood.ok++,
                  () => w.flood.refused++,
                );
            }
          })();
        }
      });
      const accepted = () =>
        log().filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.status === 200).length;
      const before = accepted();
      await expect.poll(() => accepted() - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(10);
      // The order book answers slowly (1.5 s): a panic that revoked the grant only after its cancels would let the
      // flood through meanwhile.
      await admin('delay', { service: 'clob', ms: 1_500 });
      await pressPanic();
      await admin('delay', { service: 'clob', ms: 0 });
      const atReport = accepted();
      await h.screenshot(popup, '46-panic-report-flood');
      const flood = await demo.evaluate(() => {
        const w = window as unknown as { flood: { stop: boolean; ok: number; refused: number } };
        w.flood.stop = true;
        return w.flood;
      });
      expect(flood.ok).toBeGreaterThanOrEqual(10);
      expect(flood.refused).toBeGreaterThan(0);
      expect(openPerps()).toEqual([]);
      expect(liveClob()).toEqual([]);
      const perpsCancel = log().findIndex(
        (r) => r.method === 'DELETE' && r.path === '/perps/v1/trade/orders/all' && r.status === 200,
      );
      const clobCancel = log().findIndex(
        (r) => r.method === 'DELETE' && r.path === '/clob/cancel-all' && r.status === 200,
      );
      expect(perpsCancel).toBeGreaterThan(0);
      expect(clobCancel).toBeGreaterThan(0);
      expect(
        log()
          .slice(perpsCancel)
          .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.status === 200),
      ).toEqual([]);
      expect(
        log()
          .slice(clobCancel)
          .filter((r) => r.method === 'POST' && /^\/clob\/orders?$/.test(r.path) && r.status === 200),
      ).toEqual([]);
      expect(accepted()).toBe(atReport);
      expect(await text('panic-perps')).toMatch(/open order\(s\) cancelled/);
      expect(await text('panic-clob')).toBe('5 open order(s) cancelled.');
      expect(await text('panic-locked')).toBe('Yes');
      expect(await unlocked()).toBe(false);
    },
  );

  it(
    'order book silent: panic returns in bounded time, locks, ' + 'and the report says its heartbeat lapse will cancel',
    async () => {
      expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
      await popup.reload();
      await grantViaWindow('3100');
      await grantOrderBook(h, demo); // a grant names one venue: the order-book grant arms the heartbeats
      await postClob(2);
      // Let the dead-man's first heartbeat reach the order book, then silence it (the sandbox's test hook).
      await expect
        .poll(
          async () =>
            (
              (await send('deadman.status')) as { result: { venues: { venue: string; lastHeartbeat?: number }[] } }
            ).result.venues.find((v) => v.venue === 'clob')?.lastHeartbeat ?? 0,
          { timeout: 10_000 },
        )
        .toBeGreaterThan(0);
      await admin('silence', { service: 'clob', silent: true });
      const ms = await pressPanic();
      await h.screenshot(popup, '47-panic-report-silent-venue');
      expect(ms).toBeLessThan(panicBoundMs() + 5_000);
      // The lapse is 10 s after the last heartbeat; panic's retries to the silent venue take about as long, so it may
      // already be due.
      expect(await text('panic-clob')).toMatch(
        new RegExp(
          String.raw`^Did not answer — its kill switch \(heartbeat lapse\) ` +
            String.raw`(will cancel within \d+ s|` +
            String.raw`is already due \(for \d+ s\): the venue cancels as soon as it runs again — check the venue)\.` +
            String.raw`( \((fires at|due since) [^)]+\))?$`,
        ),
      );
      expect(await text('panic-perps')).toMatch(/open order\(s\) cancelled/);
      expect(await text('panic-locked')).toBe('Yes');
      expect(await unlocked()).toBe(false);
      expect(openPerps()).toEqual([]);
      // The order-book orders wait for the heartbeat lapse the report announced (the sandbox applies it on the next
      // request).
      expect(liveClob().length).toBe(3); // the 2 above and the one that offered the order-book grant
      await admin('silence', { service: 'clob', silent: false });
      h.sandbox.ctx.clob.lapseHeartbeats(Date.now() + 11_000, 10_000);
      expect(liveClob()).toEqual([]);
    },
  );

  it(
    'two accounts in Countersign: panic cancels both at both ' +
      'venues, and the report at 360 × 600 names each account and venue',
    async () => {
      expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
      const A = h.sandbox.demo.owner.address;
      const key = generatePrivateKey();
      const B = privateKeyToAccount(key).address;
      const ok = async (type: string, payload: unknown) => expect((await send(type, payload)).ok, type).toBe(true);
      await ok('vault.importOwnerKey', { privateKey: key, label: 'Second' });
      await ok('proxy.issue', { account: B, expiry: Date.now() + 30 * 86_400_000, label: '' });
      await ok('clob.createOrDerive', { account: B });
      h.sandbox.ctx.clob.credit(B, 10_000_000_000n);
      await ok('account.select', { address: B });
      await ok('perps.send', { account: B, op: ethOrder('3000').op });
      const tokenId = h.sandbox.ctx.clob.markets[0]!.tokenIds[0];
      await ok('clob.postOrders', {
        account: B,
        orders: [{ tokenId, side: 'BUY', price: '0.3', size: '10', orderType: 'GTC' }],
      });
      await ok('account.select', { address: A });
      await ok('perps.send', { account: A, op: ethOrder('3001').op });
      await postClob(1);
      const open = (a: string) =>
        [...h.sandbox.ctx.venue.orders.values()].filter((o) => o.owner === a.toLowerCase() && o.status === 'open')
          .length +
        [...h.sandbox.ctx.clob.orders.values()].filter((o) => o.address === a.toLowerCase() && o.status === 'live')
          .length;
      expect(open(B)).toBe(2);
      await popup.setViewportSize({ width: 360, height: 600 });
      await pressPanic();
      await h.screenshot(popup, '48-panic-report-two-accounts');
      expect(open(A)).toBe(0);
      expect(open(B)).toBe(0);
      const rows = popup.getByTestId('panic-account');
      expect(await rows.count()).toBe(2);
      const second = popup.locator(`[data-testid="panic-account"][data-account="${B.toLowerCase()}"]`);
      expect(await second.getByRole('heading').textContent()).toContain('Second');
      expect((await second.getByTestId('panic-perps').textContent())?.trim()).toBe('1 open order(s) cancelled.');
      expect((await second.getByTestId('panic-clob').textContent())?.trim()).toBe('1 open order(s) cancelled.');
      expect(await text('panic-outcome')).toBe('Stopped');
      // Nothing runs off the side at the popup's narrowest width.
      expect(await popup.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      expect(await unlocked()).toBe(false);
    },
  );
});
