/**
 * A profile whose stored settings name a service in clear (an older profile, a restored backup), in real
 * Chromium with the popup at 360 × 600: Settings says Countersign will not use that URL, says what may
 * have travelled in clear, and once the person fixed the URL offers the rotation — new order-book API
 * credentials, the old key deleted at the exchange — and clears the notice only when the person says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, messenger, onboardDemo, type Harness } from './harness';

let h: Harness;
let popup: Page;

/** The demo owner's API keys the sandbox's exchange knows. */
const apiKeys = () =>
  [...h.sandbox.ctx.clob.creds.values()]
    .filter((c) => c.address.toLowerCase() === h.sandbox.demo.owner.address.toLowerCase())
    .map((c) => c.apiKey);

beforeAll(async () => {
  h = await launchHarness();
  ({ popup } = await onboardDemo(h, 'correct horse battery staple', { clob: true }));
  // What an older profile holds: the order-book URL in clear, written straight into the vault database.
  await popup.evaluate(
    (url) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('countersign-vault');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('settings', 'readwrite');
          const store = tx.objectStore('settings');
          const get = store.get('prefs');
          get.onsuccess = () => {
            const prefs = get.result as { version: number; values: Record<string, unknown> };
            store.put({ ...prefs, values: { ...prefs.values, clobUrl: url } }, 'prefs');
          };
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        };
      }),
    'http://gateway.example/clob',
  );
  await popup.setViewportSize({ width: 360, height: 600 });
  await popup.reload();
});
afterAll(async () => {
  await h?.close();
});

describe('a service once named in clear (Chromium)', () => {
  it(
    'Settings refuses the URL, names what may have travelled, ' +
      'and the person rotates the credentials and clears the notice',
    async () => {
      await popup.getByRole('tab', { name: 'Settings' }).click();
      await popup.getByTestId('insecure-settings').waitFor();
      expect(await popup.getByTestId('insecure-settings').innerText()).toContain('http://gateway.example/clob');
      expect(await popup.getByTestId('cleartext-uses').innerText()).toContain(
        'order-book API key, secret and passphrase',
      );
      await h.screenshot(popup, 'settings-cleartext');

      // The person puts the order book back on its own URL and saves: the refusal is gone, the notice stays.
      await popup.locator('input[name="clobUrl"]').fill(`${h.sandbox.url}/clob`);
      await popup.getByRole('button', { name: 'Save', exact: true }).click();
      await popup.getByText('Settings saved').waitFor();
      expect(await popup.getByTestId('insecure-settings').count()).toBe(0);
      expect(await popup.getByTestId('cleartext-uses').count()).toBe(1);

      const before = apiKeys();
      expect(before).toHaveLength(1);
      await popup.getByRole('button', { name: 'Replace the order-book API credentials' }).click();
      await popup.getByText(/New order-book API credentials for 1 account/).waitFor();
      const after = apiKeys();
      expect(after).toHaveLength(1);
      expect(after[0]).not.toBe(before[0]);
      // The new credentials sign: the account's open orders read through them.
      expect((await messenger(popup)('clob.openOrders', { account: h.sandbox.demo.owner.address })).ok).toBe(true);

      await popup.getByRole('button', { name: 'Done: clear this notice' }).click();
      await popup.getByTestId('cleartext-uses').waitFor({ state: 'detached' });
      await popup.reload();
      await popup.getByRole('tab', { name: 'Settings' }).click();
      await popup.getByTestId('presets').waitFor();
      expect(await popup.getByTestId('transport-notices').count()).toBe(0);
    },
  );
});
