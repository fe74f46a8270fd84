/**
 * Firefox, for real: Debian's Firefox ESR, headless, driven over WebDriver BiDi by
 * puppeteer-core, with the Firefox MV3 build installed as a temporary add-on. Onboard (the first-install
 * tab), place a perps order from the popup, and approve a demo page's connection and order in the
 * approval window; the sandbox verifies the order. Skipped where Firefox or the build is missing. Also
 * the Firefox build's manifest declares the side-panel cockpit as `sidebar_action` (needs the build only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { approveWindow, pageAt } from './pages';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';

const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((p) => existsSync(p));
const EXT = resolve(import.meta.dirname, '../../.output/firefox-mv3');
const ready = !!FIREFOX && existsSync(join(EXT, 'manifest.json'));
const PASSWORD = 'correct horse battery staple';

let browser: Browser;
let sandbox: RunningSandbox;
let profile: string;
let ext: Page;

declare const chrome: {
  runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean; result?: unknown; error?: unknown }> };
};

const send = (type: string, payload: unknown = {}) =>
  ext.evaluate((t, p) => chrome.runtime.sendMessage({ type: t, payload: p }), type, payload);

// The Firefox build's manifest (no browser needed): the side-panel cockpit is Firefox's sidebar (Chrome
// `side_panel`, Firefox `sidebar_action`). In CI the build exists.
describe.runIf(existsSync(join(EXT, 'manifest.json')) || !!process.env.CI)('Firefox MV3 build manifest', () => {
  it("declares the cockpit as the sidebar (sidebar_action → sidepanel.html), not Chrome's side_panel", () => {
    const manifest = JSON.parse(readFileSync(join(EXT, 'manifest.json'), 'utf8')) as {
      sidebar_action?: { default_panel?: string; open_at_install?: boolean };
      side_panel?: unknown;
    };
    expect(manifest.sidebar_action).toMatchObject({ default_panel: 'sidepanel.html', open_at_install: false });
    expect(manifest.side_panel).toBeUndefined();
  });
});

// In CI the Firefox flow must run (CI installs firefox-esr); elsewhere it is skipped when Firefox is missing.
describe.runIf(ready || !!process.env.CI)('Firefox ESR (real, headless)', () => {
  beforeAll(async () => {
    sandbox = await startSandbox(0);
    profile = mkdtempSync(join(tmpdir(), 'countersign-firefox-'));
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX!,
      headless: true,
      userDataDir: profile,
    });
    await browser.installExtension(EXT);
    ext = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.includes('/popup.html'));
    const b = sandbox.url;
    expect(
      (
        await send('settings.set', {
          perpsUrl: `${b}/perps`,
          clobUrl: `${b}/clob`,
          gammaUrl: `${b}/gamma`,
          dataUrl: `${b}/data`,
        })
      ).ok,
    ).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await sandbox?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('onboards in the first-install tab: vault, owner key, proxy key', async () => {
    expect(await ext.evaluate(() => document.body.innerText)).toContain('Welcome to Countersign');
    expect((await send('vault.create', { password: PASSWORD })).ok).toBe(true);
    expect((await send('vault.importOwnerKey', { privateKey: sandbox.demo.owner.privateKey })).ok).toBe(true);
    const p = sandbox.demo.proxy;
    expect(
      (
        await send('proxy.import', {
          account: sandbox.demo.owner.address,
          privateKey: p.privateKey,
          proxy: p.address,
          secret: p.secret,
          expiry: p.expiry,
        })
      ).ok,
    ).toBe(true);
    expect(
      ((await send('vault.status')) as { result: { unlocked: boolean; activeAccount: string } }).result,
    ).toMatchObject({ unlocked: true, activeAccount: sandbox.demo.owner.address });
    // The vault's second copy (lib/vault/copy.ts) is a file of the extension's origin private file system, holding both
    // keys.
    const copy = await ext.evaluate(async () => {
      const dir = await navigator.storage.getDirectory();
      return JSON.parse(await (await (await dir.getFileHandle('vault-copy.json')).getFile()).text()) as {
        backup: string;
      };
    });
    expect((JSON.parse(copy.backup) as { secrets: { kind: string }[] }).secrets.map((r) => r.kind).sort()).toEqual([
      'owner',
      'proxy',
    ]);
  });

  it('places a perps order from the popup; the sandbox verifies it', async () => {
    await ext.evaluate(() => (location.href = location.href.split('#')[0]!));
    await ext.waitForSelector('input[name="qty"]');
    await ext.select('select[name="instrument"]', '2');
    await ext.waitForFunction(() => (document.querySelector('input[name="price"]') as HTMLInputElement).value !== '');
    await ext.click('input[name="price"]', { count: 3 });
    await ext.type('input[name="price"]', '3000');
    await ext.type('input[name="qty"]', '0.5');
    await ext.click('input[name="po"]');
    await ext.focus('input[name="qty"]');
    await ext.keyboard.press('Enter');
    await ext.waitForFunction(() => document.body.innerText.includes('Resting on the book'), { timeout: 15_000 });
    const mine = [...sandbox.ctx.venue.orders.values()].filter(
      (o) => o.owner === sandbox.demo.owner.address.toLowerCase() && o.iid === 2 && o.status === 'open',
    );
    expect(mine.map((o) => o.qty)).toEqual([50_000_000n]);
  });

  it("approves a demo page's connection and order in the approval window; the sandbox verifies the order", async () => {
    const demo = await browser.newPage();
    await demo.goto(`${sandbox.url}/demo`);
    await demo.waitForFunction(() => document.body.innerText.includes('Found Countersign'), { timeout: 15_000 });
    await demo.click('#connect');
    await approveWindow(browser);
    await demo.waitForFunction(
      () => (window as unknown as { __last?: { label: string; ok: boolean } }).__last?.label === 'connect',
      { timeout: 15_000 },
    );
    expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
    const before = sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length;
    await demo.bringToFront();
    await demo.click('#order');
    await approveWindow(browser);
    await demo.waitForFunction(() => (window as unknown as { __last?: { label: string } }).__last?.label === 'order', {
      timeout: 30_000,
    });
    expect(await demo.evaluate(() => (window as unknown as { __last: { ok: boolean } }).__last.ok)).toBe(true);
    expect(
      sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders' && r.status === 200).length - before,
    ).toBe(1);
  });
});
