/**
 * The Firefox release zip, installed as it is (the zip file itself, not `.output/`) in real Firefox ESR:
 * at first run it holds no loopback access and asks for the venue; choosing the sandbox asks for loopback,
 * then the onboarding (password, owner key, proxy key) and one order an https page asks for and the
 * person approves in the approval window go through to the sandbox, which verifies it.
 *
 * The sandbox runs at the Sandbox preset's address (127.0.0.1:8787); the demo page is served over https
 * (`https-front.ts`). Firefox is told to grant optional permissions without a prompt
 * (`extensions.webextOptionalPermissionPrompts`: headless Firefox cannot show one) — the request is still
 * made, from the click, and the grant is checked after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { approveWindow, pageAt } from '../firefox/pages';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { startHttpsFront, type HttpsFront } from './https-front';
import { artifact, ensureRelease } from './artifacts';

const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((p) => existsSync(p));
const PASSWORD = 'correct horse battery staple';

let browser: Browser;
let sandbox: RunningSandbox;
let front: HttpsFront;
let profile: string;
let ext: Page;

declare const chrome: {
  runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean; result?: unknown; error?: unknown }> };
  permissions: { contains: (p: { origins: string[] }) => Promise<boolean> };
};
const send = (type: string, payload: unknown = {}) => ext.evaluate((t, p) => chrome.runtime.sendMessage({ type: t, payload: p }), type, payload);
const loopbackGranted = () => ext.evaluate(() => chrome.permissions.contains({ origins: ['http://127.0.0.1/*'] }));
const click = (p: Page, text: string) => p.locator(`::-p-text(${text})`).click();


// In CI the Firefox flow must run (CI installs firefox-esr); elsewhere it is skipped when Firefox is missing.
describe.runIf(!!FIREFOX || !!process.env.CI)('the Firefox release zip in real Firefox ESR', () => {
  beforeAll(async () => {
    ensureRelease();
    sandbox = await startSandbox(8787);
    front = await startHttpsFront(sandbox.url);
    profile = mkdtempSync(join(tmpdir(), 'countersign-firefox-release-'));
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX!,
      headless: true,
      userDataDir: profile,
      acceptInsecureCerts: true,
      extraPrefsFirefox: { 'extensions.webextOptionalPermissionPrompts': false },
    });
    await browser.installExtension(artifact('firefox'));
    ext = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.includes('/popup.html'));
  }, 300_000);
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await front?.close();
    await sandbox?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('holds no loopback access at install and asks for the venue at first run', async () => {
    await ext.waitForSelector('[data-testid="venue-step"]');
    expect(await loopbackGranted()).toBe(false);
  });

  it('choosing the sandbox asks for loopback and stores the Sandbox preset', async () => {
    await ext.click('input[name="venue"][value="sandbox"]');
    await click(ext, 'Continue');
    await ext.waitForSelector('input[name="new-password"]');
    expect(await loopbackGranted()).toBe(true);
    const s = (await send('settings.get')) as { result: { settings: { preset: string; perpsUrl: string } } };
    expect(s.result.settings).toMatchObject({ preset: 'sandbox', perpsUrl: 'http://127.0.0.1:8787/perps' });
  });

  it('onboards in the first-install tab: password, owner key, proxy key', async () => {
    await ext.type('input[name="new-password"]', PASSWORD);
    await ext.type('input[name="confirm-password"]', PASSWORD);
    await click(ext, 'Create vault');
    await ext.waitForSelector('input[name="owner-key"]');
    await ext.type('input[name="owner-key"]', sandbox.demo.owner.privateKey);
    await click(ext, 'Import key');
    await ext.waitForFunction(() => document.body.innerText.includes('Trading key for perps'), { timeout: 15_000 });
    await click(ext, 'Issue proxy key');
    await ext.waitForFunction(() => document.body.innerText.includes('Order-book credentials'), { timeout: 15_000 });
    await click(ext, 'Skip');
    await click(ext, 'Start trading');
    const status = (await send('vault.status')) as { result: { unlocked: boolean; activeAccount: string; accounts: { proxies: unknown[] }[] } };
    expect(status.result).toMatchObject({ unlocked: true, activeAccount: sandbox.demo.owner.address });
    expect(status.result.accounts[0]?.proxies.length).toBe(1);
  });

  it("approves an https page's connection and order in the approval window; the sandbox verifies the order", async () => {
    const demo = await browser.newPage();
    await demo.goto(`${front.url}/demo`);
    await demo.waitForFunction(() => document.body.innerText.includes('Found Countersign'), { timeout: 15_000 });
    await demo.click('#connect');
    await approveWindow(browser);
    await demo.waitForFunction(() => (window as unknown as { __last?: { label: string } }).__last?.label === 'connect', { timeout: 15_000 });
    expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
    const placed = () => sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
    const before = placed();
    await demo.bringToFront();
    await demo.click('#order');
    await approveWindow(browser);
    await demo.waitForFunction(() => (window as unknown as { __last?: { label: string } }).__last?.label === 'order', { timeout: 30_000 });
    expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
    expect(placed() - before).toBe(1);
  });
});
