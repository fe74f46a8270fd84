/**
 * A granted order's keys come from memory (`lib/vault/held-keys.ts`) while its use write is still held,
 * yet every change the person makes acts before the next signature: API credentials replaced, a lock, a
 * proxy key deleted while unlocked, and the end of a trading session — each made while a granted order's
 * use write holds the vault — leave the next granted order signed with the new credentials or not signed
 * at all. In a trading session, which does not keep the owner key, a granted order-book post is refused
 * before it counts against the grant. Black-box: page requests, popup procedures and what reached the
 * sandbox. Setup: `pagePathKit`.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { AUTOLOCK_ALARM } from './index';
import {
  pageSender,
  sandboxSuite,
  until,
  perpsPosts,
  pagePathKit,
  sleep,
  waitPending,
  type Wire,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, armed, grantOf, ready, settle, holdUseWrites, btcOrder, closeAll, capOf, owner } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'granted-key-changes',
});
type Bg = Parameters<typeof call>[0];

const clobPosts = (wire: Wire) => wire.sent.filter((x) => x.method === 'POST' && /\/clob\/orders?$/.test(x.url));
/** The API key a `POST /order(s)` body names (`owner`). */
const apiKeyOf = (body: string) => {
  const b = JSON.parse(body) as { owner?: string } | { owner?: string }[];
  return Array.isArray(b) ? b[0]?.owner : b.owner;
};

/**
 * A background with an order-book grant of `SITE` (one token, 10 shares at the midpoint's cent, cap 20 orders), armed.
 */
async function withClobGrant() {
  const r = await ready();
  const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
  const mid = Number(await r.bg.reads().clobMid(token));
  const price = (Math.floor(mid * 100) / 100).toFixed(2);
  const one = Number(price) * 10;
  await r.bg.grants().create({
    origin: SITE,
    account: owner(),
    limits: {
      venue: 'clob',
      markets: [token],
      allow: { order: true },
      maxNotional: '100',
      dailyNotional: (one * 20).toFixed(2),
      priceBandPct: '2',
    } as never,
    durationMs: 3_600_000,
  });
  await until(() => armed(r.bg, 'clob'));
  return { ...r, params: { orders: [{ tokenId: token, side: 'BUY', price, size: '10', orderType: 'GTC' }] } };
}

/** Resolves once `bg`'s vault was asked to `method` (the call made, whether or not it ran yet). */
function calledOn(bg: Bg, method: 'putClobCredentials' | 'lock') {
  const v = bg.vault() as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const real = v[method]!.bind(v);
  let called = false;
  v[method] = (...a: unknown[]) => {
    called = true;
    return real(...a);
  };
  return () => until(() => called, 500);
}

describe("the order book under a grant: changes made while a granted post's use write is held", () => {
  it(
    'the API credentials replaced (a new key derived) while the first ' +
      "post's use write is held: the next granted post carries the new API key",
    async () => {
      const { bg, wire, params } = await withClobGrant();
      await settle(bg.page(page).request('clob_postOrders', params)); // the keys are opened and held
      const hold = holdUseWrites(bg);
      const first = settle(bg.page(page).request('clob_postOrders', params));
      await until(() => hold.held() > 0);
      const oldKey = apiKeyOf(clobPosts(wire).at(-1)!.body);
      const replaced = calledOn(bg, 'putClobCredentials');
      const deriving = call(bg, 'clob.createOrDerive', { account: owner(), nonce: 1 });
      await replaced();
      const before = clobPosts(wire).length;
      const next = settle(bg.page(page).request('clob_postOrders', params));
      await sleep(100);
      expect(clobPosts(wire).length - before, 'the next post waits for the credentials being replaced').toBe(0);
      hold.release();
      expect((await deriving).ok).toBe(true);
      expect((await first).e).toBeUndefined();
      expect((await next).e).toBeUndefined();
      const sent = clobPosts(wire).slice(before);
      expect(sent).toHaveLength(1);
      const newKey = apiKeyOf(sent[0]!.body);
      expect(newKey).toBeDefined();
      expect(newKey, 'signed with the replaced API key').not.toBe(oldKey);
    },
    30_000,
  );

  it("the person locks while the first post's use write is held: the next post is not signed or sent", async () => {
    const { bg, wire, params } = await withClobGrant();
    await settle(bg.page(page).request('clob_postOrders', params));
    const hold = holdUseWrites(bg);
    const first = settle(bg.page(page).request('clob_postOrders', params));
    await until(() => hold.held() > 0);
    const locked = calledOn(bg, 'lock');
    const locking = call(bg, 'vault.lock');
    await locked();
    const before = clobPosts(wire).length;
    const next = settle(bg.page(page).request('clob_postOrders', params));
    hold.release();
    expect((await locking).ok).toBe(true);
    await first;
    await Promise.race([next, waitPending(bg)]);
    closeAll(bg);
    expect((await next).e, 'the next post is refused').toBeDefined();
    expect(clobPosts(wire).length - before).toBe(0);
  }, 30_000);
});

describe('the order book under a grant in a trading session', () => {
  it(
    "auto-lock turns the vault into a trading session: the site's granted " +
      'order-book post (signed with the owner key, which the session does not ' +
      'keep) is refused before it counts against the grant, and nothing is posted',
    async () => {
      const { bg, wire, params } = await withClobGrant();
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      await until(async () => ((await call(bg, 'vault.status')).result as { state: string }).state === 'session');
      const before = clobPosts(wire).length;
      const out = bg
        .page(page)
        .request('clob_postOrders', params)
        .then(
          () => undefined,
          (e: { code?: number }) => e,
        );
      await Promise.race([out, waitPending(bg)]);
      closeAll(bg);
      expect(await out, 'refused (4900)').toMatchObject({ code: 4900 });
      expect(clobPosts(wire).length - before).toBe(0);
      const uses = (
        (await call(bg, 'grant.list')).result as { venue?: string; uses24h: number; limits?: { venue: string } }[]
      ).map((g) => g.uses24h);
      expect(uses, 'no use counted').toEqual([0]);
    },
    30_000,
  );
});

describe("perps under a grant: changes made while a granted order's use write is held", () => {
  it(
    "unlocked: the proxy key deleted while the first order's use " +
      'write is held: the next granted order is not signed with it',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(10));
      await until(() => armed(bg));
      await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      const hold = holdUseWrites(bg);
      const first = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await until(() => hold.held() > 0);
      // The record alone (what `proxy.delete` does once the gateway has deleted the proxy).
      const deleting = bg.vault().deleteProxy(h.demo.proxy.address);
      const before = perpsPosts(wire);
      const next = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      hold.release();
      await deleting;
      await first;
      await Promise.race([next, waitPending(bg)]);
      closeAll(bg);
      expect((await next).e, 'no proxy key: the next order is refused').toBeDefined();
      expect(perpsPosts(wire) - before).toBe(0);
    },
    30_000,
  );

  it(
    'in a trading session: the person ends the session (End session and lock) ' +
      "while an order's use write is held: the next order is not signed or sent",
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(10));
      await until(() => armed(bg));
      await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
        typeof fakeBrowser.alarms.onAlarm.trigger
      >[0]);
      await until(async () => ((await call(bg, 'vault.status')).result as { state: string }).state === 'session');
      await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      const hold = holdUseWrites(bg);
      const first = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await until(() => hold.held() > 0);
      const locked = calledOn(bg, 'lock');
      const ending = call(bg, 'vault.lock');
      await locked();
      const before = perpsPosts(wire);
      const next = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      hold.release();
      expect((await ending).ok).toBe(true);
      await first;
      await Promise.race([next, waitPending(bg)]);
      closeAll(bg);
      expect((await next).e, 'the session ended: the next order is refused').toBeDefined();
      expect(perpsPosts(wire) - before).toBe(0);
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('locked');
    },
    30_000,
  );
});
