/**
 * Standing grants, the panic switch, the dead-man timer and the audit log in real Chromium against the
 * sandbox: a site trades 50 orders inside a grant without a window and the sandbox verifies
 * them all; an order over a limit opens a window that names the limit; a withdrawal under a grant
 * still opens a window; the audit export lists every signature with its origin; the panic switch leaves
 * no open order at either venue and locks (which revokes the grant). The dead-man timer (venues cancel
 * after the browser is closed, worker restarts) is in `deadman.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startDemoSession, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
let windowCount: () => number = () => 0;

let send: Awaited<ReturnType<typeof startDemoSession>>['send'];
type Provider = { request: (a: unknown) => Promise<unknown> };
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
const nextWindow = () =>
  h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
/**
 * Approves the request window `w` shows. `closes`: nothing else is pending, so the window closes —
 * waited for, so the test's next request opens a new window (one sent before it asked to close would
 * be shown in it, as the product reuses an open window).
 */
async function approveIn(w: Page, o: { closes?: boolean } = {}) {
  await w.bringToFront();
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 5_000 },
  );
  const closed = o.closes ? w.waitForEvent('close') : undefined;
  await w.getByTestId('approve').click();
  await closed;
}
const owner = () => h.sandbox.demo.owner.address.toLowerCase();
const openPerps = () =>
  [...h.sandbox.ctx.venue.orders.values()].filter(
    (o) => o.owner === owner() && (o.status === 'open' || o.status === 'untriggered'),
  );
const liveClob = () =>
  [...h.sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner() && o.status === 'live');
/**
 * Opens the grant offer in window `w` and saves it with the caps lowered to 2 000 USDC per order and
 * 20 000 per 24 h (the form proposes more, from the account's equity); returns the proposed caps.
 */
async function saveGrantIn(
  w: Page,
  caps: { perOrder: string; daily: string } = { perOrder: '2000', daily: '20000' },
  shot?: string,
): Promise<{ perOrder: string; daily: string; scope: string; equity: string }> {
  await w.getByRole('button', { name: 'Allow this site within limits…' }).click();
  const perOrder = w.locator('input[name="grant-max-notional"]');
  await perOrder.waitFor();
  const proposed = {
    perOrder: await perOrder.inputValue(),
    daily: await w.locator('input[name="grant-daily"]').inputValue(),
    scope: (await w.getByTestId('grant-scope').textContent()) ?? '',
    equity: (await w.getByTestId('grant-equity').textContent()) ?? '',
  };
  if (shot) await h.screenshot(w, shot);
  await perOrder.fill(caps.perOrder);
  await w.locator('input[name="grant-daily"]').fill(caps.daily);
  await w.getByRole('button', { name: 'Save permission' }).click();
  await w.getByText(/Saved for 8 h/).waitFor();
  return proposed;
}
/**
 * Sends an ETH-PERP order whose approval window offers a grant; saves it (caps lowered to 2 000 / 20 000) and approves.
 */
async function grantViaWindow(price: string): Promise<void> {
  const opened = nextWindow();
  const first = pageRequest('perps_sendCommand', ethOrder(price));
  const w = await opened;
  await saveGrantIn(w);
  await h.screenshot(w, '40-grant-offer');
  await approveIn(w);
  expect((await first).ok).toBe(true);
}
const ethOrder = (price: string, qty = '0.1') => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty, p: price, tif: 'gtc', po: true }] },
});

beforeAll(async () => {
  ({ h, popup, send, demo, windows: windowCount } = await startDemoSession(PASSWORD));
});
afterAll(async () => {
  await h?.close();
});

describe('standing grants in Chromium', () => {
  it(
    'offered from the approval window; then 50 orders inside the ' +
      'grant are signed without a window and verified by the sandbox',
    async () => {
      await grantViaWindow('3100');
      const badge = await h.worker.evaluate(() =>
        (
          globalThis as unknown as { chrome: { action: { getBadgeText: (o: object) => Promise<string> } } }
        ).chrome.action.getBadgeText({}),
      );
      expect(badge).toBe('ON');

      const windowsBefore = windowCount();
      const accepted = () =>
        h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
      const before = accepted();
      const results = await demo.evaluate(async () => {
        const p = (window as unknown as { countersign: Provider }).countersign;
        const out: boolean[] = [];
        for (let i = 0; i < 50; i++) {
          const r = await p
            .request({
              method: 'perps_sendCommand',
              params: {
                op: {
                  type: 'createOrders',
                  args: [{ iid: 2, buy: true, qty: '0.1', p: (3100 - i * 0.05).toFixed(2), tif: 'gtc', po: true }],
                },
              },
            })
            .then(
              () => true,
              () => false,
            );
          out.push(r);
        }
        return out;
      });
      expect(results.every(Boolean)).toBe(true);
      expect(windowCount()).toBe(windowsBefore);
      expect(accepted() - before).toBe(50);
    },
  );

  it('an order over a limit opens a window that names the limit; a withdrawal under the grant still asks', async () => {
    const opened = nextWindow();
    const over = pageRequest('perps_sendCommand', ethOrder('3100', '1'));
    const w = await opened;
    await w
      .getByText(
        /Outside your standing permission for this site: notional 3120.5 USDC is above the 2000 USDC allowed per order/,
      )
      .waitFor();
    await h.screenshot(w, '41-grant-limit-exceeded');
    const closed = w.waitForEvent('close');
    await w.getByRole('button', { name: 'Reject' }).click();
    expect(await over).toMatchObject({ ok: false, code: 4001 });
    // The emptied window closes first: a request sent before it asked to close would be shown in it
    // (the product reuses an open window), and no new window would open for the test to find.
    await closed;
    const opened2 = nextWindow();
    const wd = pageRequest('perps_sendCommand', {
      op: {
        type: 'withdraw',
        args: {
          account: h.sandbox.demo.owner.address,
          token: h.sandbox.ctx.config.usdc,
          amount: '1000000',
          to: h.sandbox.demo.counterparty.address,
        },
      },
    });
    const w2 = await opened2;
    await w2.getByText(/A withdrawal always needs your approval/).waitFor();
    expect(await w2.getByRole('button', { name: 'Allow this site within limits…' }).count()).toBe(0);
    await w2.getByRole('button', { name: 'Reject' }).click();
    expect(await wd).toMatchObject({ ok: false, code: 4001 });
  });

  it('the audit export lists every signature with its origin, and the chain verifies', async () => {
    const r = (await send('audit.export', { format: 'json' })) as {
      result: { text: string; verification: { ok: boolean } };
    };
    const entries = JSON.parse(r.result.text) as { origin: string; summary: string; kind: string; hash: string }[];
    const fromSite = entries.filter((e) => e.origin === h.sandbox.url && e.kind === 'perps.createOrders');
    expect(fromSite.length).toBeGreaterThanOrEqual(51);
    expect(fromSite.filter((e) => e.summary.endsWith('(standing permission)'))).toHaveLength(50);
    expect(r.result.verification.ok).toBe(true);
    await popup.reload();
    await popup.getByRole('tab', { name: 'Audit' }).click();
    await popup.getByText(/Chain verified/).waitFor();
    await popup.getByTestId('audit-entries').locator('li').first().waitFor();
    await h.screenshot(popup, '42-audit-log');
    await popup.getByRole('tab', { name: 'Settings' }).click();
    await popup.getByTestId('grant').waitFor();
    await popup.getByTestId('deadman').waitFor();
    await h.screenshot(popup, '43-permissions');
  });

  it('the panic switch empties both venues, revokes the grant and locks', async () => {
    expect(
      (
        await send('clob.postOrders', {
          account: h.sandbox.demo.owner.address,
          orders: [
            {
              tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0],
              side: 'BUY',
              price: '0.30',
              size: '10',
              orderType: 'GTC',
            },
          ],
        })
      ).ok,
    ).toBe(true);
    expect(openPerps().length).toBeGreaterThanOrEqual(51);
    expect(liveClob().length).toBeGreaterThanOrEqual(1);
    await popup.getByRole('button', { name: 'Panic' }).click();
    await h.screenshot(popup, '44-panic-confirm');
    await popup.getByTestId('panic-confirm').click();
    await popup.getByTestId('panic-report').waitFor();
    await h.screenshot(popup, '45-panic-report');
    expect(openPerps()).toEqual([]);
    expect(liveClob()).toEqual([]);
    expect(((await send('vault.status')) as { result: { unlocked: boolean } }).result.unlocked).toBe(false);
    expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
    expect(((await send('grant.list')) as { result: unknown[] }).result).toEqual([]);
  });
});

/**
 * A site tries to reach past its grant: the connected demo page holds a narrow grant (BTC-PERP only,
 * 2 000 USDC per order, 20 000 per 24 h; or one order-book market) and sends another venue's order, a
 * price far from the mark, a trigger order, a dead-man timer change and a cancel-all. Each request must
 * wait for a window, and nothing may reach the sandbox before the person decides (its request log and
 * order records). A fresh browser session.
 */
describe('a site holding a narrow grant', () => {
  beforeAll(async () => {
    await h?.close();
    ({ h, popup, send, demo, windows: windowCount } = await startDemoSession(PASSWORD));
  }, 60_000);

  /** Trading requests that reached the sandbox (the dead-man's own auto-cancel renewals are not counted). */
  const trading = () =>
    h.sandbox.ctx.requestLog.filter(
      (r) =>
        r.method !== 'GET' &&
        /^\/perps\/v1\/trade\/(orders|orders-coid|orders\/all|leverage|margin)$|^\/clob\/orders?$/.test(r.path),
    ).length;
  const autoCancelZero = () =>
    h.sandbox.ctx.requestLog.filter(
      (r) =>
        r.path === '/perps/v1/trade/auto-cancel' &&
        (JSON.parse(r.body ?? '{}') as { op?: { args?: { time?: number } } }).op?.args?.time === 0,
    ).length;
  const pending = async () =>
    ((await send('approval.list')) as { result: { id: string; flags: string[]; lines: string[] }[] }).result;
  const tokenA = () => h.sandbox.ctx.clob.markets[0]!.tokenIds[0]!;
  const equity = async () =>
    (
      (await send('perps.read', { account: h.sandbox.demo.owner.address, name: 'portfolio' })) as {
        result: { margin: { total_account_value: string } };
      }
    ).result.margin.total_account_value;
  const tenth = (x: string) => (Math.floor(Number(x) * 10) / 100).toString();
  const whole = (x: string) => (Math.floor(Number(x) * 100) / 100).toString();

  it(
    'the offer names the venue and market and proposes caps from the ' +
      'equity; a one-market order-book grant does not cover ETH-PERP',
    async () => {
      // An order-book order's window: the grant is for this market of the order book only.
      const opened = nextWindow();
      const first = pageRequest('clob_postOrders', {
        orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
      });
      const w = await opened;
      const collateral = (Number(h.sandbox.ctx.clob.balanceOf(h.sandbox.demo.owner.address)) / 1e6).toString();
      const proposed = await saveGrantIn(w, { perOrder: '1000', daily: '10000' });
      expect(proposed.scope).toBe(
        `Order book only: Will the sandbox stay up all day? — ` +
          `Yes (token ${tokenA().slice(0, 6)}…${tokenA().slice(-4)})`,
      );
      expect(proposed.equity).toContain(`${collateral} USDC`);
      expect(proposed).toMatchObject({ perOrder: tenth(collateral), daily: whole(collateral) });
      await approveIn(w, { closes: true });
      expect((await first).ok).toBe(true);
      // 0.3 ETH-PERP at 3 100 (930 USDC, inside the order-book grant's caps): it asks, and the flag names the venue.
      const before = trading();
      const opened2 = nextWindow();
      const eth = pageRequest('perps_sendCommand', {
        op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.3', p: '3100', tif: 'gtc', po: true }] },
      });
      const w2 = await opened2;
      await w2
        .getByText(/Outside your standing permission for this site: this permission covers only the order book/)
        .waitFor();
      await h.screenshot(w2, '46-grant-other-venue');
      expect(trading()).toBe(before);
      await w2.getByRole('button', { name: 'Reject' }).click();
      expect(await eth).toMatchObject({ ok: false, code: 4001 });
      expect(trading()).toBe(before);
    },
  );

  it(
    'under a BTC-PERP-only grant: an order-book order, a sell at 1, a stop-market trigger, ' +
      'autoCancel 0 and cancelAll each wait for a window; nothing reaches the sandbox',
    async () => {
      // Start from no grant (the order-book grant of the previous test is revoked).
      for (const g of ((await send('grant.list')) as { result: { id: string }[] }).result)
        await send('grant.revoke', { id: g.id });
      // The person's own ETH order, from the popup.
      const mine = (await send('perps.send', {
        account: h.sandbox.demo.owner.address,
        op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true }] },
      })) as { result: { oid: number }[] };
      const myOid = mine.result[0]!.oid;
      // The BTC-PERP-only grant, from the window of a BTC order; the form proposes caps from the perps equity.
      const value = await equity();
      const opened = nextWindow();
      const first = pageRequest('perps_sendCommand', {
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p: '64000', tif: 'gtc', po: true }] },
      });
      const w = await opened;
      const proposed = await saveGrantIn(w, undefined, '49-grant-form');
      expect(proposed).toMatchObject({
        scope: 'Perps venue only: BTC-PERP (#1)',
        perOrder: tenth(value),
        daily: whole(value),
      });
      await approveIn(w, { closes: true });
      expect((await first).ok).toBe(true);
      // Only the perps grant is live (the site holds no order-book grant).
      await popup.reload();
      await popup.getByRole('tab', { name: 'Settings' }).click();
      await popup.getByTestId('grant-venue').first().waitFor();
      expect(await popup.getByTestId('grant-venue').allTextContents()).toEqual(['perps: BTC-PERP (#1)']);
      await h.screenshot(popup, '47-permissions-venue');

      const before = trading();
      const zeroBefore = autoCancelZero();
      const opened2 = nextWindow();
      const attacks = [
        pageRequest('clob_postOrders', {
          orders: [{ tokenId: tokenA(), side: 'BUY', price: '0.50', size: '3000', orderType: 'GTC' }],
        }),
        pageRequest('perps_sendCommand', {
          op: { type: 'createOrders', args: [{ iid: 1, buy: false, qty: '0.2', p: '1', tif: 'gtc' }] },
        }),
        pageRequest('perps_sendCommand', {
          op: {
            type: 'createOrders',
            args: [{ iid: 1, buy: false, qty: '0.01', tr: { tpsl: 'sl', trp: '64000', market: true } }],
          },
        }),
        pageRequest('perps_sendCommand', { op: { type: 'autoCancel', args: { time: 0 } } }),
        pageRequest('perps_sendCommand', { op: { type: 'cancelAll', args: {} } }),
      ];
      const w2 = await opened2;
      for (let i = 0; i < 200 && (await pending()).length < 5; i++) await w2.waitForTimeout(25);
      const list = await pending();
      expect(list).toHaveLength(5);
      const flags = list.map((x) => x.flags.join(' '));
      expect(flags.filter((f) => f.includes('Outside your standing permission'))).toHaveLength(5);
      expect(flags).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/this permission covers only the perps venue/),
          expect.stringMatching(/price 1 is more than 2% from the mark price 65000/),
          expect.stringMatching(/trigger \(stop \/ take-profit\) orders are not allowed/),
          expect.stringMatching(/Changing the auto-cancel \(dead-man\) timer always needs your approval/),
          expect.stringMatching(
            /Cancelling all orders \(it can reach orders this site did not place\) always needs your approval/,
          ),
        ]),
      );
      await h.screenshot(w2, '48-grant-attack-window');
      expect(trading()).toBe(before);
      expect(autoCancelZero()).toBe(zeroBefore);
      // The person rejects them (after three rejections the site is paused and the rest are refused).
      for (let i = 0; i < 5 && !w2.isClosed() && (await pending()).length; i++) {
        const left = (await pending()).length;
        await w2.bringToFront().catch(() => undefined);
        await w2
          .getByRole('button', { name: 'Reject' })
          .click({ timeout: 5_000 })
          .catch(() => undefined);
        for (let k = 0; k < 100 && (await pending()).length === left; k++) await popup.waitForTimeout(20);
      }
      for (const r of await Promise.all(attacks)) expect(r).toMatchObject({ ok: false, code: 4001 });
      expect(trading()).toBe(before);
      expect(autoCancelZero()).toBe(zeroBefore);
      expect(h.sandbox.ctx.venue.orders.get(myOid)?.status).toBe('open');
      expect(
        [...h.sandbox.ctx.clob.orders.values()].filter(
          (o) =>
            o.address === h.sandbox.demo.owner.address.toLowerCase() &&
            o.status === 'live' &&
            o.originalSize === 3_000_000_000n,
        ),
      ).toEqual([]);
    },
  );
});
