/**
 * The bridge as a site uses it, in real Chromium against the sandbox's demo page: connect, a perps
 * order approved in the approval window and verified by the sandbox, a rejection (4001, nothing sent),
 * a withdrawal, an unconnected origin (4100), L2 headers that verify at the sandbox, a service-worker
 * stop during a pending approval (retryable error, nothing signed, retry succeeds), lock with a request
 * pending (4900), a fuzz of malformed requests, and scans for secrets in messages and in the profile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchHarness, scanFiles, type Harness } from './harness';
import { internalTransfer } from '../../lib/perps/commands';
import { createProxyTypedData, perpsOpTypedData, withdrawTypedData } from '../../lib/perps/signing';
import { clobAuthTypedData } from '../../lib/clob/auth';
import { buildClobOrder, clobOrderTypedData, EXCHANGE_V2 } from '../../lib/clob/order';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
const frames: unknown[] = [];
let approvalWindows = 0;

declare const chrome: { runtime: { sendMessage: (m: unknown) => Promise<unknown> } };
type Last = {
  ok: boolean;
  label: string;
  value?: unknown;
  code?: number;
  message?: string;
  data?: { retryable?: boolean };
};

async function send(type: string, payload: unknown = {}) {
  return popup.evaluate(([t, p]) => chrome.runtime.sendMessage({ type: t, payload: p }), [
    type,
    payload,
  ] as const) as Promise<{ ok: boolean; result?: unknown; error?: unknown }>;
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
  await w.waitForFunction(
    () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
    undefined,
    { timeout: 5_000 },
  );
  await btn.click();
}

async function lastResult(label: string): Promise<Last> {
  await demo.waitForFunction((l) => (window as unknown as { __last?: { label: string } }).__last?.label === l, label, {
    timeout: 15_000,
  });
  const last = await demo.evaluate(() => (window as unknown as { __last: Last }).__last);
  await demo.evaluate(() => delete (window as unknown as { __last?: unknown }).__last);
  return last;
}

const tradingRequests = () =>
  h.sandbox.ctx.requestLog.filter(
    (r) => /^\/perps\/v1\/(trade|account\/withdraw)|^\/clob\/orders?$/.test(r.path) && r.method !== 'GET',
  ).length;

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
    const rt = (
      globalThis as unknown as { chrome?: { runtime?: { sendMessage?: (...a: unknown[]) => Promise<unknown> } } }
    ).chrome?.runtime;
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
  expect(
    (
      await send('proxy.import', {
        account: h.sandbox.demo.owner.address,
        privateKey: p.privateKey,
        proxy: p.address,
        secret: p.secret,
        expiry: p.expiry,
      })
    ).ok,
  ).toBe(true);
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

  it(
    'places a perps order shown decoded in the approval ' + 'window; the sandbox verifies it and get-orders reports it',
    async () => {
      const w = await clickAndApprovalWindow('order');
      await w
        .getByTestId('approval-lines')
        .filter({
          hasText:
            'Buy 0.50 ETH-PERP (#2) at 3,000.00, good-til-cancelled, post-only — request weight 1, action weight 1',
        })
        .waitFor();
      await w.getByText('proxy key').waitFor();
      await w.getByTestId('approval-account').filter({ hasText: '0x5a' }).waitFor();
      await h.screenshot(w, '21-approval-order');
      const [pending] = (await send('approval.list')).result as {
        artifact: { envelope: Record<string, unknown>; signDigests: string[] };
        digest: string;
      }[];
      await w
        .getByTestId('approval-digest')
        .filter({ hasText: pending!.digest.slice(0, 10) })
        .waitFor();
      const mark = h.sandbox.ctx.requestLog.length;
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
      // What the sandbox received is byte for byte the artifact the window showed, plus the signature.
      const received = h.sandbox.ctx.requestLog.slice(mark).find((x) => x.path === '/perps/v1/trade/orders')!;
      const { sig: _sig, ...sent } = JSON.parse(received.body!) as Record<string, unknown>;
      expect(sent).toEqual(pending!.artifact.envelope);
      const o = h.sandbox.ctx.venue.orders.get(oid)!;
      expect(o).toMatchObject({ status: 'open', iid: 2, po: true, qty: 50_000_000n });
    },
  );

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
    await w2
      .getByText(/Buy 10\.00 shares of token .* at 0\.40 \(pay 4\.00 USDC\), good-til-cancelled/)
      .first()
      .waitFor();
    await approve(w2);
    const r = await lastResult('clob');
    expect((r.value as { success: boolean }[])[0]!.success).toBe(true);
  });

  it('while a request is pending the badge counts it and the popup opens on the same approval queue', async () => {
    const before = tradingRequests();
    const w = await clickAndApprovalWindow('order');
    await w.getByTestId('approval-lines').waitFor();
    const text = await h.worker.evaluate(() =>
      (
        globalThis as unknown as { chrome: { action: { getBadgeText: (o: object) => Promise<string> } } }
      ).chrome.action.getBadgeText({}),
    );
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
        .then(
          () => 0,
          (e: { code: number }) => e.code,
        ),
    );
    expect(code).toBe(4100);
    await other.close();
  });

  it(
    'stopping the service worker during a pending approval gives ' +
      'a retryable error, signs nothing, and a retry goes through',
    async () => {
      const before = tradingRequests();
      const w = await clickAndApprovalWindow('order');
      await w.getByTestId('approval-lines').waitFor();
      const [shown] = (await send('approval.list')).result as { id: string; digest: string }[];
      expect(shown).toBeDefined();
      const cdp = await h.ctx.newCDPSession(popup);
      await cdp.send('ServiceWorker.enable');
      await cdp.send('ServiceWorker.stopAllWorkers');
      const r = await lastResult('order');
      expect(r).toMatchObject({ ok: false, code: 4900, data: { retryable: true } });
      // The window's request is gone: approving it now (the decision its Approve button sends, with the
      // id and digest it showed) is refused, and the sandbox receives nothing signed.
      const decided = await send('approval.decide', { id: shown!.id, approve: true, digest: shown!.digest });
      expect(decided).toMatchObject({ ok: false });
      await popup.waitForTimeout(500);
      expect(tradingRequests()).toBe(before);
      await w.close().catch(() => undefined);
      const w2 = await clickAndApprovalWindow('order');
      await approve(w2);
      expect((await lastResult('order')).ok).toBe(true);
      expect(tradingRequests()).toBe(before + 1);
    },
  );

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

  it(
    'answers 2 400 malformed or refused requests with the EIP-1193 code ' +
      'of their class (never -32603), opens no window, and sends nothing',
    async () => {
      const before = tradingRequests();
      const windowsBefore = approvalWindows;
      const results = await demo.evaluate(async () => {
        const p = (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign;
        const bad: [string, unknown][] = [];
        const decimals = ['1e2', '+1', '1 ', 'NaN', 'Infinity', '-1', '٣', '', '0x10', '1..2'];
        const typed = ['Op', 'Withdraw', 'CreateProxy', 'ClobAuth', 'Order', 'Permit'];
        for (let i = 0; i < 2400; i++) {
          const k = i % 12;
          const d = decimals[i % decimals.length];
          if (k === 0)
            bad.push([
              'bad decimal',
              {
                method: 'perps_sendCommand',
                params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: d, tif: 'ioc' }] } },
              },
            ]);
          else if (k === 1)
            bad.push([
              'long coid',
              { method: 'perps_sendCommand', params: { op: { type: 'cancelOrdersCOID', args: ['a'.repeat(33)] } } },
            ]);
          else if (k === 2)
            bad.push([
              '__proto__ key',
              {
                method: 'perps_sendCommand',
                params: JSON.parse('{"__proto__":{"x":1},"op":{"type":"cancelOrders","args":[1]}}'),
              },
            ]);
          else if (k === 3)
            bad.push([
              'wrong types',
              {
                method: 'perps_sendCommand',
                params: { op: { type: 'createOrders', args: [{ iid: '2', buy: 'yes', qty: 1 }] } },
              },
            ]);
          else if (k === 4) bad.push(['no params', { method: 'perps_sendCommand' }]);
          else if (k === 5) bad.push(['unknown method', { method: `eth_unknown_${i}`, params: [] }]);
          else if (k === 6)
            bad.push(['oversize', { method: 'clob_postOrders', params: { orders: 'x'.repeat(70_000 + i) } }]);
          else if (k === 7)
            bad.push([
              'bad clob order',
              {
                method: 'clob_postOrders',
                params: { orders: [{ tokenId: '1', side: 'buy', price: d, size: '10', orderType: 'GTC' }] },
              },
            ]);
          else if (k === 8)
            bad.push([
              'bad withdraw',
              {
                method: 'perps_sendCommand',
                params: { op: { type: 'withdraw', args: { account: '0x1', token: 1, amount: '1.5', to: null } } },
              },
            ]);
          else if (k === 9) bad.push(['method not a string', { method: 42, params: i }]);
          else if (k === 10) {
            const primaryType = typed[i % typed.length];
            bad.push([
              'typed data',
              {
                method: 'eth_signTypedData_v4',
                params: [
                  '0x0000000000000000000000000000000000000001',
                  JSON.stringify({
                    domain: { name: 'x', version: '1', chainId: 80002 },
                    types: { [primaryType!]: [{ name: 'data', type: 'bytes32' }] },
                    primaryType,
                    message: { data: `0x${'ab'.repeat(32)}` },
                  }),
                ],
              },
            ]);
          } else
            bad.push([
              'auth route',
              {
                method: 'clob_signRequest',
                params: {
                  method: i % 2 ? 'GET' : 'POST',
                  requestPath: i % 3 ? '/auth/derive-api-key' : '/auth/api-key',
                },
              },
            ]);
        }
        return Promise.all(
          bad.map(([cls, b]) =>
            p.request(b).then(
              () => [cls, 'resolved'] as const,
              (e: { code?: unknown }) => [cls, e.code] as const,
            ),
          ),
        );
      });
      const expected: Record<string, number> = {
        'bad decimal': -32602,
        'long coid': -32602,
        '__proto__ key': -32602,
        'wrong types': -32602,
        'no params': -32602,
        'unknown method': 4200,
        oversize: -32602,
        'bad clob order': -32602,
        'bad withdraw': -32602,
        'method not a string': -32600,
        'typed data': 4200,
        'auth route': 4200,
      };
      expect(results).toHaveLength(2400);
      const seen: Record<string, Record<string, number>> = {};
      for (const [cls, code] of results) {
        seen[cls] ??= {};
        seen[cls]![String(code)] = (seen[cls]![String(code)] ?? 0) + 1;
      }
      console.log('fuzz: codes per input class', JSON.stringify(seen));
      for (const [cls, code] of results) expect(code, cls).toBe(expected[cls]);
      expect(approvalWindows).toBe(windowsBefore);
      expect(tradingRequests()).toBe(before);
    },
  );

  it(
    'a connected page cannot get an owner-key signature over Op, Withdraw, ' +
      'CreateProxy, ClobAuth or Order typed data: 4200, no window, nothing signed',
    async () => {
      const owner = h.sandbox.demo.owner.address;
      const domain = h.sandbox.ctx.config.perpsDomain;
      const transfer = internalTransfer({
        account: owner,
        token: h.sandbox.ctx.config.usdc,
        amount: '5000',
        to: h.sandbox.demo.counterparty.address,
      });
      const order = buildClobOrder({
        signer: owner,
        signatureType: 0,
        tokenId: h.sandbox.ctx.clob.markets[0]!.tokenIds[0]!,
        side: 'BUY',
        makerAmount: '1000000',
        takerAmount: '2000000',
        timestampMs: Date.now(),
      });
      const nowS = Math.floor(Date.now() / 1000);
      const payloads = [
        perpsOpTypedData({ domain, op: transfer.op, salt: 77, ts: Date.now() }),
        withdrawTypedData({
          domain: h.sandbox.ctx.config.perpsWithdrawDomain,
          account: owner,
          token: h.sandbox.ctx.config.usdc,
          amount: 5_000_000_000n,
          to: h.sandbox.demo.counterparty.address as `0x${string}`,
          salt: 1,
          ts: nowS,
        }),
        createProxyTypedData({
          domain,
          proxy: h.sandbox.demo.counterparty.address as `0x${string}`,
          expiry: Date.now() + 3_600_000,
          salt: 1,
          ts: Date.now(),
        }),
        clobAuthTypedData(owner as `0x${string}`, { chainId: 80002, timestamp: nowS, nonce: 0 }),
        clobOrderTypedData({ chainId: 80002, verifyingContract: EXCHANGE_V2, order }),
      ].map((td) => JSON.stringify(td, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
      const auditBefore = ((await send('audit.list', { limit: 500 })).result as unknown[]).length;
      const before = tradingRequests();
      const windowsBefore = approvalWindows;
      const answers = await demo.evaluate(
        async ([account, list]) => {
          const p = (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign;
          return Promise.all(
            list.map((td) =>
              p.request({ method: 'eth_signTypedData_v4', params: [account, td] }).then(
                (r) => ({ signed: r }),
                (e: { code: number; message: string }) => ({ code: e.code, message: e.message }),
              ),
            ),
          );
        },
        [owner, payloads] as const,
      );
      expect(answers.map((a) => (a as { code?: number }).code)).toEqual([4200, 4200, 4200, 4200, 4200]);
      expect((answers[0] as { message: string }).message).toContain('perps_sendCommand');
      expect((answers[3] as { message: string }).message).toContain('only in the extension');
      expect((answers[4] as { message: string }).message).toContain('clob_postOrders');
      await demo.waitForTimeout(300);
      expect(approvalWindows).toBe(windowsBefore);
      expect(((await send('audit.list', { limit: 500 })).result as unknown[]).length).toBe(auditBefore);
      expect(tradingRequests()).toBe(before);
    },
  );

  it('no message to pages or extension pages carries a private key, proxy secret or API secret', async () => {
    for (const p of [demo, popup])
      frames.push(...((await p.evaluate(() => (window as unknown as { __frames: unknown[] }).__frames)) ?? []));
    expect(frames.length).toBeGreaterThan(50);
    const text = JSON.stringify(frames);
    const creds = [...h.sandbox.ctx.clob.creds.values()].filter((c) => c.address === h.sandbox.demo.owner.address);
    // The passphrase is one of the five L2 headers a page asked for (clob_signRequest); the secret is not.
    const secrets = [
      h.sandbox.demo.owner.privateKey.slice(2),
      h.sandbox.demo.proxy.privateKey.slice(2),
      h.sandbox.demo.proxy.secret,
      ...creds.map((c) => c.secret),
    ];
    for (const s of secrets) expect(text.includes(s), 'a secret reached a page or the popup').toBe(false);
  });

  it('after lock and browser close, no secret appears in clear anywhere in the profile directory', async () => {
    expect((await send('vault.lock')).ok).toBe(true);
    await h.ctx.close();
    const creds = [...h.sandbox.ctx.clob.creds.values()].filter((c) => c.address === h.sandbox.demo.owner.address);
    const secrets = [
      h.sandbox.demo.owner.privateKey.slice(2),
      h.sandbox.demo.proxy.privateKey.slice(2),
      h.sandbox.demo.proxy.secret,
      ...creds.flatMap((c) => [c.secret, c.passphrase]),
    ];
    const needles = secrets.flatMap((s) => [Buffer.from(s, 'latin1'), Buffer.from(s, 'utf16le')]);
    const { files, hits } = scanFiles(h.userDataDir, needles);
    expect(files).toBeGreaterThan(10);
    expect(hits).toEqual([]);
  });
});
