/**
 * What a narrow standing grant covers, on the grants suites' setup (`test/kits/grants.ts`): a connected site holding
 * the grant sends page requests to the real background (fake browser) against the in-process sandbox.
 * Every request outside the grant opens a window (a pending approval naming the limit) and nothing reaches
 * the sandbox before the person decides; in a trading session nothing can ask, so such a request is
 * refused with nothing sent; panic stops granted orders. Black-box: page requests, the grant service's
 * public methods, the approval registry and the sandbox's request log and order records.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { AUTOLOCK_ALARM } from '../background/index';
import { userRejected } from '../errors/rpc';

import {
  restart,
  SITE,
  page,
  call,
  owner,
  trading,
  openPerps,
  BTC,
  ETH,
  ready,
  waitPending,
  btcOnly,
  grant,
  tokenA,
  mark,
  expectAsks,
  type Bg,
  grantSuite,
} from '../../test/kits/grants';

grantSuite('outside-grant');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const autoLock = async (bg: Bg) => {
  await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
    typeof fakeBrowser.alarms.onAlarm.trigger
  >[0]);
  for (let i = 0; i < 200; i++) {
    const s = (await call(bg, 'vault.status')).result as { state: string };
    if (s.state !== 'unlocked') return s.state;
    await sleep(5);
  }
  return 'unlocked';
};
const btcOrder = async (qty = '0.01', extra: object = {}) => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(BTC), tif: 'gtc', po: true, ...extra }] },
});
/** In a trading session nothing can ask: a request outside the grant must be refused with nothing sent. */
async function expectNotSigned(bg: Bg, method: string, params: unknown) {
  const before = trading();
  const outcome = await bg
    .page(page)
    .request(method, params)
    .then(
      () => 'signed without a window',
      (e: { code?: number }) => e,
    );
  expect(outcome, 'refused').toMatchObject({ code: 4900 });
  expect(trading() - before, 'nothing reached the sandbox').toBe(0);
  expect(bg.registry.size).toBe(0);
}
const used24h = async (bg: Bg) => (await bg.grants().list())[0]?.used24h ?? '0';

describe('a page holding a narrow grant: a request outside it asks', () => {
  it(
    'a cancel by a client order id the grant once owned, ' + 'now carried by an order approved outside the grant, asks',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      const coid = 'cd'.repeat(16);
      // Under the grant: a BTC order with coid X, then cancelled by X (both covered, no window).
      await bg.page(page).request('perps_sendCommand', await btcOrder('0.01', { c: coid }));
      await bg.page(page).request('perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: [coid] } });
      expect(bg.registry.size).toBe(0);
      // The site now asks for an ETH order carrying the same coid; the person approves it in a window.
      const p = bg.page(page).request('perps_sendCommand', {
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true, c: coid }],
        },
      });
      const [view] = await waitPending(bg);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const [ack] = (await p) as { oid: number }[];
      expect(openPerps().some((o) => o.oid === ack!.oid)).toBe(true);
      // A cancel by that coid reaches an ETH order outside the BTC-only grant: it must ask.
      await expectAsks(bg, 'perps_sendCommand', { op: { type: 'cancelOrdersCOID', args: [coid] } });
      expect(openPerps().some((o) => o.oid === ack!.oid)).toBe(true);
    },
  );

  it(
    'a batch of 15 orders, each under the per-order cap ' + 'but together over the daily cap, asks as a whole',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      const m = await mark(BTC);
      const orders = Array.from({ length: 15 }, () => ({ iid: 1, buy: true, qty: '0.03', p: m, tif: 'gtc', po: true }));
      await expectAsks(bg, 'perps_sendCommand', { op: { type: 'createOrders', args: orders } }, /daily notional/);
    },
  );

  it('12 simultaneous granted orders of 1 950 USDC under a 5 000 daily cap sign at most 2', async () => {
    const bg = await ready();
    await grant(bg, { ...btcOnly, dailyNotional: '5000' });
    const before = trading();
    const all = Promise.allSettled(
      Array.from({ length: 12 }, async () => bg.page(page).request('perps_sendCommand', await btcOrder('0.03'))),
    );
    let done = false;
    void all.then(() => (done = true));
    for (let i = 0; i < 400 && !done; i++) {
      bg.registry.rejectAll(() => userRejected('test'));
      await sleep(10);
    }
    await all;
    expect(trading() - before).toBeLessThanOrEqual(2);
    expect(Number(await used24h(bg))).toBeLessThanOrEqual(5000);
  });

  it('a dust size counts toward the daily cap (never zero); a size with 19 decimals or a huge size asks', async () => {
    const bg = await ready();
    await grant(bg, btcOnly);
    await bg
      .page(page)
      .request('perps_sendCommand', await btcOrder('0.0000001'))
      .catch(() => undefined);
    expect(bg.registry.size).toBe(0);
    expect(Number(await used24h(bg))).toBeGreaterThan(0);
    await expectAsks(bg, 'perps_sendCommand', await btcOrder('0.0000000000000000001'));
    await expectAsks(bg, 'perps_sendCommand', await btcOrder('100000000000000000000000000000'));
  });

  it('a post-only / reduce-only grant does not cover orders without the flag; a trigger limit order asks', async () => {
    const bg = await ready();
    await grant(bg, { ...btcOnly, postOnly: true, reduceOnly: true });
    await expectAsks(bg, 'perps_sendCommand', await btcOrder('0.01', { ro: true, po: false }), /post-only/);
    await expectAsks(bg, 'perps_sendCommand', await btcOrder('0.01'), /reduce-only/);
    await expectAsks(
      bg,
      'perps_sendCommand',
      {
        op: {
          type: 'createOrders',
          args: [
            { iid: 1, buy: false, qty: '0.01', p: await mark(BTC), ro: true, tr: { tpsl: 'tp', trp: await mark(BTC) } },
          ],
        },
      },
      /trigger/,
    );
  });

  it('with ratePerMinute 2 the third request in a minute asks', async () => {
    const bg = await ready();
    await grant(bg, { ...btcOnly, ratePerMinute: 2 });
    await bg.page(page).request('perps_sendCommand', await btcOrder());
    await bg.page(page).request('perps_sendCommand', await btcOrder());
    await expectAsks(bg, 'perps_sendCommand', await btcOrder(), /requests in a minute/);
  });

  it(
    'perps_signCommand, an order-book cancel-all, updateLeverage ' +
      'and createProxy are never covered: they ask or are refused',
    async () => {
      const bg = await ready();
      await grant(bg, { ...btcOnly, allow: { order: true, cancel: true, leverage: true }, maxLeverage: 20 });
      await expectAsks(bg, 'perps_signCommand', await btcOrder());
      await expectAsks(bg, 'clob_signRequest', { method: 'DELETE', requestPath: '/cancel-all' });
      await expectAsks(bg, 'perps_sendCommand', {
        op: { type: 'updateLeverage', args: { iid: 1, lev: 5, cross: false } },
      });
      await expectAsks(bg, 'perps_sendCommand', {
        op: { type: 'updateLeverage', args: { iid: 2, lev: 5, cross: true } },
      });
      await expect(
        bg.page(page).request('perps_sendCommand', { op: { type: 'createProxy', args: {} } }),
      ).rejects.toBeDefined();
      expect(bg.registry.size).toBe(0);
    },
  );

  it('grant.create and grant.offer from a content-script sender are refused', async () => {
    const bg = await ready();
    const p = bg
      .page(page)
      .request('perps_sendCommand', await btcOrder())
      .catch((e) => e);
    const [view] = await waitPending(bg);
    const r = await call(bg, 'grant.create', { approvalId: view!.id, limits: btcOnly, minutes: 60 }, page);
    expect(r.ok).toBe(false);
    const o = await call(bg, 'grant.offer', { approvalId: view!.id }, page);
    expect(o.ok).toBe(false);
    expect(await bg.grants().list()).toEqual([]);
    bg.registry.decide(view!.id, { approve: false });
    await p;
  });
});

describe('a trading session (auto-lock with a live grant) signs nothing beyond the grant', () => {
  it(
    'no window and no owner-key method: connect, signCommand, signRequest, cancel-all and autoCancel ' +
      'are refused 4900 with nothing pending; popup procedures that widen anything are refused',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      expect(await autoLock(bg)).toBe('session');
      for (const [m, params] of [
        ['eth_requestAccounts', undefined],
        ['wallet_connect', undefined],
        ['perps_signCommand', await btcOrder()],
        ['clob_signRequest', { method: 'DELETE', requestPath: '/cancel-all' }],
        ['perps_sendCommand', { op: { type: 'cancelAll', args: {} } }],
        ['perps_sendCommand', { op: { type: 'autoCancel', args: { time: 0 } } }],
      ] as const) {
        await expect(bg.page(page).request(m, params), m).rejects.toMatchObject({ code: 4900 });
      }
      expect(bg.registry.size).toBe(0);
      // Popup procedures that would widen anything.
      for (const type of [
        'grant.create',
        'grant.offer',
        'vault.changePassword',
        'proxy.issue',
        'clob.createOrDerive',
        'account.select',
        'vault.restoreBackup',
      ]) {
        const r = await call(bg, type, {});
        expect(r.ok, type).toBe(false);
      }
    },
  );

  it(
    'a grant revoked during the session stays revoked when an ' +
      'older session bundle is written back and the worker restarts',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      await bg.grants().create({
        origin: SITE,
        account: owner(),
        limits: {
          venue: 'clob',
          markets: [tokenA()],
          allow: { order: true },
          maxNotional: '100',
          dailyNotional: '100',
          priceBandPct: '2',
        } as never,
        durationMs: 3_600_000,
      });
      expect(await autoLock(bg)).toBe('session');
      const old = await bg.db().get('meta', 'session' as never);
      expect(old).toBeDefined();
      const perpsGrant = (await bg.grants().list()).find((g) => g.venue === 'perps')!;
      expect((await call(bg, 'grant.revoke', { id: perpsGrant.id })).ok).toBe(true);
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('session');
      // The store writer puts the older sealed bundle back; the worker restarts (MV3 idles out).
      await bg.db().put('meta', old as never);
      const bg2 = restart();
      await bg2.ready;
      await expectNotSigned(bg, 'perps_sendCommand', await btcOrder()); // revoked: refused before the replay
      await expectNotSigned(bg2, 'perps_sendCommand', await btcOrder());
    },
  );

  it('writing an older session bundle back and restarting the worker does not reset the daily usage', async () => {
    const bg = await ready();
    await grant(bg, { ...btcOnly, dailyNotional: '1000' });
    expect(await autoLock(bg)).toBe('session');
    const old = await bg.db().get('meta', 'session' as never);
    await bg.page(page).request('perps_sendCommand', await btcOrder('0.015')); // 975 USDC
    await expectNotSigned(bg, 'perps_sendCommand', await btcOrder('0.015'));
    await bg.db().put('meta', old as never);
    const bg2 = restart();
    await bg2.ready;
    await expectNotSigned(bg2, 'perps_sendCommand', await btcOrder('0.015'));
  });
});

describe('a trading session whose bundle is untouched survives a worker restart', () => {
  it(
    'after a worker restart with the bundle untouched the ' +
      'session still signs inside the grant and keeps its usage',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      expect(await autoLock(bg)).toBe('session');
      await bg.page(page).request('perps_sendCommand', await btcOrder()); // a use: the bundle is re-sealed
      const bg2 = restart();
      await bg2.ready;
      const before = trading();
      await bg2.page(page).request('perps_sendCommand', await btcOrder());
      expect(trading() - before).toBe(1);
      expect(((await call(bg2, 'vault.status')).result as { state: string }).state).toBe('session');
      expect(Number((await bg2.grants().list())[0]!.used24h)).toBeGreaterThan(1000);
    },
  );
});

describe('panic stops granted orders', () => {
  it(
    'granted orders fired during panic: none is signed after ' +
      'it starts, nothing is open after, the vault is locked',
    async () => {
      const bg = await ready();
      await grant(bg, btcOnly);
      const had = new Set(openPerps().map((o) => o.oid));
      const sent = Array.from({ length: 10 }, async (_, i) => {
        await sleep(i * 3);
        return bg
          .page(page)
          .request('perps_sendCommand', await btcOrder('0.001'))
          .catch((e) => e);
      });
      await sleep(5);
      const r = await call(bg, 'panic.run', { closePositions: false });
      expect(r.ok).toBe(true);
      await Promise.all(sent);
      expect(openPerps().filter((o) => !had.has(o.oid))).toEqual([]);
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('locked');
    },
  );
});
