/**
 * The dead-man switch, the trading session, lock and panic with a live grant: a site never makes the
 * dead-man unset the venue's auto-cancel, a session that ends is a lock, a trading session reaches nothing
 * beyond the grant, nothing signs after Lock or Panic, a request asks while its venue's kill switch is not
 * live, and every armed period is closed in the audit log. A connected site holding a narrow standing grant
 * (or someone at the unlocked browser during a trading session) drives the real background against the in-process
 * sandbox. Black-box: page requests, procedures, the sandbox's request log, and what this background put on the wire
 * (`wire`).
 */
import 'fake-indexeddb/auto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { AUTOLOCK_ALARM, GRANTS_ALARM, startBackground } from './index';
import {
  BOUNDS,
  browser,
  KDF,
  onboardDemo,
  type PagedBackground,
  recordingFetch,
  type Reply,
  type SentRequest,
  sleep,
  until,
  waitPending,
  withPages,
  btcOnly,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
const approvalWindow = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html`,
});
let n = 0;
type Bg = PagedBackground;
const call = async (bg: Bg, type: string, payload: unknown = {}, sender: object = popup()) =>
  (await bg.handle({ type, payload }, sender)) as Reply;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: undefined });
});
afterAll(async () => {
  await h.close();
});
const started: Bg[] = [];
let clockSkew = 0;
beforeEach(() => {
  fakeBrowser.reset();
  h.clock.now = Date.now(); // the harness clock stands still: each test starts at the real time
});
afterEach(async () => {
  for (const bg of started.splice(0)) await call(bg, 'vault.lock').catch(() => undefined);
  h.ctx.clob.heartbeats.clear(); // each test's background starts its own heartbeat session
  h.clock.advance(-clockSkew);
  clockSkew = 0;
});

const owner = () => h.demo.owner.address;
const trading = () =>
  h.ctx.requestLog.filter(
    (r) =>
      r.method !== 'GET' &&
      /^\/perps\/v1\/trade\/(orders|orders-coid|orders\/all|leverage|margin)$|^\/clob\/orders?$/.test(r.path),
  ).length;
const BTC = '1';
const mark = async (iid: string) =>
  ((await h.read('tickers', { instrument_id: Number(iid) })) as { mark_price: string }[])[0]!.mark_price;
const btcOrder = async (qty = '0.01') => ({
  op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty, p: await mark(BTC), tif: 'gtc', po: true }] },
});
const ethOrder = {
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '3000', tif: 'gtc', po: true }] },
};

/** What this background sent: every request through its fetch, with a hook that may hold one (by path). */
type Wire = { sent: SentRequest[]; failing: string[]; hold?: { path: string; fn: () => Promise<void> } };
const autoCancelTimes = (w: Wire) =>
  w.sent
    .filter((s) => s.url.includes('/v1/trade/auto-cancel'))
    .map((s) => (JSON.parse(s.body || '{}') as { op?: { args?: { time?: number } } }).op?.args?.time);

async function ready(o: { now?: () => number } = {}): Promise<{ bg: Bg; wire: Wire }> {
  const wire: Wire = { sent: [], failing: [] };
  const fetchFn = recordingFetch(wire, {
    beforeSend: async (url) => {
      const hold = wire.hold;
      if (hold && url.includes(hold.path)) {
        wire.hold = undefined;
        await hold.fn();
      }
      if (wire.failing.some((f) => url.includes(f))) throw new TypeError('fetch failed');
    },
  });
  const bg = withPages(
    startBackground({
      browser,
      dbName: `deadman-session-${n++}`,
      kdf: KDF,
      bounds: BOUNDS,
      fetchFn,
      ...(o.now ? { now: o.now } : {}),
    }),
  );
  started.push(bg);
  await onboardDemo(bg, h, page);
  return { bg, wire };
}
const state = async (bg: Bg) => ((await call(bg, 'vault.status')).result as { state: string }).state;
const armed = async (bg: Bg, venue = 'perps') =>
  ((await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }).venues.some(
    (v) => v.venue === venue && v.armed,
  );
const autoLock = async (bg: Bg) => {
  await fakeBrowser.alarms.onAlarm.trigger({ name: AUTOLOCK_ALARM, scheduledTime: Date.now() } as Parameters<
    typeof fakeBrowser.alarms.onAlarm.trigger
  >[0]);
  await until(async () => (await state(bg)) !== 'unlocked');
  return state(bg);
};
const grant = (bg: Bg, limits: object = btcOnly, durationMs = 3_600_000) =>
  bg.grants().create({ origin: SITE, account: owner(), limits: limits as never, durationMs });
const openPerps = () =>
  [...h.ctx.venue.orders.values()].filter((o) => o.owner === owner().toLowerCase() && o.status === 'open');
const venueAutoCancelAt = () => h.ctx.venue.accounts.get(owner().toLowerCase())?.autoCancelAt;

describe('a site cannot make the dead-man unset the auto-cancel while its orders are open', () => {
  it(
    'wallet_revokePermissions right after placing orders under ' +
      'the grant: no autoCancel {time: 0}; the switch still fires',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      expect(bg.registry.size).toBe(0);
      const mine = openPerps().length;
      expect(mine).toBeGreaterThan(0);
      await bg.page(page).request('wallet_revokePermissions', [{ eth_accounts: {} }]);
      await sleep(500);
      expect(autoCancelTimes(wire), 'the site disarmed the dead-man').not.toContain(0);
      expect(venueAutoCancelAt()).toBeGreaterThan(0);
      expect(openPerps().length).toBe(mine);
      await call(bg, 'vault.lock');
    },
  );
});

describe('the last grant expiring ends a trading session as a lock', () => {
  it('locks (the session ends), and the end is a lock: the switches are left to fire, no time 0', async () => {
    let skew = 0;
    const { bg, wire } = await ready({ now: () => Date.now() + skew });
    await grant(bg, btcOnly, 120_000);
    await until(() => armed(bg));
    await bg.page(page).request('perps_sendCommand', await btcOrder());
    expect(await autoLock(bg)).toBe('session');
    skew = 121_000;
    h.clock.advance(121_000);
    clockSkew += 121_000;
    await fakeBrowser.alarms.onAlarm.trigger({ name: GRANTS_ALARM, scheduledTime: Date.now() } as Parameters<
      typeof fakeBrowser.alarms.onAlarm.trigger
    >[0]);
    await until(async () => (await state(bg)) === 'locked');
    await sleep(500);
    expect(autoCancelTimes(wire), 'a session that ends is a lock: the dead-man halts, never unsets').not.toContain(0);
  });
});

describe('a trading session reaches nothing beyond the grant', () => {
  it('a request whose window was being built when auto-lock fired cannot be approved in the session', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await until(() => armed(bg));
    // The out-of-grant order passes the "unlocked" check, then auto-lock fires while its window is being built.
    wire.hold = { path: '/portfolio', fn: async () => void (await autoLock(bg)) };
    const before = trading();
    const out = bg
      .page(page)
      .request('perps_sendCommand', ethOrder)
      .then(
        () => 'signed',
        (e: { code?: number }) => e,
      );
    for (
      let i = 0;
      i < 200 &&
      bg.registry.size === 0 &&
      (await Promise.race([out.then(() => true), sleep(10).then(() => false)])) === false;
      i++
    );
    expect(await state(bg)).toBe('session');
    const pending = bg.registry.list();
    if (pending.length) {
      // Someone at the unlocked browser approves it from the approval window (approval.decide is a session procedure).
      await call(
        bg,
        'approval.decide',
        { id: pending[0]!.id, approve: true, digest: pending[0]!.digest },
        approvalWindow(),
      );
    }
    expect(await out).toMatchObject({ code: 4900 });
    expect(trading() - before, 'an order outside the grant was signed in a trading session').toBe(0);
    await call(bg, 'vault.lock');
  });

  it(
    'popup procedures outside SESSION_PROCEDURES, page requests ' +
      'outside the grant, new grants, account switch: refused',
    async () => {
      const { bg } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      expect(await autoLock(bg)).toBe('session');
      const before = trading();
      for (const [type, payload] of [
        ['grant.create', { approvalId: 'x', limits: btcOnly, minutes: 60 }],
        ['account.select', { address: owner() }],
        ['proxy.issue', { account: owner(), expiry: Math.floor(Date.now() / 1000) + 3600 }],
        ['clob.postOrders', { account: owner(), orders: [] }],
        ['clob.cancel', { account: owner(), orderIds: ['1'] }],
        ['proxy.delete', { account: owner(), proxy: h.demo.proxy.address }],
      ] as const) {
        expect((await call(bg, type, payload)).error, type).toMatchObject({ code: 4900 });
      }
      // No procedure answers a content script (pages reach the provider through the port only).
      expect((await call(bg, 'vault.status', {}, page)).error).toMatchObject({ code: 4100 });
      await expect(bg.page(page).request('perps_sendCommand', ethOrder)).rejects.toMatchObject({ code: 4900 });
      await expect(bg.page(page).request('eth_requestAccounts', undefined)).rejects.toMatchObject({ code: 4900 });
      expect(bg.registry.size).toBe(0);
      expect(trading() - before).toBe(0);
      await call(bg, 'vault.lock');
    },
  );
});

describe('nothing signs after Lock or Panic', () => {
  it('lock while a granted request reads its reference price: the order never reaches the venue', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await until(() => armed(bg));
    wire.hold = { path: '/tickers', fn: async () => void (await call(bg, 'vault.lock')) };
    const before = trading();
    const out = await bg
      .page(page)
      .request('perps_sendCommand', await btcOrder())
      .then(
        () => 'signed',
        (e: { code?: number }) => e,
      );
    expect(out).toMatchObject({ code: 4900 });
    expect(trading() - before).toBe(0);
  });

  it('panic while a granted request reads its reference price: refused, nothing sent', async () => {
    const { bg, wire } = await ready();
    await grant(bg);
    await until(() => armed(bg));
    let report: Promise<Reply> | undefined;
    wire.hold = {
      path: '/tickers',
      fn: async () => {
        report = call(bg, 'panic.run', { closePositions: false });
        await sleep(50);
      },
    };
    const before = trading();
    const at = h.ctx.requestLog.length;
    const out = await bg
      .page(page)
      .request('perps_sendCommand', await btcOrder())
      .then(
        () => 'signed',
        (e: { code?: number }) => e,
      );
    expect(out).not.toBe('signed');
    await report;
    // Only panic's own cancel-all may have gone out.
    const sent = h.ctx.requestLog.slice(at).filter((r) => r.path === '/perps/v1/trade/orders' && r.method === 'POST');
    expect(sent.length).toBe(0);
    expect(trading() - before).toBeLessThanOrEqual(1);
    expect(await state(bg)).toBe('locked');
  });
});

describe('panic in a trading session cancels with the session keys and ends locked', () => {
  it(
    'panic from the session cancels at both venues with the session ' +
      'keys, never lets the session lock under it, and ends locked',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      await until(() => armed(bg));
      await bg.page(page).request('perps_sendCommand', await btcOrder());
      expect(await autoLock(bg)).toBe('session');
      const report = (await call(bg, 'panic.run', { closePositions: false })).result as {
        perps: { ok?: boolean };
        clob: { ok?: boolean };
        locked: boolean;
        grants: number;
      };
      expect(report).toMatchObject({ perps: { ok: true }, clob: { ok: true }, locked: true, grants: 1 });
      expect(openPerps()).toEqual([]);
      await sleep(300);
      expect(autoCancelTimes(wire)).not.toContain(0);
    },
  );
});

describe('a granted request needs the kill switch of its own venue live', () => {
  it(
    'an order-book request under an order-book grant asks ' + 'while heartbeats fail, though the perps switch is armed',
    async () => {
      const { bg, wire } = await ready();
      await grant(bg);
      const tokenA = h.ctx.clob.markets[0]!.tokenIds[0]!;
      await grant(bg, {
        venue: 'clob',
        markets: [tokenA],
        allow: { order: true },
        maxNotional: '2000',
        dailyNotional: '20000',
        priceBandPct: '20',
      });
      await until(() => armed(bg, 'clob'));
      // Heartbeats fail from now on (the venue does not answer them); the perps switch stays armed.
      wire.failing = ['/v1/heartbeats'];
      await sleep(7_000);
      expect(await armed(bg, 'perps')).toBe(true);
      const before = trading();
      const out = bg
        .page(page)
        .request('clob_postOrders', {
          orders: [{ tokenId: tokenA, side: 'BUY', price: '0.40', size: '10', orderType: 'GTC' }],
        })
        .then(
          () => 'signed',
          (e: { code?: number }) => e,
        );
      const pending = await waitPending(bg);
      expect(pending.length, 'signed with the heartbeat lapsed').toBe(1);
      expect(pending[0]!.flags.join(' ')).toMatch(/kill switch/);
      bg.registry.decide(pending[0]!.id, { approve: false });
      expect(await out).toMatchObject({ code: 4001 });
      expect(trading() - before).toBe(0);
      await call(bg, 'vault.lock');
    },
    30_000,
  );
});

describe('the dead-man audit: one entry per armed period, none hidden', () => {
  it('a period ended by Lock is closed in the audit log (arm and end both present after unlocking)', async () => {
    const { bg } = await ready();
    await grant(bg);
    await until(() => armed(bg));
    await bg.page(page).request('perps_sendCommand', await btcOrder());
    await call(bg, 'vault.lock');
    await sleep(200);
    expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    const audit = (await call(bg, 'audit.list', { limit: 100 })).result as {
      kind: string;
      origin: string;
      summary: string;
    }[];
    const mine = audit.filter((e) => e.origin === 'dead-man' && e.summary.includes('perps'));
    expect(mine.map((e) => e.kind)).toEqual(['deadman.end', 'deadman.arm']);
    expect(mine[0]!.summary).toMatch(/halted by lock or panic/);
  });

  it('a period ended by Panic is closed in the audit log too', async () => {
    const { bg } = await ready();
    await grant(bg);
    await until(() => armed(bg));
    await call(bg, 'panic.run', { closePositions: false });
    await sleep(200);
    expect((await call(bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
    const audit = (await call(bg, 'audit.list', { limit: 100 })).result as {
      kind: string;
      origin: string;
      summary: string;
    }[];
    const mine = audit.filter((e) => e.origin === 'dead-man' && e.summary.includes('perps'));
    expect(mine.map((e) => e.kind)).toEqual(['deadman.end', 'deadman.arm']);
  });
});
