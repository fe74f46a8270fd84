/**
 * The Firefox release zip, installed as it is (the zip file itself, not `.output/`) in real Firefox ESR:
 * at first run it holds no loopback access and asks for the venue, offering only the venue's https setups;
 * choosing one asks for its hosts. A release sends nothing in clear: the Sandbox preset is refused. With
 * every service of the sandbox behind an https / wss front (a custom setup), the onboarding (password,
 * owner key, proxy key) and one order an https page asks for and the person approves in the approval
 * window go through to the sandbox, which verifies it.
 *
 * The sandbox runs at the Sandbox preset's address (127.0.0.1:8787) behind the front (`https-front.ts`),
 * which also serves the demo page. Firefox is told to grant optional permissions without a prompt
 * (`extensions.webextOptionalPermissionPrompts`: headless Firefox cannot show one) — the request is still
 * made, from a click, and the grant is checked after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { approveWindow, pageAt } from '../firefox/pages';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { frontSetup, startHttpsFront, type HttpsFront } from './https-front';
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
  permissions: {
    contains: (p: { origins: string[] }) => Promise<boolean>;
    request: (p: { origins: string[] }) => Promise<boolean>;
  };
};
const send = (type: string, payload: unknown = {}) =>
  ext.evaluate((t, p) => chrome.runtime.sendMessage({ type: t, payload: p }), type, payload);
const loopbackGranted = () => ext.evaluate(() => chrome.permissions.contains({ origins: ['http://127.0.0.1/*'] }));
const click = (p: Page, text: string) => p.locator(`::-p-text(${text})`).click();

/**
 * Asks the browser for `origins` from a click in the extension page, as Settings' Save does (Firefox grants only during
 * a click).
 */
async function requestFromClick(origins: string[]): Promise<boolean> {
  await ext.evaluate((o) => {
    const b = document.createElement('button');
    b.id = 'grant-for-test';
    b.onclick = () =>
      void chrome.permissions
        .request({ origins: o })
        .then((granted) => b.setAttribute('data-granted', String(granted)));
    document.body.append(b);
  }, origins);
  await ext.click('#grant-for-test');
  await ext.waitForSelector('#grant-for-test[data-granted]');
  const granted = await ext.evaluate(
    () => document.getElementById('grant-for-test')?.getAttribute('data-granted') === 'true',
  );
  await ext.evaluate(() => document.getElementById('grant-for-test')?.remove());
  return granted;
}

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

  it('holds no loopback access at install and asks for the venue at first run, offering no sandbox', async () => {
    await ext.waitForSelector('[data-testid="venue-step"]');
    expect(await loopbackGranted()).toBe(false);
    expect(await ext.$$eval('input[name="venue"]', (xs) => xs.map((x) => (x as HTMLInputElement).value))).toEqual([
      'polymarket',
      'preproduction',
    ]);
  });

  it(
    "choosing the venue's pre-production asks for its hosts " +
      "and stores it; the Sandbox preset's plain http is refused",
    async () => {
      await ext.click('input[name="venue"][value="preproduction"]');
      await click(ext, 'Continue');
      await ext.waitForSelector('input[name="new-password"]');
      const s = (await send('settings.get')) as { result: { settings: { preset: string; venueChosen: boolean } } };
      expect(s.result.settings).toMatchObject({ preset: 'preproduction', venueChosen: true });
      expect(((await send('settings.set', { preset: 'sandbox' })) as { error?: { name: string } }).error?.name).toBe(
        'Http.InsecureTransportError',
      );
      expect(await requestFromClick(['https://127.0.0.1/*'])).toBe(true);
      const custom = (await send('settings.set', frontSetup(front))) as { ok: boolean; error?: unknown };
      expect(custom.ok, JSON.stringify(custom.error)).toBe(true);
    },
  );

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
    const status = (await send('vault.status')) as {
      result: { unlocked: boolean; activeAccount: string; accounts: { proxies: unknown[] }[] };
    };
    expect(status.result).toMatchObject({ unlocked: true, activeAccount: sandbox.demo.owner.address });
    expect(status.result.accounts[0]?.proxies.length).toBe(1);
  });

  it(
    "approves an https page's connection and order in " + 'the approval window; the sandbox verifies the order',
    async () => {
      const demo = await browser.newPage();
      await demo.goto(`${front.url}/demo`);
      await demo.waitForFunction(() => document.body.innerText.includes('Found Countersign'), { timeout: 15_000 });
      await demo.click('#connect');
      await approveWindow(browser);
      await demo.waitForFunction(
        () => (window as unknown as { __last?: { label: string } }).__last?.label === 'connect',
        { timeout: 15_000 },
      );
      expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
      const placed = () =>
        sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
      const before = placed();
      await demo.bringToFront();
      await demo.click('#order');
      await approveWindow(browser);
      await demo.waitForFunction(
        () => (window as unknown as { __last?: { label: string } }).__last?.label === 'order',
        {
          timeout: 30_000,
        },
      );
      expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
      expect(placed() - before).toBe(1);
    },
  );
});
