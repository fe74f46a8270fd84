/**
 * Standing grants, the panic switch, the dead-man timer and the audit log in real Chromium against the
 * sandbox (issue #11): a site trades 50 orders inside a grant without a window and the sandbox verifies
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
    ([m, p]) => (window as unknown as { countersign: Provider }).countersign.request({ method: m, ...(p === undefined ? {} : { params: p }) }).then((r) => ({ ok: true, r }), (e: { code: number; message: string }) => ({ ok: false, code: e.code, message: e.message })),
    [method, params] as const,
  ) as Promise<{ ok: boolean; r?: unknown; code?: number; message?: string }>;
const nextWindow = () => h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
async function approveIn(w: Page) {
  await w.bringToFront();
  await w.waitForFunction(() => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled, undefined, { timeout: 5_000 });
  await w.getByTestId('approve').click();
}
const owner = () => h.sandbox.demo.owner.address.toLowerCase();
const openPerps = () => [...h.sandbox.ctx.venue.orders.values()].filter((o) => o.owner === owner() && (o.status === 'open' || o.status === 'untriggered'));
const liveClob = () => [...h.sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner() && o.status === 'live');
/** Sends an order whose approval window offers a grant; saves the default limits and approves. */
async function grantViaWindow(price: string): Promise<void> {
  const opened = nextWindow();
  const first = pageRequest('perps_sendCommand', ethOrder(price));
  const w = await opened;
  await w.getByRole('button', { name: 'Allow this site within limits…' }).click();
  await w.getByRole('button', { name: 'Save permission' }).click();
  await w.getByText(/Saved for 8 h/).waitFor();
  await h.screenshot(w, '40-grant-offer');
  await approveIn(w);
  expect((await first).ok).toBe(true);
}
const ethOrder = (price: string, qty = '0.1') => ({ op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty, p: price, tif: 'gtc', po: true }] } });

beforeAll(async () => {
  ({ h, popup, send, demo, windows: windowCount } = await startDemoSession(PASSWORD));
});
afterAll(async () => {
  await h?.close();
});

describe('standing grants in Chromium', () => {
  it('offered from the approval window; then 50 orders inside the grant are signed without a window and verified by the sandbox', async () => {
    await grantViaWindow('3100');
    const badge = await h.worker.evaluate(() => (globalThis as unknown as { chrome: { action: { getBadgeText: (o: object) => Promise<string> } } }).chrome.action.getBadgeText({}));
    expect(badge).toBe('ON');

    const windowsBefore = windowCount();
    const accepted = () => h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
    const before = accepted();
    const results = await demo.evaluate(async () => {
      const p = (window as unknown as { countersign: Provider }).countersign;
      const out: boolean[] = [];
      for (let i = 0; i < 50; i++) {
        const r = await p.request({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: (3100 - i * 0.05).toFixed(2), tif: 'gtc', po: true }] } } }).then(() => true, () => false);
        out.push(r);
      }
      return out;
    });
    expect(results.every(Boolean)).toBe(true);
    expect(windowCount()).toBe(windowsBefore);
    expect(accepted() - before).toBe(50);
  });

  it('an order over a limit opens a window that names the limit; a withdrawal under the grant still asks', async () => {
    const opened = nextWindow();
    const over = pageRequest('perps_sendCommand', ethOrder('3100', '1'));
    const w = await opened;
    await w.getByText(/Outside your standing permission for this site: notional 3100 USDC is above the 2000 USDC allowed per order/).waitFor();
    await h.screenshot(w, '41-grant-limit-exceeded');
    await w.getByRole('button', { name: 'Reject' }).click();
    expect(await over).toMatchObject({ ok: false, code: 4001 });
    const opened2 = nextWindow();
    const wd = pageRequest('perps_sendCommand', { op: { type: 'withdraw', args: { account: h.sandbox.demo.owner.address, token: h.sandbox.ctx.config.usdc, amount: '1000000', to: h.sandbox.demo.counterparty.address } } });
    const w2 = await opened2;
    await w2.getByText(/A withdrawal always needs your approval/).waitFor();
    expect(await w2.getByRole('button', { name: 'Allow this site within limits…' }).count()).toBe(0);
    await w2.getByRole('button', { name: 'Reject' }).click();
    expect(await wd).toMatchObject({ ok: false, code: 4001 });
  });

  it('the audit export lists every signature with its origin, and the chain verifies', async () => {
    const r = (await send('audit.export', { format: 'json' })) as { result: { text: string; verification: { ok: boolean } } };
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
    expect((await send('clob.postOrders', { account: h.sandbox.demo.owner.address, orders: [{ tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' }] })).ok).toBe(true);
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
