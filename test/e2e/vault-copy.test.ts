/**
 * A vault the browser lost, in real Chromium with the popup at 360 × 600: the vault's IndexedDB database
 * is deleted while the worker is stopped (what a browser does to a database it finds damaged after a
 * disk-full error). The popup offers unlock, never onboarding, says the copy will restore the vault, and
 * the person's password brings back every key they were told was saved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, messenger, onboardDemo, type Harness } from './harness';
import { DB_NAME } from '../../lib/vault/db';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let popup: Page;

beforeAll(async () => {
  h = await launchHarness();
  ({ popup } = await onboardDemo(h, PASSWORD, { clob: true }));
  expect((await messenger(popup)('vault.lock')).ok).toBe(true);
  await popup.close();
});
afterAll(async () => {
  await h?.close();
});

describe('a lost vault (Chromium)', () => {
  it('the popup offers unlock, not onboarding, and the password restores every key from the copy', async () => {
    // An extension page that does not wake the worker, to delete the vault's database once the worker is stopped.
    const page = await h.ctx.newPage();
    await page.goto(`chrome-extension://${h.extensionId}/manifest.json`);
    const cdp = await h.ctx.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    const deleted = await page.evaluate(
      (name) =>
        new Promise<string>((resolve) => {
          const r = indexedDB.deleteDatabase(name);
          r.onsuccess = () => resolve('deleted');
          r.onerror = () => resolve('error');
          r.onblocked = () => undefined; // the stopped worker's connection closes, then it succeeds
        }),
      DB_NAME,
    );
    expect(deleted).toBe('deleted');
    await page.close();

    popup = await h.openPopup();
    await popup.setViewportSize({ width: 360, height: 600 });
    await popup.getByTestId('vault-recoverable').waitFor();
    expect(await popup.locator('input[name="new-password"]').count()).toBe(0);
    await h.screenshot(popup, 'unlock-recoverable');
    await popup.locator('input[name="password"]').fill(PASSWORD);
    await popup.getByRole('button', { name: 'Unlock' }).click();
    await popup.getByRole('tab', { name: 'Settings' }).waitFor();
    const status = (await messenger(popup)('vault.status')) as {
      result: {
        unlocked: boolean;
        recoverable: boolean;
        activeAccount: string;
        accounts: { address: string; proxies: unknown[]; hasClobCredentials: boolean }[];
      };
    };
    expect(status.result).toMatchObject({
      unlocked: true,
      recoverable: false,
      activeAccount: h.sandbox.demo.owner.address,
    });
    expect(status.result.accounts).toHaveLength(1);
    expect(status.result.accounts[0]).toMatchObject({
      address: h.sandbox.demo.owner.address,
      hasClobCredentials: true,
    });
    expect(status.result.accounts[0]?.proxies).toHaveLength(1);
  });
});
