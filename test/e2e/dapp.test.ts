/**
 * The dapp path in real Chromium, as a dapp developer meets it: a test page bundled here (esbuild) from
 * mipd (EIP-6963 store) + viem (`createWalletClient({ transport: custom(provider) })`) + `lib/dapp`,
 * served on 127.0.0.1 by a tiny server, against the extension and the sandbox. Raw requests go through
 * viem's own `walletClient.request` with its default retry policy, so a code viem retries would show up
 * as a second window or a second submission.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { launchHarness, messenger, onboardDemo, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
const ROOT = resolve(import.meta.dirname, '../..');

/** The test dapp: finds Countersign with mipd, wraps it in a viem wallet client, records every event. */
const PAGE_SCRIPT = `
import { createStore } from 'mipd';
import { createWalletClient, custom } from 'viem';
import { countersignActions, toCountersignError } from './lib/dapp';
const store = createStore();
const events = [];
const payloads = [];
let client;
store.subscribe(() => {
  const d = store.findProvider({ rdns: 'xyz.countersign' });
  if (!d || client) return;
  client = createWalletClient({ transport: custom(d.provider) }).extend(countersignActions);
  for (const e of ['accountsChanged', 'connect', 'chainChanged', 'disconnect']) d.provider.on(e, (data) => {
    events.push({ event: e, data: data instanceof Error ? { code: data.code } : data });
    payloads.push({ event: e, isError: data instanceof Error, name: data && data.name, code: data && data.code });
  });
}, { emitImmediately: true });
const settle = (p) => p.then((value) => ({ ok: true, value }), (err) => {
  const e = toCountersignError(err);
  return { ok: false, code: e.rpcCode, type: e.name, message: e.shortMessage, data: e.data };
});
window.__dapp = {
  ready: () => !!client,
  events,
  payloads,
  request: (method, params) => settle(client.request({ method, params })),
  requestAddresses: () => settle(client.requestAddresses()),
  action: (name, arg) => settle(client[name](arg)),
};
`;

type Outcome = {
  ok: boolean;
  value?: unknown;
  code?: number;
  type?: string;
  message?: string;
  data?: Record<string, unknown>;
};
type Dapp = {
  ready: () => boolean;
  events: { event: string; data: unknown }[];
  payloads: { event: string; isError: boolean; name?: string; code?: number }[];
  request: (m: string, p?: unknown) => Promise<Outcome>;
  requestAddresses: () => Promise<Outcome>;
  action: (name: string, arg?: unknown) => Promise<Outcome>;
};
declare const window: { __dapp: Dapp };

let h: Harness;
let server: Server;
let dapp: Page;
let send: ReturnType<typeof messenger>;
let windows = 0;

const request = (method: string, params?: unknown) =>
  dapp.evaluate(([m, p]) => window.__dapp.request(m, p), [method, params] as const);
const action = (name: string, arg?: unknown) =>
  dapp.evaluate(([n, a]) => window.__dapp.action(n, a), [name, arg] as const);
const events = () => dapp.evaluate(() => window.__dapp.events.slice());
const nextWindow = () =>
  h.ctx.waitForEvent('page', { predicate: (p) => p.url().endsWith('/approval.html'), timeout: 10_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Trading requests that reached the sandbox (order placement, cancels, withdrawals; not the dead-man's renewals). */
const submissions = () =>
  h.sandbox.ctx.requestLog.filter(
    (r) => r.method !== 'GET' && /^\/perps\/v1\/trade\/(orders|orders-coid)$|^\/clob\/orders?$/.test(r.path),
  ).length;
/**
 * Waits (at most 3 s) for the approval window to close once its queue is empty, so the test's next request opens
 * a new window: one sent before the emptied window asked to close is shown in it (the product reuses an open window). A
 * window that still shows another pending request stays open; the wait then just ends.
 */
const settled = (closed: Promise<unknown>) => Promise.race([closed, sleep(3_000)]);
async function approveIn(w: Page) {
  await w.bringToFront();
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 5_000 },
  );
  const closed = w.waitForEvent('close', { timeout: 3_000 }).catch(() => undefined);
  await w.getByTestId('approve').click();
  await settled(closed);
}
async function rejectIn(w: Page) {
  await w.bringToFront();
  const closed = w.waitForEvent('close', { timeout: 3_000 }).catch(() => undefined);
  await w.getByRole('button', { name: 'Reject' }).click();
  await settled(closed);
}
async function ethMark(): Promise<string> {
  const r = await fetch(`${h.sandbox.url}/perps/v1/info/tickers?instrument_id=2`);
  const [t] = (await r.json()) as { mark_price: string }[];
  return t!.mark_price;
}
/** Sets `/admin/silence` for `service` (the venue holds every request unanswered while silent). */
async function silence(service: 'perps' | 'clob', silent: boolean) {
  const r = await fetch(`${h.sandbox.url}/admin/silence`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ service, silent }),
  });
  expect(r.ok).toBe(true);
}
/** Connects the test dapp again (one window, approved). */
async function reconnect() {
  const opened = nextWindow();
  const r = dapp.evaluate(() => window.__dapp.requestAddresses());
  await approveIn(await opened);
  expect(await r).toMatchObject({ ok: true, value: [h.sandbox.demo.owner.address] });
}
const clobOrder = (idempotencyKey: string, price = '0.40') => ({
  orders: [{ tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0]!, side: 'BUY', price, size: '10', orderType: 'GTC' }],
  idempotencyKey,
});
const ethOrder = (p: string, c?: string, qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty, p, tif: 'gtc', po: true, ...(c ? { c } : {}) }] },
});

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const js = bundle.outputFiles[0]!.text;
  server = createServer((req, res) => {
    if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>test dapp</title><script src="/app.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  h = await launchHarness();
  h.ctx.on('page', (p) => {
    if (p.url().endsWith('/approval.html')) windows++;
  });
  ({ send } = await onboardDemo(h, PASSWORD, { clob: true }));
  dapp = await h.ctx.newPage();
  await dapp.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await dapp.waitForFunction(() => window.__dapp?.ready(), undefined, { timeout: 15_000 });
});
afterAll(async () => {
  await h?.close();
  server?.close();
});

describe('a mipd + viem dapp in Chromium', () => {
  it(
    'EIP-1193 connect: a page that only listens is told connect with ' +
      'the chain id as soon as the provider serves, before it asks anything',
    async () => {
      await dapp.waitForFunction(() => window.__dapp.events.some((e) => e.event === 'connect'));
      expect((await events())[0]).toEqual({ event: 'connect', data: { chainId: '0x13882' } });
    },
  );

  it(
    'eth_requestAccounts on a locked vault: one window shows the unlock ' +
      'form, then the connection; five calls resolve with the account',
    async () => {
      expect((await send('vault.lock')).ok).toBe(true);
      const before = windows;
      const opened = nextWindow();
      const calls = dapp.evaluate(() => Promise.all(Array.from({ length: 5 }, () => window.__dapp.requestAddresses())));
      const w = await opened;
      await w.getByTestId('unlock-first').waitFor();
      await h.screenshot(w, '60-dapp-unlock-first');
      await w.locator('input[name="password"]').fill(PASSWORD);
      await w.getByRole('button', { name: 'Unlock' }).click();
      await w.getByRole('heading', { name: 'Connect this site' }).waitFor();
      await approveIn(w);
      const results = await calls;
      expect(results.map((r) => r.ok && r.value)).toEqual(Array(5).fill([h.sandbox.demo.owner.address]));
      expect(windows - before).toBe(1);
    },
  );

  it('a refused order through walletClient.request opens exactly one window and submits nothing', async () => {
    const [before, sent] = [windows, submissions()];
    const opened = nextWindow();
    const r = request('perps_sendCommand', [ethOrder(await ethMark())]);
    await rejectIn(await opened);
    expect(await r).toMatchObject({ ok: false, code: 4001, type: 'Countersign.UserRejectedError' });
    await sleep(1500); // a retry would have opened a second window by now
    expect(windows - before).toBe(1);
    expect(submissions() - sent).toBe(0);
  });

  it(
    'a venue refusal (insufficient margin) comes back as ' + '-32003, once: one window, one submission, no retry',
    async () => {
      const [before, sent] = [windows, submissions()];
      const opened = nextWindow();
      const r = request('perps_sendCommand', [ethOrder(await ethMark(), undefined, '100000')]);
      await approveIn(await opened);
      expect(await r).toMatchObject({ ok: false, code: -32003, type: 'Countersign.VenueRefusedError' });
      await sleep(1500);
      expect(windows - before).toBe(1);
      expect(submissions() - sent).toBe(1);
    },
  );

  it(
    'a repeated request with the same client order ids joins ' +
      'the first: one window, one submission, the same answer',
    async () => {
      const [before, sent] = [windows, submissions()];
      const order = ethOrder(await ethMark(), 'cd'.repeat(16));
      const opened = nextWindow();
      const both = dapp.evaluate(
        (o) =>
          Promise.all([
            window.__dapp.request('perps_sendCommand', [o]),
            window.__dapp.request('perps_sendCommand', [o]),
          ]),
        order,
      );
      await approveIn(await opened);
      const [a, b] = await both;
      expect(a).toMatchObject({ ok: true });
      expect(b).toEqual(a);
      expect(windows - before).toBe(1);
      expect(submissions() - sent).toBe(1);
    },
  );

  it('events: lock → accountsChanged [], unlock → connect, the chain id setting → chainChanged', async () => {
    const seen = (await events()).length;
    expect((await send('vault.lock')).ok).toBe(true);
    await dapp.waitForFunction(
      (n) =>
        window.__dapp.events
          .slice(n)
          .some((e) => e.event === 'accountsChanged' && Array.isArray(e.data) && e.data.length === 0),
      seen,
    );
    expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
    await dapp.waitForFunction((n) => window.__dapp.events.slice(n).some((e) => e.event === 'connect'), seen);
    expect((await send('settings.set', { clobChainId: 137 })).ok).toBe(true);
    await dapp.waitForFunction(
      (n) => window.__dapp.events.slice(n).some((e) => e.event === 'chainChanged' && e.data === '0x89'),
      seen,
    );
    expect(await request('eth_chainId')).toEqual({ ok: true, value: '0x89' });
    expect((await send('settings.set', { clobChainId: 80002 })).ok).toBe(true);
    const got = (await events()).slice(seen);
    expect(got.find((e) => e.event === 'connect')?.data).toEqual({ chainId: '0x13882' });
    expect(
      got.some((e) => e.event === 'disconnect'),
      'lock is not a disconnect',
    ).toBe(false);
  });

  it(
    'wallet_grantPermissions: granted in one window; then a ' +
      'covered order signs with no window, an uncovered one asks',
    async () => {
      const before = windows;
      const opened = nextWindow();
      const granted = action('grantPermissions', {
        expiry: Math.floor(Date.now() / 1000) + 3600,
        limits: {
          venue: 'perps',
          instruments: [2],
          allow: { order: true, cancel: true },
          maxNotional: '2000',
          dailyNotional: '20000',
          priceBandPct: '2',
        },
      });
      const w = await opened;
      await w.getByRole('heading', { name: 'Allow this site to trade within limits' }).waitFor();
      await w.getByTestId('approval-lines').filter({ hasText: 'Perps venue only: ETH-PERP (#2).' }).waitFor();
      await h.screenshot(w, '61-dapp-grant-permissions');
      await approveIn(w);
      const g = await granted;
      expect(g).toMatchObject({
        ok: true,
        value: {
          grantedPermissions: [
            { type: 'countersign-grant', data: { venue: 'perps', instruments: [2], maxNotional: '2000' } },
          ],
        },
      });
      expect(windows - before).toBe(1);
      // Covered: ETH-PERP at the mark, 0.01 (≈ 30 USDC): no window.
      const sent = submissions();
      const covered = await action('perpsSendCommand', ethOrder(await ethMark()));
      expect(covered).toMatchObject({ ok: true });
      expect(windows - before).toBe(1);
      expect(submissions() - sent).toBe(1);
      // Uncovered: BTC-PERP is not in the grant: a window (rejected), nothing sent.
      const opened2 = nextWindow();
      const uncovered = action('perpsSendCommand', {
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.001', p: '1', tif: 'gtc', po: true }] },
      });
      await rejectIn(await opened2);
      expect(await uncovered).toMatchObject({ ok: false, code: 4001 });
      expect(windows - before).toBe(2);
      expect(submissions() - sent).toBe(1);
      // The site's EIP-2255 revoke ends the grant with the connection.
      expect(await action('revokeCountersign')).toMatchObject({ ok: true });
      expect(((await send('grant.list')).result as unknown[]).length).toBe(0);
    },
  );

  it(
    'EIP-2255: wallet_requestPermissions (one window) and wallet_getPermissions ' +
      'answer the eth_accounts permission; wallet_revokePermissions is ' +
      'accountsChanged [] and no disconnect; eth_chainId answers while locked',
    async () => {
      const origin = new URL(dapp.url()).origin;
      const owner = h.sandbox.demo.owner.address;
      const before = windows;
      const opened = nextWindow();
      const asked = request('wallet_requestPermissions', [{ eth_accounts: {} }]);
      await approveIn(await opened);
      const shape = {
        invoker: origin,
        parentCapability: 'eth_accounts',
        caveats: [{ type: 'restrictReturnedAccounts', value: [owner] }],
      };
      const got = await asked;
      expect(got).toMatchObject({ ok: true, value: [shape] });
      expect(typeof (got.value as { date: unknown }[])[0]!.date).toBe('number');
      expect(windows - before).toBe(1);
      expect(await request('wallet_getPermissions')).toMatchObject({ ok: true, value: [shape] });
      const seen = (await events()).length;
      expect(await request('wallet_revokePermissions', [{ eth_accounts: {} }])).toEqual({ ok: true, value: null });
      await dapp.waitForFunction(
        (n) =>
          window.__dapp.events
            .slice(n)
            .some((e) => e.event === 'accountsChanged' && Array.isArray(e.data) && e.data.length === 0),
        seen,
      );
      expect(await request('wallet_getPermissions')).toEqual({ ok: true, value: [] });
      expect(await request('eth_accounts')).toEqual({ ok: true, value: [] });
      // The provider still serves the chain: revoke is not a disconnect, nor is a lock.
      expect((await send('vault.lock')).ok).toBe(true);
      expect(await request('eth_chainId')).toEqual({ ok: true, value: '0x13882' });
      expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
      expect(
        (await events()).slice(seen).some((e) => e.event === 'disconnect'),
        'revoke / lock are not a disconnect',
      ).toBe(false);
    },
  );

  it(
    'clob_postOrders with an idempotencyKey sent twice at once (and through ' +
      "viem's retry policy): one window, one submission, the same answer",
    async () => {
      await reconnect();
      const [before, sent] = [windows, submissions()];
      const opened = nextWindow();
      const both = dapp.evaluate(
        (o) =>
          Promise.all([window.__dapp.request('clob_postOrders', [o]), window.__dapp.request('clob_postOrders', [o])]),
        clobOrder('join-1', '0.41'),
      );
      await approveIn(await opened);
      const [a, b] = await both;
      expect(a).toMatchObject({ ok: true, value: [{ success: true }] });
      expect(b).toEqual(a);
      expect(windows - before).toBe(1);
      expect(submissions() - sent).toBe(1);
    },
  );

  it(
    'a lost gateway answer: the unknown-outcome error with the ' +
      'order hashes, once; the repeat sends nothing and opens no window',
    async () => {
      const [before, sent] = [windows, submissions()];
      await silence('clob', true);
      let lost: Outcome;
      try {
        const opened = nextWindow();
        const r = request('clob_postOrders', [clobOrder('lost-1', '0.42')]);
        await approveIn(await opened);
        lost = await r; // the signer's deadline (15 s) passes with no answer
      } finally {
        await silence('clob', false);
      }
      expect(lost).toMatchObject({
        ok: false,
        code: -32002,
        type: 'Countersign.OutcomeUnknownError',
        data: { command: 'postOrders', idempotencyKey: 'lost-1' },
      });
      expect(String(lost.data?.orderHashes)).toMatch(/^0x[0-9a-f]{64}$/);
      expect(windows - before).toBe(1);
      const posted = submissions() - sent;
      expect(posted).toBeLessThanOrEqual(1);
      // The page (or a client's retry) asks again with the same key: the same error at once, nothing sent, no window.
      expect(await request('clob_postOrders', [clobOrder('lost-1', '0.42')])).toEqual(lost);
      expect(windows - before).toBe(1);
      expect(submissions() - sent).toBe(posted);
    },
  );

  // Last: the extension is reloaded under the page, so this page's content script can reach it no more.
  it(
    'disconnect when the extension cannot be reached (reloaded under the ' +
      'page): a ProviderRpcError instance (4900), the request a retryable 4900',
    async () => {
      const seen = await dapp.evaluate(() => window.__dapp.payloads.length);
      await h.worker
        .evaluate(() =>
          (globalThis as unknown as { chrome: { runtime: { reload: () => void } } }).chrome.runtime.reload(),
        )
        .catch(() => undefined);
      // The old worker is gone; this page's content script is orphaned: a request cannot open a port.
      let r: Outcome | undefined;
      for (let i = 0; i < 50; i++) {
        r = await request('eth_chainId');
        if (!r.ok) break;
        await sleep(100);
      }
      expect(r).toMatchObject({ ok: false, code: 4900, data: { retryable: true } });
      await dapp.waitForFunction((n) => window.__dapp.payloads.slice(n).some((e) => e.event === 'disconnect'), seen);
      const d = (await dapp.evaluate(() => window.__dapp.payloads.slice()))
        .slice(seen)
        .find((e) => e.event === 'disconnect');
      expect(d).toEqual({ event: 'disconnect', isError: true, name: 'ProviderRpcError', code: 4900 });
    },
  );
});
