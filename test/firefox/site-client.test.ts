/**
 * The site client as a site installs it, in real Firefox ESR (headless, WebDriver BiDi, the Firefox MV3 build as a
 * temporary add-on): the packed tarball installed into a scratch site and bundled there (`test/kits/site-client.ts`),
 * then the same path as in Chromium — version check, connection, a rejected window, an order approved in a window
 * and its cancel, a standing grant asked with viem's `erc7715Actions().grantPermissions` that covers an order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { approveWindow, pageAt } from './pages';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';
import { ethGrantRequest, serveSite, type ServedSite } from '../kits/site-client';

const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((p) => existsSync(p));
const EXT = resolve(import.meta.dirname, '../../.output/firefox-mv3');
const ready = !!FIREFOX && existsSync(join(EXT, 'manifest.json'));
const PASSWORD = 'correct horse battery staple';

type Outcome = { ok: boolean; value?: unknown; code?: number; type?: string; message?: string };
type Site = Record<string, (...args: unknown[]) => Promise<Outcome>> & { ready: () => boolean; coid: () => string };
declare const window: { __site: Site };
declare const chrome: {
  runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean; result?: unknown; error?: unknown }> };
};

let browser: Browser;
let sandbox: RunningSandbox;
let served: ServedSite;
let profile: string;
let ext: Page;
let site: Page;

const send = async (type: string, payload: unknown = {}) => {
  const r = await ext.evaluate((t, p) => chrome.runtime.sendMessage({ type: t, payload: p }), type, payload);
  if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r.error)}`);
  return r.result;
};
const call = (name: string, ...args: unknown[]) => site.evaluate((n, a) => window.__site[n]!(...a), name, args);
/** Rejects the request shown in the approval window. */
async function rejectWindow(): Promise<void> {
  const w = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.endsWith('/approval.html'));
  await w.bringToFront();
  await w.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Reject'), {
    timeout: 20_000,
  });
  await w.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent === 'Reject')?.click());
}
/** Runs `name(...args)` in the site and approves or rejects the window it opens; the site's outcome. */
async function inWindow(approve: boolean, name: string, ...args: unknown[]): Promise<Outcome> {
  const outcome = call(name, ...args);
  await (approve ? approveWindow(browser) : rejectWindow());
  await site.bringToFront();
  return outcome;
}
const perpsSent = () => sandbox.ctx.requestLog.filter((r) => r.path.startsWith('/perps/v1/trade/orders')).length;
async function ethMark(): Promise<string> {
  const r = await fetch(`${sandbox.url}/perps/v1/info/tickers?instrument_id=2`);
  const [t] = (await r.json()) as { mark_price: string }[];
  return t!.mark_price;
}

// In CI the Firefox flow must run (CI installs firefox-esr); elsewhere it is skipped when Firefox is missing.
describe.runIf(ready || !!process.env.CI)('a site built on the installed site client, in Firefox ESR', () => {
  beforeAll(async () => {
    served = await serveSite();
    sandbox = await startSandbox(0);
    profile = mkdtempSync(join(tmpdir(), 'countersign-firefox-site-'));
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX!,
      headless: true,
      userDataDir: profile,
    });
    await browser.installExtension(EXT);
    ext = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.includes('/popup.html'));
    const b = sandbox.url;
    await send('settings.set', {
      perpsUrl: `${b}/perps`,
      clobUrl: `${b}/clob`,
      gammaUrl: `${b}/gamma`,
      dataUrl: `${b}/data`,
    });
    await send('vault.create', { password: PASSWORD });
    await send('vault.importOwnerKey', { privateKey: sandbox.demo.owner.privateKey });
    const p = sandbox.demo.proxy;
    await send('proxy.import', {
      account: sandbox.demo.owner.address,
      privateKey: p.privateKey,
      proxy: p.address,
      secret: p.secret,
      expiry: p.expiry,
    });
    await send('clob.createOrDerive', { account: sandbox.demo.owner.address });
    site = await browser.newPage();
    await site.goto(served.url);
    await site.waitForFunction(() => window.__site.ready(), { timeout: 15_000 });
  }, 240_000);
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await sandbox?.close();
    await served?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('checks the version, connects in a window, and a rejected order sends nothing', async () => {
    expect(await call('require', ['perps_sendCommand', 'clob_postOrders'])).toMatchObject({ ok: true });
    expect(await inWindow(true, 'connect')).toEqual({ ok: true, value: [sandbox.demo.owner.address] });
    const sent = perpsSent();
    const order = {
      op: {
        type: 'createOrders',
        args: [{ iid: 2, buy: true, qty: '0.01', p: await ethMark(), tif: 'gtc', po: true }],
      },
    };
    expect(await inWindow(false, 'perps', order)).toMatchObject({
      ok: false,
      code: 4001,
      type: 'Countersign.UserRejectedError',
    });
    expect(perpsSent()).toBe(sent);
  });

  it('an order-book order approved in a window, then cancelled with L2 headers the site sends itself', async () => {
    const tokenId = sandbox.ctx.clob.markets[0]!.tokenIds[0]!;
    const posted = await inWindow(true, 'clob', {
      orders: [{ tokenId, side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' }],
    });
    expect(posted).toMatchObject({ ok: true, value: [{ success: true, orderID: expect.any(String) }] });
    const { orderID } = (posted.value as { orderID: string }[])[0]!;
    const cancel = await inWindow(true, 'cancelClob', `${sandbox.url}/clob`, orderID);
    expect(cancel).toEqual({ ok: true, value: { status: 200, answer: { canceled: [orderID], not_canceled: {} } } });
  });

  it("a grant asked with viem's erc7715Actions covers a perps order and its cancel without a window", async () => {
    const granted = await inWindow(true, 'grant', ethGrantRequest(sandbox.demo.owner.address));
    expect(granted).toMatchObject({ ok: true, value: { grantedPermissions: [{ type: 'countersign-grant' }] } });
    const c = await site.evaluate(() => window.__site.coid());
    const placed = await call('perps', {
      op: {
        type: 'createOrders',
        args: [{ iid: 2, buy: true, qty: '0.01', p: await ethMark(), tif: 'gtc', po: true, c }],
      },
    });
    expect(placed).toMatchObject({ ok: true, value: [{ oid: expect.any(Number), coid: c }] });
    const { oid } = (placed.value as { oid: number }[])[0]!;
    expect(await call('perps', { op: { type: 'cancelOrders', args: [oid] } })).toMatchObject({ ok: true });
    expect(sandbox.ctx.venue.orders.get(oid)?.status).toBe('cancelled');
  });
});
