/**
 * The bridge as a site uses it, in real Chromium against the sandbox's demo page: connect, a perps
 * order approved in the approval window and verified by the sandbox, a rejection (4001, nothing sent),
 * a withdrawal, an unconnected origin (4100), L2 headers that verify at the sandbox, a service-worker
 * stop during a pending approval (retryable error, nothing signed, retry succeeds), lock with a request
 * pending (4900), a fuzz of malformed requests, and scans for secrets in messages and in the profile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchHarness, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
const frames: unknown[] = [];
let approvalWindows = 0;

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<unknown> } };
type Last = { ok: boolean; label: string; value?: unknown; code?: number; message?: string; data?: { retryable?: boolean } };

async function send(type: string, payload: unknown = {}) {
  return popup.evaluate(([t, p]) => chrome.runtime.sendMessage({ type: t, payload: p }), [type, payload] as const) as Promise<{ ok: boolean; result?: unknown; error?: unknown }>;
}

/** Clicks a demo button and returns the approval window that opens. */
async function clickAndApprovalWindow(button: string): Promise<Page> {
  const opened = h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
  await demo.click(`#${button}`);
  const w = await opened;
  await w.waitForLoadState();
  await w.bringToFront();
  return w;
}

async function approve(w: Page) {
  const btn = w.getByTestId('approve');
  await btn.waitFor();
  await w.waitForFunction(() => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled, undefined, { timeout: 5_000 });
  await btn.click();
}

async function lastResult(label: string): Promise<Last> {
  await demo.waitForFunction((l) => (window as unknown as { __last?: { label: string } }).__last?.label === l, label, { timeout: 15_000 });
  const last = await demo.evaluate(() => (window as unknown as { __last: Last }).__last);
  await demo.evaluate(() => delete (window as unknown as { __last?: unknown }).__last);
  return last;
}

const tradingRequests = () => h.sandbox.ctx.requestLog.filter((r) => /^\/perps\/v1\/(trade|account\/withdraw)|^\/clob\/orders?$/.test(r.path) && r.method !== 'GET').length;

beforeAll(async () => {
  h = await launchHarness();
  h.ctx.on('page', (p) => {
    if (p.url().endsWith('/approval.html')) approvalWindows++;
  });
  // Record every frame the extension posts to pages, and every reply the extension pages receive.
  await h.ctx.addInitScript(() => {
    const w = window as unknown as { __frames: unknown[] };
    w.__frames = [];
    window.addEventListener('message', (e) => {
      if ((e.data as { target?: string })?.target === 'countersign:page') w.__frames.push(e.data);
    });
    const rt = (globalThis as unknown as { chrome?: { runtime?: { sendMessage?: (...a: unknown[]) => Promise<unknown> } } }).chrome?.runtime;
    if (rt?.sendMessage && location.protocol === 'chrome-extension:') {
      const orig = rt.sendMessage.bind(rt);
      rt.sendMessage = async (...a: unknown[]) => {
        const r = await orig(...a);
        w.__frames.push(r);
        return r;
      };
    }
  });
  popup = await h.openPopup();
  expect((await send('vault.create', { password: PASSWORD })).ok).toBe(true);
  expect((await send('vault.importOwnerKey', { privateKey: h.sandbox.demo.owner.privateKey })).ok).toBe(true);
  const p = h.sandbox.demo.proxy;
  expect((await send('proxy.import', { account: h.sandbox.demo.owner.address, privateKey: p.privateKey, proxy: p.address, secret: p.secret, expiry: p.expiry })).ok).toBe(true);
  expect((await send('clob.createOrDerive', { account: h.sandbox.demo.owner.address })).ok).toBe(true);
  demo = await h.ctx.newPage();
  await demo.goto(`${h.sandbox.url}/demo`);
});

afterAll(async () => {
  await h?.close();
});

describe('bridge in Chromium', () => {
  it('the demo page finds the provider and connects after approval', async () => {
    await demo.getByText('Found Countersign').first().waitFor();
    const w = await clickAndApprovalWindow('connect');
    await w.getByTestId('approval-origin').filter({ hasText: h.sandbox.url }).waitFor();
    await h.screenshot(w, '20-approval-connect');
    await approve(w);
    const r = await lastResult('connect');
    expect(r).toMatchObject({ ok: true, value: [h.sandbox.demo.owner.address] });
  });

  it('places a perps order shown decoded in the approval window; the sandbox verifies it and get-orders reports it', async () => {
    const w = await clickAndApprovalWindow('order');
    await w.getByTestId('approval-lines').filter({ hasText: 'Buy 0.5 ETH-PERP at 3,000, good-til-cancelled, post-only — request weight 1, action weight 1' }).waitFor();
    await w.getByText('proxy key').waitFor();
    await h.screenshot(w, '21-approval-order');
    // Clickjacking guard: a blur disarms Approve at once; focus re-arms it only after 1 s.
    const approveBtn = w.getByTestId('approve');
    await w.evaluate(() => window.dispatchEvent(new Event('blur')));
    expect(await approveBtn.isDisabled()).toBe(true);
    await w.evaluate(() => window.dispatchEvent(new Event('focus')));
    expect(await approveBtn.isDisabled()).toBe(true);
    await approve(w);
    const r = await lastResult('order');
    expect(r.ok).toBe(true);
    const oid = (r.value as { oid: number }[])[0]!.oid;
    const o = h.sandbox.ctx.venue.orders.get(oid)!;
    expect(o).toMatchObject({ status: 'open', iid: 2, po: true, qty: 50_000_000n });
  });

  it('a rejected request returns 4001 and nothing reaches the sandbox', async () => {
    const before = tradingRequests();
    const w = await clickAndApprovalWindow('order');
    await w.getByRole('button', { name: 'Reject' }).click();
    const r = await lastResult('order');
    expect(r).toMatchObject({ ok: false, code: 4001 });
    expect(tradingRequests()).toBe(before);
  });

  it('a withdrawal is approved (new-address flag, USDC and base units) and the sandbox records it', async () => {
    const w = await clickAndApprovalWindow('withdraw');
    await w.getByText('Withdraw 10.00 USDC (10000000 base units)').waitFor();
    await w.getByText('A new address: you have never sent funds here.').waitFor();
    await h.screenshot(w, '22-approval-withdraw');
    await approve(w);
    expect(await lastResult('withdraw')).toMatchObject({ ok: true, value: { status: 'ok' } });
    const owner = h.sandbox.ctx.venue.findAccount(h.sandbox.demo.owner.address)!;
    expect(owner.withdrawals.map((x) => x.amount)).toEqual([10_000_000n]);
  });

  it('returns L2 headers that verify at the sandbox, and posts an order-book order', async () => {
    const w = await clickAndApprovalWindow('l2');
    await approve(w);
    expect(await lastResult('l2')).toMatchObject({ ok: true, value: { status: 200 } });
    const w2 = await clickAndApprovalWindow('clob');
    await w2.getByText(/Buy 10\.00 shares of token .* at 0\.40 \(pay 4\.00 USDC\), GTC/).waitFor();
    await approve(w2);
    const r = await lastResult('clob');
    expect((r.value as { success: boolean }[])[0]!.success).toBe(true);
  });

  it('while a request is pending the badge counts it and the popup opens on the same approval queue', async () => {
    const before = tradingRequests();
    const w = await clickAndApprovalWindow('order');
    await w.getByTestId('approval-lines').waitFor();
    const text = await h.worker.evaluate(() => (globalThis as unknown as { chrome: { action: { getBadgeText: (o: object) => Promise<string> } } }).chrome.action.getBadgeText({}));
    expect(text).toBe('1');
    const p = await h.openPopup();
    await p.getByTestId('approval-origin').filter({ hasText: h.sandbox.url }).waitFor();
    await h.screenshot(p, '23-popup-approval-queue');
    await p.getByRole('button', { name: 'Reject' }).click();
    expect(await lastResult('order')).toMatchObject({ ok: false, code: 4001 });
    expect(tradingRequests()).toBe(before);
    await p.close();
    await w.close().catch(() => undefined);
  });

  it('a page of another origin that did not connect gets 4100', async () => {
    const other = await h.ctx.newPage();
    await other.goto(`${h.sandbox.url.replace('127.0.0.1', 'localhost')}/demo`);
    await other.getByText('Found Countersign').first().waitFor();
    const code = await other.evaluate(() =>
      (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign
        .request({ method: 'perps_sendCommand', params: { op: { type: 'cancelOrders', args: [1] } } })
        .then(() => 0, (e: { code: number }) => e.code),
    );
    expect(code).toBe(4100);
    await other.close();
  });

  it('stopping the service worker during a pending approval gives a retryable error, signs nothing, and a retry goes through', async () => {
    const before = tradingRequests();
    const w = await clickAndApprovalWindow('order');
    await w.getByTestId('approval-lines').waitFor();
    const cdp = await h.ctx.newCDPSession(popup);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    const r = await lastResult('order');
    expect(r).toMatchObject({ ok: false, code: 4900, data: { retryable: true } });
    // The window's request is gone: approving it now signs nothing.
    await w.close().catch(() => undefined);
    expect(tradingRequests()).toBe(before);
    const w2 = await clickAndApprovalWindow('order');
    await approve(w2);
    expect((await lastResult('order')).ok).toBe(true);
    expect(tradingRequests()).toBe(before + 1);
  });

  it('locking with a request pending rejects it with 4900, and a later unlock signs nothing', async () => {
    const before = tradingRequests();
    const w = await clickAndApprovalWindow('order');
    await w.getByTestId('approval-lines').waitFor();
    expect((await send('vault.lock')).ok).toBe(true);
    expect(await lastResult('order')).toMatchObject({ ok: false, code: 4900 });
    expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
    await popup.waitForTimeout(500);
    expect(tradingRequests()).toBe(before);
    expect((await send('approval.list')).result).toEqual([]);
  });

  it('answers 2 000 malformed requests with EIP-1193 errors, opens no approval window, and sends nothing to the sandbox', async () => {
    const before = tradingRequests();
    const windowsBefore = approvalWindows;
    const codes = await demo.evaluate(async () => {
      const p = (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign;
      const bad: unknown[] = [];
      const decimals = ['1e2', '+1', '1 ', 'NaN', 'Infinity', '-1', '٣', '', '0x10', '1..2'];
      for (let i = 0; i < 2000; i++) {
        const k = i % 10;
        const d = decimals[i % decimals.length];
        if (k === 0) bad.push({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: d, tif: 'ioc' }] } } });
        else if (k === 1) bad.push({ method: 'perps_sendCommand', params: { op: { type: 'cancelOrdersCOID', args: ['a'.repeat(33)] } } });
        else if (k === 2) bad.push({ method: 'perps_sendCommand', params: JSON.parse('{"__proto__":{"x":1},"op":{"type":"cancelOrders","args":[1]}}') });
        else if (k === 3) bad.push({ method: 'perps_sendCommand', params: { op: { type: 'createOrders', args: [{ iid: '2', buy: 'yes', qty: 1 }] } } });
        else if (k === 4) bad.push({ method: 'perps_sendCommand' });
        else if (k === 5) bad.push({ method: `eth_unknown_${i}`, params: [] });
        else if (k === 6) bad.push({ method: 'clob_postOrders', params: { orders: 'x'.repeat(70_000 + i) } });
        else if (k === 7) bad.push({ method: 'clob_postOrders', params: { orders: [{ tokenId: '1', side: 'buy', price: d, size: '10', orderType: 'GTC' }] } });
        else if (k === 8) bad.push({ method: 'perps_sendCommand', params: { op: { type: 'withdraw', args: { account: '0x1', token: 1, amount: '1.5', to: null } } } });
        else bad.push({ method: 42, params: i });
      }
      return Promise.all(bad.map((b) => p.request(b).then(() => 'resolved', (e: { code?: unknown }) => e.code)));
    });
    expect(codes).toHaveLength(2000);
    const allowed = new Set([4001, 4100, 4200, 4900, -32600, -32602, -32603, -32002, -32005]);
    for (const c of codes) expect(allowed.has(c as number), `code ${String(c)}`).toBe(true);
    expect(approvalWindows).toBe(windowsBefore);
    expect(tradingRequests()).toBe(before);
  });

  it('no message to pages or extension pages carries a private key, proxy secret or API secret', async () => {
    for (const p of [demo, popup]) frames.push(...((await p.evaluate(() => (window as unknown as { __frames: unknown[] }).__frames)) ?? []));
    expect(frames.length).toBeGreaterThan(50);
    const text = JSON.stringify(frames);
    const creds = [...h.sandbox.ctx.clob.creds.values()].filter((c) => c.address === h.sandbox.demo.owner.address);
    // The passphrase is one of the five L2 headers a page asked for (clob_signRequest); the secret is not.
    const secrets = [h.sandbox.demo.owner.privateKey.slice(2), h.sandbox.demo.proxy.privateKey.slice(2), h.sandbox.demo.proxy.secret, ...creds.map((c) => c.secret)];
    for (const s of secrets) expect(text.includes(s), 'a secret reached a page or the popup').toBe(false);
  });

  it('after lock and browser close, no secret appears in clear anywhere in the profile directory', async () => {
    expect((await send('vault.lock')).ok).toBe(true);
    await h.ctx.close();
    const creds = [...h.sandbox.ctx.clob.creds.values()].filter((c) => c.address === h.sandbox.demo.owner.address);
    const secrets = [h.sandbox.demo.owner.privateKey.slice(2), h.sandbox.demo.proxy.privateKey.slice(2), h.sandbox.demo.proxy.secret, ...creds.flatMap((c) => [c.secret, c.passphrase])];
    const needles = secrets.flatMap((s) => [Buffer.from(s, 'latin1'), Buffer.from(s, 'utf16le')]);
    const hits: string[] = [];
    let files = 0;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        const st = statSync(p, { throwIfNoEntry: false });
        if (!st) continue;
        if (st.isDirectory()) walk(p);
        else if (st.isFile() && st.size < 64 * 1024 * 1024) {
          files++;
          const buf = readFileSync(p);
          for (const n of needles) if (buf.includes(n)) hits.push(p);
        }
      }
    };
    walk(h.userDataDir);
    expect(files).toBeGreaterThan(10);
    expect(hits).toEqual([]);
  });
});
