/**
 * Idempotent submissions (idempotency keys and client order ids) stay with the site, the request and the
 * account that made them: another site can neither clear, join, learn nor block them, an answer goes
 * only to a request with the same body, and a join ends with a lock. EIP-1193 events go only to the sites
 * they concern. The real background on the fake browser against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
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
  btcOnly,
  perpsPosts,
  connectSite,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const EVIL = 'https://evil.example';
const sender = pageSender;
const page = sender(SITE, 3);
const evilPage = sender(EVIL, 4);
type Bg = PagedBackground;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, owner, mark } = pagePathKit({ harness: () => h, started, site: SITE, page, dbPrefix: 'idempotency' });
let n = 0;
const btcOrder = async (coid: string, qty = '0.01', p?: string) => ({
  op: {
    type: 'createOrders',
    args: [{ iid: 1, buy: true, qty, p: p ?? (await mark(1)), tif: 'gtc', po: true, c: coid }],
  },
});

/**
 * What this background sent, with hooks: `down` refuses a request before it leaves (not logged, a network
 * failure); while `hold` is set, every POST waits for it before it leaves; `dropAnswer` delivers the
 * request but loses the answer.
 */
type Wire = {
  sent: SentRequest[];
  down?: (url: string, method: string) => boolean;
  dropAnswer?: (url: string, method: string) => boolean;
  hold?: Promise<void>;
};

async function ready(o: { connect?: boolean } = {}): Promise<{ bg: Bg; wire: Wire }> {
  const wire: Wire = { sent: [] };
  const fetchFn = recordingFetch(wire, {
    refuse: (url, method) => wire.down?.(url, method) ?? false,
    beforeSend: async (_url, method) => {
      if (method === 'POST' && wire.hold) await wire.hold;
    },
    onAnswer: (url, method, res) => {
      if (wire.dropAnswer?.(url, method)) throw new TypeError('fetch failed: socket hang up (ECONNRESET)');
      return res;
    },
  });
  const bg = withPages(startBackground({ browser, dbName: `idempotency-${n++}`, kdf: KDF, bounds: BOUNDS, fetchFn }));
  started.push(bg);
  await onboardDemo(bg, h, page, o);
  return { bg, wire };
}
/** Connects `who` (the person approves the window). */
const connect = connectSite;
const clobPosts = (w: Wire) => w.sent.filter((s) => s.method === 'POST' && /\/clob\/orders?$/.test(s.url)).length;

describe('idempotent submissions: one site against another', () => {
  it(
    'another site flooding the unknown-outcome map cannot clear ' +
      "the victim's entry: the victim's repeat is not posted again",
    async () => {
      const { bg, wire } = await ready();
      await connect(bg, evilPage);
      const victim = bg.page(page);
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const params = {
        orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'victim-1',
      };
      // The victim's POST reaches the venue; its answer is lost (unknown outcome, recorded).
      wire.dropAnswer = (url, method) => method === 'POST' && /\/clob\/orders?$/.test(url);
      const lost = victim.request('clob_postOrders', params).catch((e: unknown) => e);
      const [v1] = await waitPending(bg);
      bg.registry.decide(v1!.id, { approve: true, digest: v1!.digest });
      expect(await lost).toMatchObject({ code: -32002 });
      wire.dropAnswer = undefined;
      const postedOnce = clobPosts(wire);
      // protected
      expect(await victim.request('clob_postOrders', params).catch((e: unknown) => e)).toMatchObject({ code: -32002 });
      // The same network trouble, seen by evil.example: 1000 keyed submissions that fail with no answer (no window,
      // nothing signed).
      wire.down = () => true;
      const evil = bg.page(evilPage);
      const codes = new Set<unknown>();
      for (let i = 0; i < 1000; i += 10) {
        const rs = await Promise.all(
          Array.from({ length: 10 }, (_, j) =>
            evil
              .request('clob_postOrders', {
                orders: [{ ...params.orders[0]!, tokenId: String(7_000_000 + i + j) }],
                idempotencyKey: `evil-${i + j}`,
              })
              .catch((e: { code?: number }) => e.code),
          ),
        );
        rs.forEach((c) => codes.add(c));
      }
      expect(codes).toEqual(new Set([-32002]));
      expect(bg.registry.size).toBe(0);
      wire.down = undefined;
      // The victim's dapp retries with its key: it must still get -32002 and nothing posted.
      const retry = victim.request('clob_postOrders', params).catch((e: unknown) => e);
      await waitPending(bg);
      const reopened = bg.registry.size;
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: true, digest: x.digest });
      const r = await retry;
      expect
        .soft(
          reopened,
          `after evil.example's 1000 failed submissions, trade.example's repeat ` +
            `of an unknown-outcome key opens no window (got ${JSON.stringify(r)})`,
        )
        .toBe(0);
      expect(clobPosts(wire) - postedOnce, "the victim's idempotent order is POSTed once").toBe(0);
    },
    60_000,
  );

  it('another site with the same client order ids never joins a pending submission or learns its result', async () => {
    const { bg, wire } = await ready();
    await connect(bg, evilPage);
    const coid = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
    const first = bg.page(page).request('perps_sendCommand', await btcOrder(coid));
    await waitPending(bg);
    const spy = bg
      .page(evilPage)
      .request('perps_sendCommand', await btcOrder(coid))
      .catch((e: unknown) => e);
    await waitPending(bg, 2);
    expect(bg.registry.size).toBe(2); // its own window, not a join
    const mine = bg.registry.list().find((x) => x.origin === SITE)!;
    const theirs = bg.registry.list().find((x) => x.origin === EVIL)!;
    bg.registry.decide(theirs.id, { approve: false });
    bg.registry.decide(mine.id, { approve: true, digest: mine.digest });
    await first;
    expect(await spy).toMatchObject({ code: 4001 });
    expect(perpsPosts(wire)).toBeGreaterThan(0);
  });

  it('another site with the same idempotencyKey as a lost submission is not blocked', async () => {
    const { bg, wire } = await ready();
    await connect(bg, evilPage);
    const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
    const params = {
      orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
      idempotencyKey: 'shared',
    };
    wire.dropAnswer = (url, method) => method === 'POST' && /\/clob\/orders?$/.test(url);
    const lost = bg
      .page(evilPage)
      .request('clob_postOrders', params)
      .catch((e: unknown) => e);
    const [v] = await waitPending(bg);
    bg.registry.decide(v!.id, { approve: true, digest: v!.digest });
    await lost;
    wire.dropAnswer = undefined;
    const mine = bg.page(page).request('clob_postOrders', params);
    const [w] = await waitPending(bg);
    expect(w?.origin).toBe(SITE);
    bg.registry.decide(w!.id, { approve: true, digest: w!.digest });
    expect(await mine).toMatchObject([{ success: true }]);
  });
});

describe('idempotent submissions: the answer belongs to the request', () => {
  it(
    'a different order (other size and price) under the same ' +
      "client order id is never told the first order's result",
    async () => {
      const { bg, wire } = await ready();
      const tab = bg.page(page);
      const coid = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
      const m = await mark(1);
      const a = tab.request('perps_sendCommand', await btcOrder(coid, '0.01', m));
      const [view] = await waitPending(bg);
      const bigger = String((Number(m) * 0.9).toFixed(1));
      const b = tab.request('perps_sendCommand', await btcOrder(coid, '0.05', bigger)).catch((e: unknown) => e);
      await sleep(50);
      const windows = bg.registry.size;
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const [ra, rb] = await Promise.all([a, b]);
      expect(perpsPosts(wire)).toBe(1);
      // Order B (0.05 @ 90%) was never shown nor signed; the page must not be told it succeeded.
      expect.soft(windows).toBe(1);
      expect(rb, `order B (0.05 @ ${bigger}) is not answered with order A's result ${JSON.stringify(ra)}`).not.toEqual(
        ra,
      );
    },
  );

  it(
    'the same keyed orders sent as [params] and as params are ' +
      'one request: one window, one post, the same answer to both',
    async () => {
      const { bg, wire } = await ready();
      const tab = bg.page(page);
      const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
      const params = {
        orders: [{ tokenId: token, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'one-request',
      };
      const a = tab.request('clob_postOrders', [params]);
      const [view] = await waitPending(bg);
      // The same fields in another order, as the object alone: the same request, so it joins.
      const b = tab.request('clob_postOrders', { idempotencyKey: params.idempotencyKey, orders: params.orders });
      await sleep(30);
      const windows = bg.registry.size;
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const [ra, rb] = await Promise.all([a, b]);
      expect(windows).toBe(1);
      expect(clobPosts(wire)).toBe(1);
      expect(ra).toMatchObject([{ success: true }]);
      expect(rb).toEqual(ra);
    },
  );

  it(
    'a join does not outlive a lock: the pending window ' + 'and its joiner are both cancelled, nothing is sent',
    async () => {
      const { bg, wire } = await ready();
      const tab = bg.page(page);
      const order = await btcOrder('ccccccccccccccccccccccccccccccc3');
      const a = tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      await waitPending(bg);
      const b = tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      await sleep(30);
      await call(bg, 'vault.lock');
      expect(await a).toMatchObject({ code: 4900 });
      expect(await b).toMatchObject({ code: 4900 });
      expect(perpsPosts(wire)).toBe(0);
    },
  );

  it(
    'a grant-covered submission in flight across an account switch: ' +
      "the site, reconnected to account 2, does not join account 1's order",
    async () => {
      const { bg, wire } = await ready();
      await bg.grants().create({ origin: SITE, account: owner(), limits: btcOnly as never, durationMs: 3_600_000 });
      await until(async () =>
        ((await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }).venues.some(
          (v) => v.venue === 'perps' && v.armed,
        ),
      );
      const tab = bg.page(page);
      const order = await btcOrder('ddddddddddddddddddddddddddddddd4');
      let release!: () => void;
      wire.hold = new Promise<void>((r) => (release = r));
      const before = perpsPosts(wire);
      const a = tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      await until(() => perpsPosts(wire) > before); // signed under the grant, POST in flight
      const second = (
        (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey(), label: 'two' })).result as {
          address: string;
        }
      ).address;
      await call(bg, 'account.select', { address: second });
      wire.hold = undefined;
      const accounts = (await connect(bg, page)) as string[];
      expect(accounts[0]?.toLowerCase()).toBe(second.toLowerCase());
      const b = tab.request('perps_sendCommand', order).catch((e: unknown) => e);
      await sleep(50);
      for (const x of bg.registry.list()) bg.registry.decide(x.id, { approve: false });
      release();
      const [ra, rb] = await Promise.all([a, b]);
      expect(
        rb,
        `account 2's request (never shown, never signed) is not ` +
          `answered with account 1's order result ${JSON.stringify(ra)}`,
      ).not.toEqual(ra);
    },
  );
});

describe('EIP-1193 events go only to the sites they concern', () => {
  it(
    'connect/accountsChanged of one site never reach another ' +
      "origin; unlock sends connect only to the active account's sites",
    async () => {
      const { bg } = await ready();
      const evil = bg.page(evilPage); // open, never connected
      const mine = bg.page(page);
      await mine.request('wallet_revokePermissions');
      await connect(bg, page); // connect + accountsChanged to trade.example, with evil.example's port open
      const addrs = (evs: { event: string; data: unknown }[]) =>
        JSON.stringify(evs).toLowerCase().includes(owner().toLowerCase().slice(2));
      expect(addrs(evil.events), "evil.example got trade.example's account").toBe(false);
      // A second site, connected to account 2.
      const second = (
        (await call(bg, 'vault.importOwnerKey', { privateKey: generatePrivateKey(), label: 'two' })).result as {
          address: string;
        }
      ).address;
      await call(bg, 'account.select', { address: second });
      await connect(bg, evilPage);
      await call(bg, 'account.select', { address: owner() });
      await call(bg, 'vault.lock');
      const e0 = evil.events.length;
      const m0 = mine.events.length;
      await call(bg, 'vault.unlock', { password: 'a good password' });
      await sleep(50);
      const evAfter = evil.events.slice(e0);
      const myAfter = mine.events.slice(m0);
      expect(myAfter.map((e) => e.event)).toEqual(['connect', 'accountsChanged']);
      expect(
        evAfter.map((e) => e.event),
        `a site of the non-active account gets no connect (got ${JSON.stringify(evAfter)})`,
      ).not.toContain('connect');
      expect(JSON.stringify(evAfter).toLowerCase()).not.toContain(owner().toLowerCase().slice(2));
      expect(JSON.stringify(evAfter).toLowerCase()).not.toContain(second.toLowerCase().slice(2));
    },
  );
});
