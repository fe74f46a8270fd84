/**
 * The trading session in real Chromium ("A grant outlives auto-lock, the owner key does
 * not"): with a standing grant live, auto-lock seals the owner key but keeps the grant's keys. The popup
 * (360 × 600) shows "Trading session: <site>, <time left>" on its unlock screen with Panic and "End
 * session and lock"; the granted site keeps trading inside its limits without a window; anything else
 * is refused (4900) without a window; "End session and lock" ends the grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { grantInWindow, startDemoSession, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
let windows: () => number = () => 0;
let send: Awaited<ReturnType<typeof startDemoSession>>['send'];
type Provider = { request: (a: unknown) => Promise<unknown> };
const pageRequest = (method: string, params?: unknown) =>
  demo.evaluate(
    ([m, p]) =>
      (window as unknown as { countersign: Provider }).countersign
        .request({ method: m, ...(p === undefined ? {} : { params: p }) })
        .then(
          (r) => ({ ok: true, r }),
          (e: { code: number }) => ({ ok: false, code: e.code }),
        ),
    [method, params] as const,
  ) as Promise<{ ok: boolean; r?: unknown; code?: number }>;
const ethOrder = (price: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: price, tif: 'gtc', po: true }] },
});
const state = async () => ((await send('vault.status')).result as { state: string }).state;
const accepted = () =>
  h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;

beforeAll(async () => {
  ({ h, popup, send, demo, windows } = await startDemoSession(PASSWORD));
});
afterAll(async () => {
  await h?.close();
});

describe('trading session in Chromium', () => {
  it(
    'auto-lock with a live grant: the popup shows the session, the ' +
      'site trades inside it, the rest is refused, End session locks',
    async () => {
      await grantInWindow(h, demo, 'perps_sendCommand', ethOrder('3100'));

      // Auto-lock fires (the alarm, as the browser would fire it).
      await h.worker.evaluate(() =>
        (
          globalThis as unknown as { chrome: { alarms: { create: (n: string, o: object) => void } } }
        ).chrome.alarms.create('autolock', { when: Date.now() + 50 }),
      );
      await expect.poll(state, { timeout: 10_000 }).toBe('session');

      await popup.reload();
      const banner = popup.getByTestId('trading-session');
      await banner.waitFor();
      expect(await banner.textContent()).toMatch(
        /Trading session:.*(127\.0\.0\.1|localhost).*\d+ (h|min|s).* left.*owner key is locked/,
      );
      await expect.poll(() => popup.getByRole('button', { name: 'End session and lock' }).isVisible()).toBe(true);
      expect(await popup.getByRole('button', { name: 'Panic' }).isVisible()).toBe(true);
      await h.screenshot(popup, '60-trading-session');

      // Inside the grant: signed without a window and verified by the sandbox.
      const before = accepted();
      const shown = windows();
      expect((await pageRequest('perps_sendCommand', ethOrder('3099.5'))).ok).toBe(true);
      expect(accepted() - before).toBe(1);
      // Outside it (another venue, a withdrawal): refused with 4900, no window, nothing sent.
      const tokenId = h.sandbox.ctx.clob.markets[0]!.tokenIds[0];
      expect(
        await pageRequest('clob_postOrders', {
          orders: [{ tokenId, side: 'BUY', price: '0.31', size: '10', orderType: 'GTC' }],
        }),
      ).toMatchObject({ ok: false, code: 4900 });
      expect(
        await pageRequest('perps_sendCommand', {
          op: {
            type: 'withdraw',
            args: {
              account: h.sandbox.demo.owner.address,
              token: h.sandbox.ctx.config.usdc,
              amount: '1',
              to: h.sandbox.demo.owner.address,
            },
          },
        }),
      ).toMatchObject({ ok: false, code: 4900 });
      expect(windows()).toBe(shown);
      expect(accepted() - before).toBe(1);

      // End session and lock: fully locked; after the password, no grant is left.
      await popup.getByRole('button', { name: 'End session and lock' }).click();
      await expect.poll(state, { timeout: 10_000 }).toBe('locked');
      expect((await pageRequest('perps_sendCommand', ethOrder('3099'))).ok).toBe(false);
      expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
      expect((await send('grant.list')).result).toEqual([]);
    },
  );
});
