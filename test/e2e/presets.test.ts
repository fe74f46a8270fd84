/**
 * Venue presets in real Chromium (popup at 360 × 600): picking Sandbox fills every service
 * and the connection check shows each one ok; a custom setup with the venue's header names and pinned
 * domain against a sandbox that speaks them checks ok and signs an order; a pinned domain the gateway
 * does not report shows as the perps gateway's error and refuses to sign — nothing reaches the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { launchHarness, messenger, onboardDemo, type Harness } from './harness';

let h: Harness;
let popup: Page;
let send: ReturnType<typeof messenger>;
/** The sandbox at the Sandbox preset's fixed address (127.0.0.1:8787), as `npm start` runs it. */
let fixed: RunningSandbox;

const order = () => ({
  account: h.sandbox.demo.owner.address,
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc' }] },
});
const perpsCommands = () =>
  h.sandbox.ctx.requestLog.filter((r) => r.method !== 'GET' && r.path.startsWith('/perps/v1/trade')).length;

async function openSettings(): Promise<void> {
  await popup.getByRole('tab', { name: 'Settings' }).click();
  await popup.getByTestId('presets').waitFor();
}

beforeAll(async () => {
  fixed = await startSandbox(8787);
  h = await launchHarness();
  ({ popup, send } = await onboardDemo(h, 'correct horse battery staple'));
  await popup.setViewportSize({ width: 360, height: 600 });
  await popup.reload();
});
afterAll(async () => {
  await h?.close();
  await fixed?.close();
});

describe('venue presets (Chromium)', () => {
  it('picking Sandbox fills every service and the check shows each one ok', async () => {
    await openSettings();
    await popup.locator('select[name="preset"]').selectOption('sandbox');
    const check = popup.getByTestId('connection-check');
    await check.locator('li').nth(9).waitFor({ timeout: 15_000 });
    expect(await check.locator('li[data-ok="false"]').allTextContents()).toEqual([]);
    expect(await check.locator('li[data-ok="true"]').count()).toBe(10);
    expect(await popup.locator('input[name="perpsWsUrl"]').inputValue()).toBe('ws://127.0.0.1:8787/perps/v1/ws');
    expect(await popup.locator('input[name="bridgeUrl"]').inputValue()).toBe('http://127.0.0.1:8787/bridge');
    expect(await popup.getByTestId('preset-untested').count()).toBe(0);
    await h.screenshot(popup, 'presets-sandbox');
  });

  it('a custom setup with the venue header names and pinned domain checks ok and signs an order', async () => {
    const b = h.sandbox.url;
    const ws = b.replace(/^http/, 'ws');
    const set = await send('settings.set', {
      preset: 'custom',
      perpsUrl: `${b}/perps`,
      perpsWsUrl: `${ws}/perps/v1/ws`,
      clobUrl: `${b}/clob`,
      clobWsUrl: `${ws}/clob/ws`,
      gammaUrl: `${b}/gamma`,
      dataUrl: `${b}/data`,
      relayerUrl: `${b}/relayer`,
      rpcUrl: `${b}/rpc`,
      bridgeUrl: `${b}/bridge`,
      headerSet: 'venue',
      clobChainId: 80002,
      perpsDomain: { name: 'Polymarket', version: '1' },
    });
    expect(set.ok).toBe(true);
    await popup.reload();
    await openSettings();
    expect(await popup.locator('select[name="preset"]').inputValue()).toBe('custom');
    await popup.getByRole('button', { name: 'Check connections' }).click();
    const check = popup.getByTestId('connection-check');
    await check.locator('li').nth(9).waitFor({ timeout: 15_000 });
    expect(await check.locator('li[data-ok="false"]').allTextContents()).toEqual([]);
    const before = perpsCommands();
    const r = await send('perps.send', order());
    expect(r).toMatchObject({ ok: true });
    expect(perpsCommands()).toBe(before + 1);
  });

  it('a pinned domain the gateway does not report: the check names both and nothing is signed or sent', async () => {
    expect((await send('settings.set', { perpsDomain: { name: 'Countersign Sandbox', version: '1' } })).ok).toBe(true);
    await popup.reload();
    await openSettings();
    await popup.getByRole('button', { name: 'Check connections' }).click();
    const perps = popup.getByTestId('check-perps');
    await perps.waitFor({ timeout: 15_000 });
    expect(await perps.getAttribute('data-ok')).toBe('false');
    expect(await perps.textContent()).toMatch(/"Polymarket".*"Countersign Sandbox"/);
    const before = perpsCommands();
    const r = await send('perps.send', order());
    expect(r).toMatchObject({ ok: false, error: { name: 'Settings.PerpsDomainMismatchError' } });
    expect(perpsCommands()).toBe(before);
    await h.screenshot(popup, 'presets-domain-mismatch');
  });
});
