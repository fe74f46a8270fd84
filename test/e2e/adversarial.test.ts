/**
 * The security boundary tested the way attackers work, in real Chromium against the
 * sandbox, bounded in count and time: 10 000+ fuzzed provider requests across methods; forged frames
 * from the page itself, a cross-origin iframe and a sandboxed (null-origin) iframe; about:blank, data:
 * and file: contexts; the approval page framed or opened by a page; two racing approvals of one
 * request; approve after lock; double-click and double-Enter on Approve. It prints, and asserts:
 * requests sent, signatures produced without consent (0), submissions per approval (exactly 1),
 * requests left unanswered (0). Invariants: lib/approvals/README.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startDemoSession, scanFiles, type Harness } from './harness';

const PASSWORD = 'correct horse battery staple';
let h: Harness;
let demo: Page;
let popup: Page;
let windowCount: () => number = () => 0;
const stats = { sent: 0, withoutConsent: 0, unanswered: 0, approvals: 0, submissions: 0 };

declare const chrome: {
  runtime: { sendMessage: (m: unknown) => Promise<{ ok: boolean; result?: unknown; error?: { name: string } }> };
};
type Provider = { request: (a: unknown) => Promise<unknown> };
let send: Awaited<ReturnType<typeof startDemoSession>>['send'];
const trades = () =>
  h.sandbox.ctx.requestLog.filter(
    (r) => r.method !== 'GET' && /^\/perps\/v1\/(trade|account)|^\/clob\/(orders?|auth|cancel)/.test(r.path),
  ).length;
const audits = async () => ((await send('audit.list', { limit: 500 })).result as unknown[]).length;
/** The real approval window showing a pending request (not a blocked tab a page tried to open). */
async function approvalWindow(): Promise<Page> {
  for (let i = 0; i < 100; i++) {
    for (const p of h.ctx.pages()) {
      if (
        !p.isClosed() &&
        p.url() === `chrome-extension://${h.extensionId}/approval.html` &&
        (await p
          .getByTestId('approve')
          .count()
          .catch(() => 0)) > 0
      )
        return p;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no approval window');
}
const order = (p: string) => ({
  method: 'perps_sendCommand',
  params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p, tif: 'gtc', po: true }] } },
});
const ask = (body: unknown) =>
  demo.evaluate(
    (b) =>
      (window as unknown as { countersign: Provider }).countersign.request(b).then(
        (r) => ({ ok: true, r }),
        (e: { code: number }) => ({ ok: false, code: e.code }),
      ),
    body,
  ) as Promise<{ ok: boolean; code?: number }>;

beforeAll(async () => {
  ({ h, popup, send, demo, windows: windowCount } = await startDemoSession(PASSWORD));
});
afterAll(async () => {
  console.log(
    `adversarial: requests sent ${stats.sent}, signatures without consent ` +
      `${stats.withoutConsent}, approvals ${stats.approvals} → submissions ` +
      `${stats.submissions} (exactly 1 each), unanswered ${stats.unanswered}`,
  );
  await h?.close();
});

describe('adversarial browser suite', () => {
  it(
    '10 000 fuzzed requests across methods: every one answered ' +
      'with its class code, no window, no signature, nothing sent',
    async () => {
      const tradesBefore = trades();
      const auditBefore = await audits();
      const windowsBefore = windowCount();
      const N = 10_000;
      const results = await demo.evaluate(async (n) => {
        const p = (window as unknown as { countersign: Provider }).countersign;
        const bad = ['1e2', 'NaN', '+1', '١', '0x10', '-1', '', '1..2', ' 1', 'Infinity'];
        const deep = (d: number): unknown => (d === 0 ? 1 : { a: deep(d - 1) });
        const gen = (i: number): [string, unknown] => {
          const d = bad[i % bad.length];
          switch (i % 16) {
            case 0:
              return [
                'decimal',
                {
                  method: 'perps_sendCommand',
                  params: {
                    op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: d, p: '3000', tif: 'gtc' }] },
                  },
                },
              ];
            case 1:
              return [
                'decimal',
                {
                  method: 'perps_sendCommand',
                  params: { op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '1', p: d, tif: 'gtc' }] } },
                },
              ];
            case 2:
              return [
                'wrong type',
                {
                  method: 'perps_sendCommand',
                  params: { op: { type: 'createOrders', args: [{ iid: '2', buy: 1, qty: 1 }] } },
                },
              ];
            case 3:
              return ['oversize', { method: 'clob_postOrders', params: { orders: 'x'.repeat(66_000) } }];
            case 4:
              return ['deep', { method: 'perps_sendCommand', params: { op: deep(60) } }];
            case 5:
              return [
                'proto key',
                {
                  method: 'perps_sendCommand',
                  params: JSON.parse('{"op":{"type":"cancelOrders","args":[1]},"__proto__":{"admin":true}}'),
                },
              ];
            case 6:
              return [
                'constructor key',
                {
                  method: 'perps_sendCommand',
                  params: { op: { type: 'cancelOrders', args: [1], constructor: { prototype: { x: 1 } } } },
                },
              ];
            case 7: {
              const o: Record<string, unknown> = { op: { type: 'cancelOrders', args: [1] } };
              Object.defineProperty(o, 'exp', { enumerable: true, get: () => Date.now() + 10_000 });
              return ['getter', { method: 'perps_sendCommand', params: { ...o, label: 'x'.repeat(10) } }];
            }
            case 8:
              return [
                'long label',
                {
                  method: 'perps_sendCommand',
                  params: {
                    op: {
                      type: 'internalTransfer',
                      args: {
                        account: '0x0000000000000000000000000000000000000001',
                        token: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
                        amount: '1',
                        to: '0x0000000000000000000000000000000000000002',
                      },
                    },
                    label: 'ł'.repeat(40),
                  },
                },
              ];
            case 9:
              return [
                'huge batch',
                {
                  method: 'perps_sendCommand',
                  params: { op: { type: 'cancelOrders', args: Array.from({ length: 101 }, (_, k) => k + 1) } },
                },
              ];
            case 10:
              return [
                'huge batch',
                {
                  method: 'clob_postOrders',
                  params: {
                    orders: Array.from({ length: 16 }, () => ({
                      tokenId: '1',
                      side: 'BUY',
                      price: '0.5',
                      size: '10',
                      orderType: 'GTC',
                    })),
                  },
                },
              ];
            case 11:
              return [
                'negative',
                {
                  method: 'perps_sendCommand',
                  params: { op: { type: 'updateLeverage', args: { iid: 2, lev: -3, cross: true } } },
                },
              ];
            case 12:
              return ['unknown method', { method: `eth_sign${i}`, params: ['0x00', '0x00'] }];
            case 13:
              return [
                'typed data',
                {
                  method: 'eth_signTypedData_v4',
                  params: [
                    '0x0000000000000000000000000000000000000001',
                    { primaryType: ['Op', 'Withdraw', 'ClobAuth', 'Order'][i % 4], domain: {}, types: {}, message: {} },
                  ],
                },
              ];
            case 14:
              return [
                'auth route',
                {
                  method: 'clob_signRequest',
                  params: { method: 'GET', requestPath: i % 2 ? '/auth/derive-api-key' : '/auth/api-keys' },
                },
              ];
            default:
              return ['not a request', i % 2 ? { params: 1 } : { method: 17 }];
          }
        };
        const out: [string, unknown][] = [];
        for (let start = 0; start < n; start += 500) {
          const chunk = Array.from({ length: Math.min(500, n - start) }, (_, k) => gen(start + k));
          const settled = await Promise.all(
            chunk.map(([cls, body]) =>
              Promise.race([
                p.request(body).then(
                  () => 'resolved',
                  (e: { code?: unknown }) => e.code,
                ),
                new Promise((r) => setTimeout(() => r('unanswered'), 20_000)),
              ]).then((code) => [cls, code] as [string, unknown]),
            ),
          );
          out.push(...settled);
        }
        return out;
      }, N);
      stats.sent += results.length;
      const expected: Record<string, number> = {
        decimal: -32602,
        'wrong type': -32602,
        oversize: -32602,
        deep: -32602,
        'proto key': -32602,
        'constructor key': -32602,
        getter: -32602,
        'long label': -32602,
        'huge batch': -32602,
        negative: -32602,
        'unknown method': 4200,
        'typed data': 4200,
        'auth route': 4200,
        'not a request': -32600,
      };
      const seen: Record<string, Record<string, number>> = {};
      for (const [cls, code] of results) {
        (seen[cls] ??= {})[String(code)] = (seen[cls]![String(code)] ?? 0) + 1;
        if (code === 'unanswered') stats.unanswered++;
        if (code === 'resolved') stats.withoutConsent++;
      }
      console.log('adversarial fuzz: codes per class', JSON.stringify(seen));
      for (const [cls, code] of results) expect(code, cls).toBe(expected[cls]);
      // Every class of the table was sent (generator case i % 16 → class) and each of its requests answered
      // once with the class's code: the tally per class and code is exact, nothing unanswered or resolved.
      const perCase = N / 16;
      const sent: Record<string, number> = { decimal: 2 * perCase, 'huge batch': 2 * perCase };
      for (const cls of Object.keys(expected)) sent[cls] ??= perCase;
      expect(seen).toEqual(
        Object.fromEntries(Object.entries(expected).map(([cls, code]) => [cls, { [String(code)]: sent[cls] }])),
      );
      expect(windowCount()).toBe(windowsBefore);
      expect(trades()).toBe(tradesBefore);
      expect(await audits()).toBe(auditBefore);
    },
    240_000,
  );

  it(
    'forged frames from the page, a cross-origin iframe ' + 'and a sandboxed iframe never reach the background',
    async () => {
      const before = trades();
      const windowsBefore = windowCount();
      const replies = await demo.evaluate(
        async (other) => {
          const got: unknown[] = [];
          window.addEventListener('message', (e) => {
            if (
              (e.data as { target?: string })?.target === 'countersign:page' &&
              (e.data as { id?: string }).id?.startsWith('forged')
            )
              got.push(e.data);
          });
          const frame = {
            target: 'countersign:content',
            method: 'perps_sendCommand',
            params: { op: { type: 'cancelAll', args: {} } },
          };
          // A reply frame forged by the page itself is not an answer the provider waits for.
          window.postMessage({ target: 'countersign:page', id: 'forged-reply', result: 'ok' }, '*');
          // Two frames with one id: the second is refused while the first is pending (-32600).
          const dup = { target: 'countersign:content', id: 'forged-dup', method: 'eth_chainId' };
          window.postMessage(dup, '*');
          window.postMessage(
            { ...dup, method: 'perps_sendCommand', params: { op: { type: 'cancelAll', args: {} } } },
            '*',
          );
          // Frames from a sandboxed (null-origin) and a cross-origin iframe to the parent.
          const sandboxed = document.createElement('iframe');
          sandboxed.setAttribute('sandbox', 'allow-scripts');
          sandboxed.srcdoc =
            `<script>parent.postMessage(${JSON.stringify({ ...frame, id: 'forged-null' })}, ` + `'*')</script>`;
          document.body.append(sandboxed);
          const cross = document.createElement('iframe');
          cross.src = `${other}/demo`;
          document.body.append(cross);
          await new Promise((r) => cross.addEventListener('load', r));
          cross.contentWindow!.postMessage({ ...frame, id: 'forged-cross' }, '*');
          await new Promise((r) => setTimeout(r, 1_000));
          return got.filter((g) => (g as { id: string }).id !== 'forged-reply');
        },
        h.sandbox.url.replace('127.0.0.1', 'localhost'),
      );
      // Only the page's own frames are answered: the duplicate id once with -32600, the first with the chain id.
      const dups = (replies as { id: string; result?: unknown; error?: { code: number } }[]).filter(
        (r) => r.id === 'forged-dup',
      );
      expect(dups.map((r) => r.error?.code ?? r.result).sort()).toEqual([-32600, '0x13882'].sort());
      expect(replies.filter((r) => (r as { id: string }).id !== 'forged-dup')).toEqual([]);
      expect(windowCount()).toBe(windowsBefore);
      expect(trades()).toBe(before);
    },
  );

  it('about:blank, data: and file: contexts get no provider', async () => {
    const file = join(h.userDataDir, '..', `countersign-adv-${Date.now()}.html`);
    writeFileSync(file, '<!doctype html><p>local</p>');
    for (const url of ['about:blank', 'data:text/html,<p>data</p>', `file://${file}`]) {
      const p = await h.ctx.newPage();
      await p.goto(url);
      expect(await p.evaluate(() => typeof (window as unknown as { countersign?: unknown }).countersign), url).toBe(
        'undefined',
      );
      await p.close();
    }
  });

  it('a page cannot frame or open the approval page', async () => {
    const id = h.extensionId;
    const framed = await demo.evaluate(async (ext) => {
      const f = document.createElement('iframe');
      f.src = `chrome-extension://${ext}/approval.html`;
      document.body.append(f);
      await new Promise((r) => setTimeout(r, 1_000));
      try {
        return f.contentDocument?.querySelector('[data-testid="approve"]') ? 'approve reachable' : 'no access';
      } catch {
        return 'no access';
      }
    }, id);
    expect(framed).toBe('no access');
    const opened = h.ctx.waitForEvent('page', { timeout: 3_000 }).catch(() => undefined);
    await demo.evaluate((ext) => void window.open(`chrome-extension://${ext}/approval.html`), id);
    const tab = await opened;
    if (tab) {
      await tab.waitForLoadState().catch(() => undefined);
      expect(await tab.getByTestId('approve').count()).toBe(0);
      await tab.close();
    }
  });

  it(
    'two racing approvals of one request, and double-click ' + '/ double-Enter on Approve, submit exactly once',
    async () => {
      for (const how of ['race', 'double-click', 'double-enter'] as const) {
        const before = h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders').length;
        const req = ask(order(String(3000 - stats.approvals)));
        const win = await approvalWindow();
        await win.bringToFront();
        await win.waitForFunction(() => {
          const b = document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null;
          return !!b && !b.disabled;
        });
        if (how === 'race') {
          const [pending] = (await send('approval.list')).result as { id: string; digest: string }[];
          const decide = {
            type: 'approval.decide',
            payload: { id: pending!.id, approve: true, digest: pending!.digest },
          };
          const [a, b] = await Promise.all([
            win.evaluate((m) => chrome.runtime.sendMessage(m), decide),
            popup.evaluate((m) => chrome.runtime.sendMessage(m), decide),
          ]);
          expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
        } else if (how === 'double-click') {
          // The first click approves; the window may close before the second lands (the background closes an empty
          // window).
          await win
            .getByTestId('approve')
            .dblclick()
            .catch(() => undefined);
        } else {
          await win.getByTestId('approve').focus();
          // The first Enter approves; the window may close before its keyup (the background closes an empty window).
          await win.keyboard.press('Enter').catch(() => undefined);
          await win.keyboard.press('Enter').catch(() => undefined);
        }
        expect((await req).ok).toBe(true);
        await demo.waitForTimeout(300);
        stats.approvals++;
        const submitted = h.sandbox.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/orders').length - before;
        stats.submissions += submitted;
        expect(submitted, how).toBe(1);
        await win.close().catch(() => undefined);
      }
    },
  );

  it(
    'closing the approval window rejects only what it showed: ' +
      'a request that arrived meanwhile gets its own window',
    async () => {
      const first = ask(order('2995'));
      const win = await approvalWindow();
      await win.bringToFront();
      // Freeze the window on the first request (no more polling), as a window does in its last moments.
      await win.evaluate(() => {
        for (let i = 0; i < 10_000; i++) clearInterval(i);
      });
      const [shown] = (await send('approval.list')).result as { id: string; digest: string }[];
      expect((await send('approval.decide', { id: shown!.id, approve: true, digest: shown!.digest })).ok).toBe(true);
      expect((await first).ok).toBe(true);
      // A second request arrives; the window closes before it ever showed it.
      const second = ask(order('2994'));
      for (let i = 0; i < 50 && ((await send('approval.list')).result as unknown[]).length === 0; i++)
        await demo.waitForTimeout(50);
      const next = h.ctx.waitForEvent('page', {
        predicate: (p) => p.url().endsWith('/approval.html'),
        timeout: 10_000,
      });
      await win.close();
      // Not rejected: it is shown in a new window and can be approved.
      const w2 = await next;
      await w2.bringToFront();
      await w2.waitForFunction(() => {
        const b = document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null;
        return !!b && !b.disabled;
      });
      await w2.getByTestId('approve').click();
      expect(await second).toMatchObject({ ok: true });
    },
  );

  it('approving after lock signs nothing', async () => {
    const before = trades();
    const req = ask(order('2990'));
    const win = await approvalWindow();
    const [pending] = (await send('approval.list')).result as { id: string; digest: string }[];
    expect((await send('vault.lock')).ok).toBe(true);
    expect(await req).toMatchObject({ ok: false, code: 4900 });
    const late = await send('approval.decide', { id: pending!.id, approve: true, digest: pending!.digest });
    expect(late.ok).toBe(false);
    expect(trades()).toBe(before);
    await win.close().catch(() => undefined);
    expect((await send('vault.unlock', { password: PASSWORD })).ok).toBe(true);
  });

  it(
    'at rest: no secret in any file of the profile, in hex, ' + 'base64 or UTF-16 form (after lock and browser close)',
    async () => {
      expect((await send('vault.lock')).ok).toBe(true);
      await h.ctx.close();
      const creds = [...h.sandbox.ctx.clob.creds.values()].filter((c) => c.address === h.sandbox.demo.owner.address);
      const hexKeys = [h.sandbox.demo.owner.privateKey, h.sandbox.demo.proxy.privateKey].map((k) => k.slice(2));
      const strings = [h.sandbox.demo.proxy.secret, PASSWORD, ...creds.flatMap((c) => [c.secret, c.passphrase])];
      const forms = (s: string) => [
        Buffer.from(s, 'latin1'),
        Buffer.from(s, 'utf16le'),
        Buffer.from(Buffer.from(s).toString('base64').replace(/=+$/, ''), 'latin1'),
      ];
      const needles = [
        ...hexKeys.flatMap((k) => [
          ...forms(k),
          ...forms(k.toUpperCase()),
          Buffer.from(k, 'hex'),
          Buffer.from(Buffer.from(k, 'hex').toString('base64').replace(/=+$/, ''), 'latin1'),
        ]),
        ...strings.flatMap(forms),
        ...creds.map((c) => Buffer.from(c.secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64')),
      ];
      const { files, hits } = scanFiles(h.userDataDir, needles);
      console.log(`at rest: scanned ${files} files for ${needles.length} secret forms, found ${hits.length}`);
      expect(files).toBeGreaterThan(10);
      expect(hits).toEqual([]);
    },
  );
});
