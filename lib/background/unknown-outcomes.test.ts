/**
 * Unknown outcomes are stored and keep a submission from leaving twice: they are keyed per client order
 * id and page key, with an in-flight record before signing (`lib/page/idempotency.ts`, `lib/page/outcomes.ts`),
 * and survive a worker restart, a lock and an account switch; a 5xx after a submission left is an unknown outcome
 * (`lib/signer/service.ts` `isKnownRefusal`), never a code a client retries. Also: a replaced grant ends before the
 * next signature (`lib/grants/service.ts`), and EIP-1193 `connect` / lock events reach connected sites only. The real
 * background on the fake browser against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey } from 'viem/accounts';
import type { Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import {
  BOUNDS,
  browser,
  KDF,
  onboardDemo,
  type PagedBackground,
  pageSender,
  pagePathKit,
  recordingFetch,
  sandboxSuite,
  type SentRequest,
  sleep,
  until,
  waitPending,
  withPages,
  VIEM_RETRIES,
  btcOnly,
  perpsPosts,
  connectSite,
} from '../../test/kits/background';
import { userRejected } from '../errors/rpc';

const SITE = 'https://trade.example';
const EVIL = 'https://evil.example';
const page = pageSender(SITE, 3);
const evilPage = pageSender(EVIL, 4);
type Bg = PagedBackground;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, owner, mark, armed, grantOf, codeOf } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'unknown-outcomes',
});
let n = 0;
const dataOf = (e: unknown) => (e as { data?: Record<string, unknown> }).data;

type Wire = {
  sent: SentRequest[];
  /** Holds the venue's answer (the request already reached it) until `answerGate` resolves. */
  holdAnswer?: (url: string, method: string) => boolean;
  answerGate?: Promise<void>;
  /** Replaces the venue's answer (the request already reached it) with this one. */
  replaceAnswer?: (url: string, method: string) => Response | undefined;
};

async function ready(
  o: { connect?: boolean; dbName?: string; onboard?: boolean; wire?: Wire } = {},
): Promise<{ bg: Bg; wire: Wire; dbName: string }> {
  const wire: Wire = o.wire ?? { sent: [] };
  const fetchFn = recordingFetch(wire, {
    onAnswer: async (url, method, res) => {
      if (wire.answerGate && wire.holdAnswer?.(url, method)) await wire.answerGate;
      return wire.replaceAnswer?.(url, method) ?? res;
    },
  });
  const dbName = o.dbName ?? `unknown-outcomes-${n++}`;
  const bg = withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn }));
  started.push(bg);
  if (o.onboard !== false) await onboardDemo(bg, h, page, o);
  return { bg, wire, dbName };
}
const connect = connectSite;
const clobPosts = (w: Wire) => w.sent.filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(s.url)).length;
const keyedOrder = async (key: string, qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(1), tif: 'gtc', po: true }] },
  idempotencyKey: key,
});
const coidOrder = async (coid: string, qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(1), tif: 'gtc', po: true, c: coid }] },
});
/** A taker order (IOC, 0.5 % through the mark): it fills at once, so its client order id is free again at the venue. */
const iocCoidOrder = async (coid: string, qty = '0.01') => ({
  op: {
    type: 'createOrders',
    args: [{ iid: 1, buy: true, qty, p: (Number(await mark(1)) * 1.005).toFixed(1), tif: 'ioc', c: coid }],
  },
});
const settle = <T>(p: Promise<T>) =>
  p.then(
    (r) => ({ r }),
    (e: unknown) => ({ e }),
  );
const expiryIn = (s: number) => Math.floor(Date.now() / 1000) + s;
const grantParams = (data: object) => [
  {
    expiry: expiryIn(3600),
    signer: { type: 'wallet' },
    permissions: [{ type: 'countersign-grant', policies: [], data }],
  },
];

// ------------------------------------------------------------------------------------------------
describe('a stored unknown outcome keeps the submission from leaving again', () => {
  it(
    'a worker restart while a granted keyed order is in flight: the retry ' +
      'with the same idempotencyKey is not sent again (one order, -32002)',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      let release!: () => void;
      wire.answerGate = new Promise<void>((r) => (release = r));
      wire.holdAnswer = (url, method) => method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url);
      const before = perpsPosts(wire);
      const params = await keyedOrder('restart-1');
      const first = settle(bg.page(page).request('perps_sendCommand', params));
      await until(() => perpsPosts(wire) > before); // signed under the grant, reached the venue; no answer yet
      // The MV3 worker stops here (the content script answers the page with the retryable 4900); a new worker starts
      // over the same profile. The first order's answer stays held until the retry is answered (the stopped worker
      // never reads it).
      const { bg: next } = await ready({ dbName, onboard: false, wire });
      await until(() => armed(next), 1500);
      const retrying = settle(next.page(page).request('perps_sendCommand', params));
      const retry = await Promise.race([
        retrying,
        sleep(3_000).then(() => ({ e: 'no answer in 3 s (a second order held at the venue?)' })),
      ]);
      await sleep(50);
      const windows = next.registry.size;
      next.registry.rejectAll(() => userRejected('closed by the test'));
      wire.holdAnswer = undefined;
      release();
      await retrying;
      await first;
      expect(
        perpsPosts(wire) - before,
        `the same keyed order reaches the venue once across a worker restart ` +
          `(retry got ${JSON.stringify(retry).slice(0, 160)}, windows ${windows})`,
      ).toBe(1);
      expect(codeOf((retry as { e?: unknown }).e)).toBe(-32002);
    },
    30_000,
  );

  it(
    'a keyed request whose body differs (same idempotencyKey) after an unknown outcome ' +
      "is answered with that outcome and sends nothing; another site's same key is not",
    async () => {
      const { bg, wire } = await ready();
      await connect(bg, evilPage);
      await grantOf(bg);
      await until(() => armed(bg));
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)
          ? (() => {
              throw new TypeError('fetch failed: ECONNRESET');
            })()
          : undefined;
      const lost = await settle(bg.page(page).request('perps_sendCommand', await keyedOrder('k1')));
      wire.replaceAnswer = undefined;
      expect(codeOf((lost as { e?: unknown }).e)).toBe(-32002);
      expect(dataOf((lost as { e?: unknown }).e)?.command).toBe('createOrders');
      const before = perpsPosts(wire);
      const bigger = await settle(bg.page(page).request('perps_sendCommand', await keyedOrder('k1', '0.02')));
      expect(codeOf((bigger as { e?: unknown }).e)).toBe(-32002);
      expect(perpsPosts(wire)).toBe(before);
      // The record is in the keyed store, keyed by origin: evil's same key asks its own window.
      const stored = await bg.db().getAllKeys('keyed');
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.every((k) => k.startsWith(`${SITE}|`))).toBe(true);
      const evil = settle(bg.page(evilPage).request('perps_sendCommand', await keyedOrder('k1')));
      const [v] = await waitPending(bg);
      expect(v?.origin).toBe(EVIL);
      bg.registry.decide(v!.id, { approve: false });
      await evil;
    },
    30_000,
  );

  it(
    'an unknown outcome keyed by client order ids also holds a retry that ' +
      'adds an idempotencyKey: the same coid is not signed or sent again',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee7';
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)
          ? (() => {
              throw new TypeError('fetch failed: ECONNRESET');
            })()
          : undefined;
      const same = await iocCoidOrder(coid);
      const lost = await settle(bg.page(page).request('perps_sendCommand', same));
      wire.replaceAnswer = undefined;
      expect(codeOf((lost as { e?: unknown }).e)).toBe(-32002);
      const before = perpsPosts(wire);
      // The plain repeat is protected (lib/page/README.md "Error codes": "a request carrying that key or any of those
      // ids within 24 h gets this error again and sends nothing").
      expect(codeOf(((await settle(bg.page(page).request('perps_sendCommand', same))) as { e?: unknown }).e)).toBe(
        -32002,
      );
      expect(perpsPosts(wire)).toBe(before);
      // The same order with the same coid, plus an idempotencyKey (a dapp library that adds one on retry):
      const again = await settle(
        bg.page(page).request('perps_sendCommand', { ...same, idempotencyKey: 'retry-with-key' }),
      );
      expect(
        perpsPosts(wire) - before,
        `the order with coid ${coid} is not sent again (${JSON.stringify(again).slice(0, 160)})`,
      ).toBe(0);
    },
    30_000,
  );

  it(
    'an unknown outcome keyed by one client order id also holds a batch that ' +
      'carries the same coid plus a new one: the same order is not sent again',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'fffffffffffffffffffffffffffffff8';
      const one = await iocCoidOrder(coid);
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)
          ? (() => {
              throw new TypeError('fetch failed: ECONNRESET');
            })()
          : undefined;
      expect(codeOf(((await settle(bg.page(page).request('perps_sendCommand', one))) as { e?: unknown }).e)).toBe(
        -32002,
      );
      wire.replaceAnswer = undefined;
      const before = perpsPosts(wire);
      const batch = {
        op: {
          type: 'createOrders',
          args: [one.op.args[0]!, { ...one.op.args[0]!, c: '0000000000000000000000000000000a' }],
        },
      };
      const r = settle(bg.page(page).request('perps_sendCommand', batch));
      await sleep(300);
      // the batch may ask (its notional)
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: true, digest: x.digest });
      const out = await r;
      expect(
        perpsPosts(wire) - before,
        `coid ${coid}, whose outcome is unknown, is not sent again ` +
          `inside a batch (${JSON.stringify(out).slice(0, 200)})`,
      ).toBe(0);
    },
    30_000,
  );

  it(
    'a lock and unlock, and an account switch and back, keep ' +
      'the unknown outcome: the keyed retry still sends nothing',
    async () => {
      const { bg, wire } = await ready();
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)
          ? (() => {
              throw new TypeError('fetch failed: ECONNRESET');
            })()
          : undefined;
      const params = await keyedOrder('lock-1');
      const p = settle(bg.page(page).request('perps_sendCommand', params));
      const [v] = await waitPending(bg);
      bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
      expect(codeOf(((await p) as { e?: unknown }).e)).toBe(-32002);
      wire.replaceAnswer = undefined;
      await call(bg, 'vault.lock');
      await call(bg, 'vault.unlock', { password: 'a good password' });
      const second = (
        (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey(), label: 'two' })).result as {
          address: string;
        }
      ).address;
      await call(bg, 'account.select', { address: second });
      expect(await bg.page(page).request('eth_accounts')).toEqual([]);
      await call(bg, 'account.select', { address: owner() });
      const before = perpsPosts(wire);
      const r = await settle(bg.page(page).request('perps_sendCommand', params));
      expect(bg.registry.size).toBe(0);
      expect(codeOf((r as { e?: unknown }).e)).toBe(-32002);
      expect(perpsPosts(wire)).toBe(before);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('codes after a submission left: an unknown outcome, never a retried code', () => {
  it(
    'a perps order the venue accepted but whose answer came back as a 502 (a proxy in front of the ' +
      'gateway) is an unknown outcome (-32002), and the keyed retry under the grant is not sent again',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const before = perpsPosts(wire);
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)
          ? new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })
          : undefined;
      const params = await keyedOrder('gw-502');
      const first = await settle(bg.page(page).request('perps_sendCommand', params));
      wire.replaceAnswer = undefined;
      const e = (first as { e?: unknown }).e;
      expect(VIEM_RETRIES).not.toContain(codeOf(e));
      const retry = await settle(bg.page(page).request('perps_sendCommand', params));
      expect.soft(codeOf(e), 'a 5xx after the order reached the venue is an unknown outcome').toBe(-32002);
      expect.soft(dataOf(e)?.command).toBe('createOrders');
      expect(
        perpsPosts(wire) - before,
        `the keyed order is sent once (first ${JSON.stringify(first).slice(0, 120)}, ` +
          `retry ${JSON.stringify(retry).slice(0, 120)})`,
      ).toBe(1);
    },
    30_000,
  );

  it(
    'an order-book order the exchange accepted, answered 504 by a gateway: the page hears an unknown ' +
      'outcome (-32002 with data.command, not "nothing was sent") and its keyed retry is not posted again',
    async () => {
      const { bg, wire } = await ready();
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const params = {
        orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'gw-504',
      };
      const before = clobPosts(wire);
      wire.replaceAnswer = (url, method) =>
        method === 'POST' && /\/clob\/orders?$/.test(url)
          ? new Response(JSON.stringify({ error: 'upstream request timeout' }), {
              status: 504,
              headers: { 'content-type': 'application/json' },
            })
          : undefined;
      const first = settle(bg.page(page).request('clob_postOrders', params));
      const [v] = await waitPending(bg);
      bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
      const r1 = await first;
      wire.replaceAnswer = undefined;
      const e = (r1 as { e?: unknown }).e;
      expect(VIEM_RETRIES).not.toContain(codeOf(e));
      const retry = settle(bg.page(page).request('clob_postOrders', params));
      await waitPending(bg);
      const reopened = bg.registry.size;
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: true, digest: x.digest });
      await retry;
      expect
        .soft(
          dataOf(e)?.command,
          `the page is told an unknown outcome with data.command, not "nothing was sent" (got ${JSON.stringify(e)})`,
        )
        .toBe('postOrders');
      expect.soft(reopened, 'the keyed retry opens no second window').toBe(0);
      expect(clobPosts(wire) - before, 'the same keyed order-book order is posted once').toBeLessThanOrEqual(1);
    },
    30_000,
  );

  it(
    'the audit store failing right after the venue answered never gives ' +
      'the page a retried code (the answer goes back; the person is notified)',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      // Make every audit append fail after the POST was answered: the audit key is read from the vault.
      const vault = bg.vault() as unknown as { auditKey: () => unknown };
      const orig = vault.auditKey.bind(vault);
      let armedFail = false;
      vault.auditKey = () => {
        if (armedFail) throw new DOMException('QuotaExceededError', 'QuotaExceededError');
        return orig();
      };
      wire.replaceAnswer = (url, method) => {
        if (method === 'POST' && /\/perps\/v1\/trade\/orders$/.test(url)) armedFail = true;
        return undefined;
      };
      const r = await settle(bg.page(page).request('perps_sendCommand', await keyedOrder('audit-1')));
      vault.auditKey = orig;
      const e = (r as { e?: unknown }).e;
      if (e) {
        expect(VIEM_RETRIES).not.toContain(codeOf(e));
        expect(codeOf(e)).toBe(-32002);
      }
      expect(perpsPosts(wire)).toBeGreaterThan(0);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('a grant window approves only what it showed, and a replaced grant ends before the next signature', () => {
  const data = (maxNotional: string) => ({
    venue: 'perps',
    instruments: [1],
    allow: { order: true, cancel: true, leverage: false },
    maxNotional,
    dailyNotional: '5000',
    priceBandPct: '2',
    slippagePct: '1',
  });

  it(
    'two pending grant windows approved together (old digests): ' +
      'the site ends with exactly one grant, one of those shown',
    async () => {
      const { bg } = await ready();
      const a = settle(bg.page(page).request('wallet_grantPermissions', grantParams(data('100'))));
      await waitPending(bg);
      const b = settle(bg.page(page).request('wallet_grantPermissions', grantParams(data('300'))));
      const views = await waitPending(bg, 2);
      expect(views.length).toBe(2);
      const shown = views.map((v) => ({ id: v.id, digest: v.digest }));
      const decided: unknown[] = [];
      for (const v of shown) {
        try {
          bg.registry.decide(v.id, { approve: true, digest: v.digest });
          decided.push('ok');
        } catch (err) {
          decided.push((err as Error).name);
        }
      }
      await Promise.all([a, b]);
      await sleep(50);
      const list = (await call(bg, 'grant.list')).result as { origin: string; maxNotional: string }[];
      const mine = list.filter((g) => g.origin === SITE);
      expect(mine.length).toBe(1);
      expect(['100', '300']).toContain(mine[0]!.maxNotional);
    },
    30_000,
  );

  it(
    "a granted order already past its grant check is not signed once the site's " +
      'grant was REPLACED by a narrower one (the replacement answered first)',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg); // maxNotional 2000
      await until(() => armed(bg));
      let release!: () => void;
      wire.answerGate = new Promise<void>((r) => (release = r));
      let held = 0;
      // the first only: the provider's symbol table
      wire.holdAnswer = (url, method) => method === 'GET' && url.includes('/v1/info/instruments') && held++ === 0;
      const before = perpsPosts(wire);
      const order = settle(bg.page(page).request('perps_sendCommand', await keyedOrder('wide-1')));
      await until(() => wire.sent.some((s) => s.url.includes('/v1/info/instruments')));
      // The person narrows the site's permission to 1 USDC per order (the window says it replaces the current one).
      const narrow = settle(bg.page(page).request('wallet_grantPermissions', grantParams(data('1'))));
      const [v] = await waitPending(bg);
      expect(v!.flags.join(' ')).toMatch(/replaces/);
      bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
      expect('r' in (await narrow)).toBe(true);
      release();
      wire.answerGate = undefined;
      const out = await order;
      expect(
        perpsPosts(wire) - before,
        `nothing is signed or sent under the replaced 2000 USDC grant after ` +
          `the 1 USDC one answered (${JSON.stringify(out).slice(0, 160)})`,
      ).toBe(0);
    },
    30_000,
  );

  it(
    "a grant made in the popup while a page's grant window is " +
      'pending: approving the window as shown (no "replaces") is refused',
    async () => {
      const { bg } = await ready();
      const a = settle(bg.page(page).request('wallet_grantPermissions', grantParams(data('300'))));
      const [v] = await waitPending(bg);
      expect(v!.flags.join(' ')).not.toMatch(/replaces/);
      await grantOf(bg, { ...btcOnly, maxNotional: '50' });
      bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
      const r = await a;
      expect(codeOf((r as { e?: unknown }).e)).toBe(4001);
      const list = (await call(bg, 'grant.list')).result as { origin: string; maxNotional: string }[];
      expect(list.filter((g) => g.origin === SITE).map((g) => g.maxNotional)).toEqual(['50']);
    },
    30_000,
  );
});

// ------------------------------------------------------------------------------------------------
describe('EIP-1193 connect reaches connected sites only', () => {
  it(
    'an unconnected page learns the chain id only (no account), ' +
      'while locked too; no connect event reaches it on unlock',
    async () => {
      const { bg } = await ready();
      const evil = bg.page(evilPage);
      await call(bg, 'vault.lock');
      expect(typeof (await evil.request('eth_chainId'))).toBe('string');
      expect(await evil.request('eth_accounts').catch((e: unknown) => codeOf(e))).toEqual([]);
      await call(bg, 'vault.unlock', { password: 'a good password' });
      await sleep(50);
      expect(evil.events.map((e) => e.event)).not.toContain('connect');
      expect(JSON.stringify(evil.events).toLowerCase()).not.toContain(owner().toLowerCase().slice(2));
    },
    30_000,
  );

  it(
    'a page that is not connected is not told when the ' + 'person locks (no accountsChanged [] to every origin)',
    async () => {
      const { bg } = await ready();
      const evil = bg.page(evilPage);
      await call(bg, 'vault.lock');
      await sleep(20);
      expect(evil.events.filter((e) => e.event === 'accountsChanged')).toEqual([]);
    },
    30_000,
  );
});
