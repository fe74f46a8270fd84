/**
 * The Chrome release zip, unzipped and loaded in real Chromium (not `.output/`): at first run it holds no
 * loopback access and asks for the venue, offering only the venue's https setups; choosing one asks for
 * exactly its hosts. A release sends nothing in clear, loopback included: the Sandbox preset (plain http
 * on 127.0.0.1) is refused. With every service of the sandbox behind an https / wss front (a custom
 * setup, as a person types it in Settings), the onboarding (password, owner key, proxy key) and one order
 * a page asks for and the person approves in the approval window go through to the sandbox, which
 * verifies the order.
 *
 * The sandbox runs at the Sandbox preset's address (127.0.0.1:8787, as `npm start`) behind the front
 * (`https-front.ts`), which also serves the demo page (a release injects the provider only into https
 * pages). Headless Chromium cannot show the permission prompt, so the test gives the site access the way
 * the person can on chrome://extensions (Site access → add a site) before the click that requests it;
 * `permissions.request` then resolves true without a prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { decideNext, launchHarness, messenger, type Harness } from '../e2e/harness';
import { frontSetup, startHttpsFront, type HttpsFront } from './https-front';
import { hostOrigins } from '../../lib/settings/hosts';
import { presetById } from '../../lib/settings/presets';
import { artifact, ensureRelease, unzipFresh } from './artifacts';

const PASSWORD = 'correct horse battery staple';
let dir: string;
let h: Harness;
let front: HttpsFront;
let popup: Page;

declare const chrome: {
  permissions: { contains: (p: { origins: string[] }) => Promise<boolean> };
  developerPrivate: { addHostPermission: (id: string, host: string) => Promise<void> };
};

/**
 * Gives the extension site access to `origins` as a person can on chrome://extensions (headless Chromium shows no
 * prompt).
 */
async function grantSites(origins: string[]): Promise<void> {
  const settings = await h.ctx.newPage();
  await settings.goto('chrome://extensions');
  for (const origin of origins)
    await settings.evaluate(([id, o]) => chrome.developerPrivate.addHostPermission(id, o), [
      h.extensionId,
      origin,
    ] as const);
  await settings.close();
}

/**
 * Asks the browser for `origins` from a click in the extension page `page`, as Settings' Save does (the
 * browser grants only during a click; the site access `grantSites` gave makes it answer without a prompt).
 */
async function requestFromClick(page: Page, origins: string[]): Promise<boolean> {
  await page.evaluate((o) => {
    const b = document.createElement('button');
    b.id = 'grant-for-test';
    b.textContent = 'grant';
    b.onclick = () =>
      void (
        globalThis as unknown as {
          chrome: { permissions: { request: (p: { origins: string[] }) => Promise<boolean> } };
        }
      ).chrome.permissions
        .request({ origins: o })
        .then((granted) => b.setAttribute('data-granted', String(granted)));
    document.body.append(b);
  }, origins);
  await page.click('#grant-for-test');
  await page.waitForSelector('#grant-for-test[data-granted]');
  const granted = await page.evaluate(
    () => document.getElementById('grant-for-test')?.getAttribute('data-granted') === 'true',
  );
  await page.evaluate(() => document.getElementById('grant-for-test')?.remove());
  return granted;
}

const last = (demo: Page, label: string) =>
  demo
    .waitForFunction((l) => (window as unknown as { __last?: { label: string } }).__last?.label === l, label, {
      timeout: 30_000,
    })
    .then(() =>
      demo.evaluate(() => (window as unknown as { __last: { ok: boolean; value?: unknown; message?: string } }).__last),
    );

beforeAll(async () => {
  ensureRelease();
  dir = unzipFresh(artifact('chrome'), 'countersign-chrome-release-');
  h = await launchHarness(
    {},
    { extensionDir: dir, sandboxPort: 8787, pointAtSandbox: false, args: ['--ignore-certificate-errors'] },
  );
  front = await startHttpsFront(h.sandbox.url);
}, 300_000);
afterAll(async () => {
  await h?.close();
  await front?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Chrome release zip in real Chromium', () => {
  it('holds no loopback access at install and asks for the venue at first run', async () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { host_permissions?: string[] };
    expect(manifest.host_permissions ?? []).toEqual([]);
    popup = await h.openPopup();
    await popup.getByTestId('venue-step').waitFor();
    expect(await popup.evaluate(() => chrome.permissions.contains({ origins: ['http://127.0.0.1/*'] }))).toBe(false);
    expect(await popup.getByRole('radio').count()).toBe(2);
    expect(await popup.locator('input[name="venue"][value="sandbox"]').count()).toBe(0);
    expect(await popup.getByRole('button', { name: 'Continue' }).isDisabled()).toBe(true);
    expect(
      ((await messenger(popup)('vault.create', { password: PASSWORD })) as { ok: boolean; error?: { name: string } })
        .error?.name,
    ).toBe('Settings.VenueNotChosenError');
  });

  it(
    "choosing the venue's pre-production asks for its hosts " +
      "and stores it; the Sandbox preset's plain http is refused",
    async () => {
      const preproduction = presetById('preproduction');
      if (!preproduction) throw new Error('no preproduction preset');
      await grantSites(hostOrigins(preproduction.values));
      await popup.locator('input[name="venue"][value="preproduction"]').check();
      await popup.getByRole('button', { name: 'Continue' }).click();
      await popup.locator('input[name="new-password"]').waitFor();
      const s = (await messenger(popup)('settings.get')) as {
        ok: boolean;
        result: { settings: { preset: string; venueChosen: boolean } };
      };
      expect(s.result.settings).toMatchObject({ preset: 'preproduction', venueChosen: true });
      const sandbox = (await messenger(popup)('settings.set', { preset: 'sandbox' })) as {
        ok: boolean;
        error?: { name: string };
      };
      expect(sandbox.error?.name).toBe('Http.InsecureTransportError');
      // Every service of the sandbox behind the https / wss front: a custom setup on this machine's loopback.
      await grantSites(['https://127.0.0.1/*']);
      expect(await requestFromClick(popup, ['https://127.0.0.1/*'])).toBe(true);
      const custom = (await messenger(popup)('settings.set', frontSetup(front))) as { ok: boolean; error?: unknown };
      expect(custom.ok, JSON.stringify(custom.error)).toBe(true);
    },
  );

  it('onboards in the popup: password, owner key, proxy key', async () => {
    await popup.locator('input[name="new-password"]').fill(PASSWORD);
    await popup.locator('input[name="confirm-password"]').fill(PASSWORD);
    await popup.getByRole('button', { name: 'Create vault' }).click();
    await popup.locator('input[name="owner-key"]').fill(h.sandbox.demo.owner.privateKey);
    await popup.getByRole('button', { name: 'Import key' }).click();
    await popup.getByRole('heading', { name: 'Trading key for perps' }).waitFor();
    await popup.getByRole('button', { name: 'Issue proxy key' }).click();
    await popup.getByRole('heading', { name: 'Order-book credentials' }).waitFor();
    await popup.getByRole('button', { name: 'Skip' }).click();
    await popup.getByRole('button', { name: 'Start trading' }).click();
    const status = (await messenger(popup)('vault.status')) as {
      result: { unlocked: boolean; activeAccount: string; accounts: { proxies: unknown[] }[] };
    };
    expect(status.result).toMatchObject({ unlocked: true, activeAccount: h.sandbox.demo.owner.address });
    expect(status.result.accounts[0]?.proxies.length).toBe(1);
  });

  it(
    "approves an https page's connection and order in " + 'the approval window; the sandbox verifies the order',
    async () => {
      const demo = await h.ctx.newPage();
      await demo.goto(`${front.url}/demo`);
      await demo.getByText('Found Countersign').first().waitFor();
      await demo.click('#connect');
      await decideNext(h.ctx, 'approve');
      expect((await last(demo, 'connect')).ok).toBe(true);
      const placed = () =>
        h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
      const before = placed();
      await demo.bringToFront();
      await demo.click('#order');
      await decideNext(h.ctx, 'approve');
      const r = await last(demo, 'order');
      expect(r.ok, r.message).toBe(true);
      expect(placed() - before).toBe(1);
    },
  );
});
