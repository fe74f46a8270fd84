/**
 * The dead-man timer against Firefox's event page, in Debian's Firefox ESR over WebDriver
 * BiDi (as `firefox.test.ts`). Firefox stops an MV3 event page ≈ 30 s after the last extension event or
 * API call, even while a connected page holds a port, and its timers die with it.
 * 1. Default prefs: with a grant live and the dapp connected, 60 s without any extension activity — the
 *    kill switches are renewed past 30 s (the sandbox records auto-cancel renewals and heartbeats to the
 *    end) and the venues keep the orders.
 * 2. The event page terminated: `extensions.background.idle.timeout` is lowered to 3 s in the test
 *    profile, so Firefox stops the page 3 s after its last API call whatever the keep-alive does. The
 *    backstop alarm restarts it and it re-arms by itself; a granted request that wakes it is signed only
 *    after a fresh renewal; the audit log closes the cut-short period.
 * Skipped where Firefox or the Firefox build is missing (CI installs both).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { pageAt } from './pages';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server';

const FIREFOX = ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((p) => existsSync(p));
const EXT = resolve(import.meta.dirname, '../../.output/firefox-mv3');
const ready = !!FIREFOX && existsSync(join(EXT, 'manifest.json'));
const PASSWORD = 'correct horse battery staple';

type Reply = { ok: boolean; result?: unknown; error?: unknown };
type VenueStatus = { venue: 'perps' | 'clob'; armed: boolean };
type Session = {
  browser: Browser;
  sandbox: RunningSandbox;
  profile: string;
  ext: Page;
  demo: Page;
  send: (type: string, payload?: unknown) => Promise<Reply>;
  request: (method: string, params?: unknown) => Promise<{ ok: boolean; r?: unknown; code?: number }>;
};

async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
/** Leaves the extension page (about:blank), so that no extension page is open. */
async function leave(s: Session): Promise<void> {
  await s.ext.goto('about:blank');
}
/** Back to the extension page (BiDi may not navigate to moz-extension:, the page's own history may). */
async function comeBack(s: Session): Promise<void> {
  await s.ext.evaluate(() => history.back());
  await until(
    async () => (await s.ext.evaluate(() => location.href).catch(() => '')).startsWith('moz-extension://'),
    10_000,
    'the extension page',
  );
}
const approval = (u: string) => u.startsWith('moz-extension://') && u.endsWith('/approval.html');
async function approve(browser: Browser, grant = false): Promise<void> {
  const w = await pageAt(browser, approval);
  await w.bringToFront();
  if (grant) {
    await w.locator('::-p-text(Allow this site within limits…)').click();
    await w.locator('::-p-text(Save permission)').click();
    await w.waitForFunction(() => document.body.innerText.includes('Saved for'), { timeout: 10_000 });
  }
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    { timeout: 10_000 },
  );
  await w.click('[data-testid="approve"]');
}
const ethOrder = (price: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: price, tif: 'gtc', po: true }] },
});

/**
 * Firefox with the extension, the demo account onboarded (with order-book credentials), the demo page connected and a
 * live grant.
 */
async function session(prefs: Record<string, unknown> = {}): Promise<Session> {
  const sandbox = await startSandbox(0);
  const profile = mkdtempSync(join(tmpdir(), 'countersign-firefox-dm-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX!,
    headless: true,
    userDataDir: profile,
    extraPrefsFirefox: prefs,
  });
  await browser.installExtension(EXT);
  const ext = await pageAt(browser, (u) => u.startsWith('moz-extension://') && u.includes('/popup.html'));
  const send = (type: string, payload: unknown = {}) =>
    ext.evaluate(
      (t, p) =>
        (
          globalThis as unknown as { chrome: { runtime: { sendMessage: (m: unknown) => Promise<Reply> } } }
        ).chrome.runtime.sendMessage({ type: t, payload: p }),
      type,
      payload,
    );
  const ok = async (type: string, payload: unknown = {}) =>
    expect(await send(type, payload)).toMatchObject({ ok: true });
  const b = sandbox.url;
  await ok('settings.set', {
    perpsUrl: `${b}/perps`,
    clobUrl: `${b}/clob`,
    gammaUrl: `${b}/gamma`,
    dataUrl: `${b}/data`,
  });
  await ok('vault.create', { password: PASSWORD });
  await ok('vault.importOwnerKey', { privateKey: sandbox.demo.owner.privateKey });
  const p = sandbox.demo.proxy;
  await ok('proxy.import', {
    account: sandbox.demo.owner.address,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  await ok('clob.createOrDerive', { account: sandbox.demo.owner.address });
  const demo = await browser.newPage();
  await demo.goto(`${b}/demo`);
  await demo.waitForFunction(() => document.body.innerText.includes('Found Countersign'), { timeout: 15_000 });
  const request = (method: string, params?: unknown) =>
    demo.evaluate(
      (m, q) =>
        (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
          .request({ method: m, ...(q === undefined ? {} : { params: q }) })
          .then(
            (r) => ({ ok: true, r }),
            (e: { code: number }) => ({ ok: false, code: e.code }),
          ),
      method,
      params,
    );
  const connected = request('eth_requestAccounts');
  await approve(browser);
  expect((await connected).ok).toBe(true);
  const first = request('perps_sendCommand', ethOrder('3100'));
  await approve(browser, true);
  expect((await first).ok).toBe(true);
  // A grant names one venue: an order-book grant too, so the heartbeats are armed as well.
  const second = request('clob_postOrders', {
    orders: [
      { tokenId: sandbox.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.30', size: '10', orderType: 'GTC' },
    ],
  });
  await approve(browser, true);
  expect((await second).ok).toBe(true);
  await ok('clob.postOrders', {
    account: sandbox.demo.owner.address,
    orders: [
      { tokenId: sandbox.ctx.clob.markets[0]!.tokenIds[0], side: 'BUY', price: '0.31', size: '10', orderType: 'GTC' },
    ],
  });
  await until(
    async () => ((await send('deadman.status')).result as { armed: boolean }).armed,
    15_000,
    'the dead-man armed',
  );
  return { browser, sandbox, profile, ext, demo, send, request };
}
async function close(s: Session | undefined): Promise<void> {
  await s?.browser.close().catch(() => undefined);
  await s?.sandbox.close();
  if (s) rmSync(s.profile, { recursive: true, force: true });
}
const owner = (s: Session) => s.sandbox.demo.owner.address.toLowerCase();
const openPerps = (s: Session) =>
  [...s.sandbox.ctx.venue.orders.values()].filter((o) => o.owner === owner(s) && o.status === 'open');
const liveClob = (s: Session) =>
  [...s.sandbox.ctx.clob.orders.values()].filter((o) => o.address === owner(s) && o.status === 'live');
/** Seconds after `t0` of the accepted requests to `path`. */
const times = (s: Session, path: string, t0: number) =>
  s.sandbox.ctx.requestLog
    .filter((r) => r.path === path && r.status === 200 && r.at >= t0)
    .map((r) => (r.at - t0) / 1000);

describe.runIf(ready || !!process.env.CI)('dead-man in Firefox ESR (real, headless)', () => {
  describe('default prefs: 60 s without extension activity', () => {
    let s: Session;
    beforeAll(async () => {
      s = await session();
    }, 90_000);
    afterAll(() => close(s));

    it('renewals and heartbeats continue past 30 s, and the venues keep the orders', async () => {
      await leave(s); // no extension page open; only the connected dapp remains
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, 60_000));
      const renewals = times(s, '/perps/v1/trade/auto-cancel', t0);
      const beats = times(s, '/clob/v1/heartbeats', t0);
      expect(renewals.filter((t) => t > 30).length).toBeGreaterThanOrEqual(2);
      expect(beats.filter((t) => t > 50).length).toBeGreaterThanOrEqual(1);
      // Reads make the venues apply their timers: nothing was cancelled.
      await fetch(`${s.sandbox.url}/perps/v1/account/open-orders`, {
        headers: { 'SERVICE-PROXY': s.sandbox.demo.proxy.address, 'SERVICE-SECRET': s.sandbox.demo.proxy.secret },
      });
      await fetch(`${s.sandbox.url}/clob/ok`);
      expect(openPerps(s).length).toBe(1);
      expect(liveClob(s).length).toBe(2); // the order above and the one that offered the order-book grant
      await comeBack(s);
      expect(((await s.send('deadman.status')).result as { armed: boolean }).armed).toBe(true);
    }, 90_000);
  });

  describe('event page terminated (extensions.background.idle.timeout = 3 s)', () => {
    let s: Session;
    beforeAll(async () => {
      s = await session({ 'extensions.background.idle.timeout': 3_000 });
    }, 90_000);
    afterAll(() => close(s));

    it(
      'the backstop alarm restarts the stopped page, which re-arms by ' +
        'itself; a granted request is signed only after a fresh renewal',
      async () => {
        await leave(s);
        const t0 = Date.now();
        // The page stops 3 s after its last API call: the 4 s heartbeats stop, then the alarm (≤ 30 s) wakes it.
        const restarted = () =>
          times(s, '/clob/v1/heartbeats', t0 - 10_000).some((t, i, all) => i > 0 && t - all[i - 1]! > 10);
        await until(
          () => restarted() && times(s, '/perps/v1/trade/auto-cancel', t0).some((t) => t > 10),
          45_000,
          'a stop, an alarm restart and its renewals',
        );
        // Stopped again (no heartbeat for 5 s): a granted request wakes it and waits for the re-arm.
        await until(
          () =>
            Date.now() -
              Math.max(
                0,
                ...s.sandbox.ctx.requestLog.filter((r) => r.path === '/clob/v1/heartbeats').map((r) => r.at),
              ) >
            5_000,
          20_000,
          'the page to stop',
        );
        const cut = s.sandbox.ctx.requestLog.length;
        const r = await s.request('perps_sendCommand', ethOrder('3099'));
        expect(r.ok).toBe(true);
        const log = s.sandbox.ctx.requestLog;
        const orderAt = log.findIndex((x, i) => i >= cut && x.path === '/perps/v1/trade/orders' && x.status === 200);
        const renewedAt = log.findIndex(
          (x, i) => i >= cut && x.path === '/perps/v1/trade/auto-cancel' && x.status === 200,
        );
        expect(renewedAt).toBeGreaterThanOrEqual(cut);
        expect(renewedAt).toBeLessThan(orderAt);
        await comeBack(s);
        await until(
          async () =>
            ((await s.send('deadman.status')).result as { venues: VenueStatus[] }).venues.filter((v) => v.armed)
              .length === 2,
          10_000,
          'both switches armed',
        );
        const audit = (await s.send('audit.list', { limit: 200 })).result as { kind: string; summary: string }[];
        expect(
          audit.some((e) => e.kind === 'deadman.end' && e.summary.includes('ended when the background stopped')),
        ).toBe(true);
      },
      120_000,
    );
  });
});
