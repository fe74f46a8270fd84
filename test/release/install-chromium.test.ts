/**
 * The Chrome release zip, unzipped and loaded in real Chromium (not `.output/`): at first run it holds no
 * loopback access and asks for the venue; choosing the sandbox asks for loopback only, and then the
 * onboarding (password, owner key, proxy key) and one order a page asks for and the person approves in
 * the approval window go through to the sandbox, which verifies the order.
 *
 * The sandbox runs at the Sandbox preset's address (127.0.0.1:8787, as `npm start`); the demo page is
 * served over https (`https-front.ts`: a release injects the provider only into https pages). Headless
 * Chromium cannot show the permission prompt, so the test gives the loopback site access the way the
 * person can on chrome://extensions (Site access → add a site) before the click that requests it;
 * `permissions.request` then resolves true without a prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { decideNext, launchHarness, messenger, type Harness } from '../e2e/harness';
import { startHttpsFront, type HttpsFront } from './https-front';
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

const last = (demo: Page, label: string) =>
  demo.waitForFunction((l) => (window as unknown as { __last?: { label: string } }).__last?.label === l, label, { timeout: 30_000 }).then(() =>
    demo.evaluate(() => (window as unknown as { __last: { ok: boolean; value?: unknown; message?: string } }).__last),
  );

beforeAll(async () => {
  ensureRelease();
  dir = unzipFresh(artifact('chrome'), 'countersign-chrome-release-');
  h = await launchHarness({}, { extensionDir: dir, sandboxPort: 8787, pointAtSandbox: false, args: ['--ignore-certificate-errors'] });
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
    expect(await popup.getByRole('radio').count()).toBe(3);
    expect(await popup.getByRole('button', { name: 'Continue' }).isDisabled()).toBe(true);
  });

  it('choosing the sandbox asks for loopback and stores the Sandbox preset', async () => {
    const settings = await h.ctx.newPage();
    await settings.goto('chrome://extensions');
    await settings.evaluate((id) => chrome.developerPrivate.addHostPermission(id, 'http://127.0.0.1/*'), h.extensionId);
    await settings.close();
    await popup.locator('input[name="venue"][value="sandbox"]').check();
    await popup.getByRole('button', { name: 'Continue' }).click();
    await popup.locator('input[name="new-password"]').waitFor();
    const s = (await messenger(popup)('settings.get')) as { ok: boolean; result: { settings: { preset: string; perpsUrl: string } } };
    expect(s.result.settings).toMatchObject({ preset: 'sandbox', perpsUrl: 'http://127.0.0.1:8787/perps' });
  });

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
    const status = (await messenger(popup)('vault.status')) as { result: { unlocked: boolean; activeAccount: string; accounts: { proxies: unknown[] }[] } };
    expect(status.result).toMatchObject({ unlocked: true, activeAccount: h.sandbox.demo.owner.address });
    expect(status.result.accounts[0]?.proxies.length).toBe(1);
  });

  it("approves an https page's connection and order in the approval window; the sandbox verifies the order", async () => {
    const demo = await h.ctx.newPage();
    await demo.goto(`${front.url}/demo`);
    await demo.getByText('Found Countersign').first().waitFor();
    await demo.click('#connect');
    await decideNext(h.ctx, 'approve');
    expect((await last(demo, 'connect')).ok).toBe(true);
    const placed = () => h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
    const before = placed();
    await demo.bringToFront();
    await demo.click('#order');
    await decideNext(h.ctx, 'approve');
    const r = await last(demo, 'order');
    expect(r.ok, r.message).toBe(true);
    expect(placed() - before).toBe(1);
  });
});
