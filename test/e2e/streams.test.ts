/**
 * Issue #22 in real Chromium: with the popup open, the background's perps stream is live (the header
 * says so), and an order placed, cancelled and filled at the sandbox from outside the popup shows in
 * it without the popup reading the account over REST (the sandbox's request log counts the reads).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { cancelOrders, createOrders, type PerpsCommand } from '../../lib/perps/commands';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { sendPerpsCommand } from '../../lib/perps/client';
import { launchHarness, onboardDemo, type Harness } from './harness';

let h: Harness;
let popup: Page;

/** Sends `command` for the demo account straight to the sandbox (not through the extension). */
async function outside(command: PerpsCommand): Promise<unknown> {
  const proxy = privateKeyToAccount(h.sandbox.demo.proxy.privateKey);
  const envelope = await signPerpsCommand(proxy, { command, domain: h.sandbox.ctx.config.perpsDomain, nowMs: Date.now() });
  return sendPerpsCommand(`${h.sandbox.url}/perps`, command, envelope);
}
const accountReads = () => h.sandbox.ctx.requestLog.filter((r) => r.method === 'GET' && /\/v1\/account\/(open-orders|portfolio|orders)/.test(r.path)).length;

beforeAll(async () => {
  h = await launchHarness();
  ({ popup } = await onboardDemo(h, 'correct horse battery staple'));
  await popup.reload();
  await popup.locator('input[name="qty"]').waitFor();
});
afterAll(async () => {
  await h?.close();
});

describe('issue #22: the popup fed by the stream (Chromium)', () => {
  it('says live, and shows an order resting, cancelled and a fill without reading the account over REST', async () => {
    await popup.getByRole('status').filter({ hasText: /^live$/ }).waitFor({ timeout: 10_000 });
    // The stream's start-up resync is done; from here the popup must not read the account.
    await new Promise((r) => setTimeout(r, 500));
    h.sandbox.ctx.requestLog.length = 0;
    const best = Number(h.sandbox.ctx.venue.levels(1).bids[0]?.[0]);
    const [ack] = (await outside(createOrders({ orders: [{ iid: 1, buy: true, p: String(best - 500), qty: '0.001', tif: 'gtc' }] }))) as { oid: number }[];
    await popup.locator(`[data-oid="${ack?.oid}"]`).waitFor({ timeout: 1_500 });
    await outside(cancelOrders({ oids: [Number(ack?.oid)] }));
    await popup.locator(`[data-oid="${ack?.oid}"]`).waitFor({ state: 'detached', timeout: 1_500 });
    await outside(createOrders({ orders: [{ iid: 1, buy: true, p: String(Math.round(best * 1.05)), qty: '0.002', tif: 'ioc' }] }));
    await popup.getByTestId('risk-position').filter({ hasText: '0.002' }).first().waitFor({ timeout: 1_500 });
    expect(accountReads()).toBe(0);
    await h.screenshot(popup, 'streams-live');
  });
});
