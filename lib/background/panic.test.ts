/**
 * The panic switch is total and bounded, black-box: through the background's
 * procedures and page requests, against the in-process sandbox, whose records are the truth.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { HEARTBEAT_TIMEOUT_MS } from '../sandbox/clob/routes';
import { startBackground } from './index';
import { ORDER_BOOK_HEARTBEAT_LAPSE_MS, panicBoundMs, type PanicReport, type PanicTiming } from './panic';
import type { DeadManStatus } from './deadman';
import { BOUNDS, browser, grantAtOrderWindow, KDF, withPages, type PagedBackground } from '../../test/kits/background';

/**
 * Shorter than the extension's (5 s drain, 5 s per request, 20 s venue phase) so a silent venue costs seconds, not
 * tens.
 */
const TIMING: PanicTiming = { drainMs: 500, requestTimeoutMs: 1_000, venuesMaxMs: 4_000 };
const SITE = 'https://trade.example';
const PASSWORD = 'a good password';
/** The standing grant the site gets (ETH-PERP orders and cancels). */
const GRANT_LIMITS = {
  venue: 'perps',
  allow: { order: true, cancel: true, leverage: false },
  instruments: [2],
  maxNotional: '5000',
  dailyNotional: '50000',
  priceBandPct: '20',
  slippagePct: '1',
}; // under the caps the offer proposes from the demo equity

const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
type Bg = PagedBackground;
type Reply = { ok: boolean; result?: unknown; error?: { name: string; code?: number } };
const call = async (bg: Bg, type: string, payload: unknown = {}) =>
  (await bg.handle({ type, payload }, popup())) as Reply;
const ethOrder = (p: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p, tif: 'gtc', po: true }] },
});

let h: Harness;
let n = 0;
beforeEach(async () => {
  fakeBrowser.reset();
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 5_000) {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const owner = () => h.demo.owner.address.toLowerCase();
const openPerps = () =>
  [...h.ctx.venue.orders.values()].filter(
    (o) => o.owner === owner() && (o.status === 'open' || o.status === 'untriggered'),
  );
const liveClob = () => [...h.ctx.clob.orders.values()].filter((o) => o.address === owner() && o.status === 'live');
const accepted = (from = 0) =>
  h.ctx.requestLog
    .slice(from)
    .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.status === 200).length;

/**
 * A background with the demo account (owner key, proxy key, order-book credentials), the site connected
 * and holding a standing grant, the dead-man's first renewal and heartbeat done.
 */
async function granted(timing: PanicTiming = TIMING): Promise<Bg> {
  const bg = withPages(
    startBackground({ browser, dbName: `panic-${n++}`, kdf: KDF, bounds: BOUNDS, panicTiming: timing }),
  );
  await call(bg, 'vault.create', { password: PASSWORD });
  await call(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  const p = h.demo.proxy;
  await call(bg, 'proxy.import', {
    account: h.demo.owner.address,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  expect((await call(bg, 'clob.createOrDerive', { account: h.demo.owner.address })).ok).toBe(true);
  await grantAtOrderWindow(bg, page, ethOrder('3100'), GRANT_LIMITS);
  // And an order-book grant for the same site (grants name one venue): both kill switches armed.
  await bg.grants().create({
    origin: SITE,
    account: h.demo.owner.address,
    limits: {
      venue: 'clob',
      markets: [h.ctx.clob.markets[0]!.tokenIds[0]!],
      allow: { order: true },
      maxNotional: '20000',
      dailyNotional: '1000000',
      priceBandPct: '20',
    },
    durationMs: 3_600_000,
  });
  await waitFor(async () => {
    const s = (await call(bg, 'deadman.status')).result as DeadManStatus;
    return s.venues.some((v) => v.perpsCancelAt !== undefined) && s.venues.some((v) => v.lastHeartbeat !== undefined);
  }, 'the first dead-man renewal and heartbeat');
  return bg;
}

/** Places `k` order-book orders from the popup. */
async function placeClob(bg: Bg, k: number) {
  const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
  const orders = Array.from({ length: k }, (_, i) => ({
    tokenId,
    side: 'BUY',
    price: (0.2 + i / 100).toFixed(2),
    size: '10',
    orderType: 'GTC',
  }));
  const r = await call(bg, 'clob.postOrders', { account: h.demo.owner.address, orders });
  expect(r.ok).toBe(true);
}

async function panic(bg: Bg, closePositions = false): Promise<{ report: PanicReport; ms: number }> {
  const t0 = Date.now();
  const r = await call(bg, 'panic.run', { closePositions });
  expect(r.ok).toBe(true);
  return { report: r.result as PanicReport, ms: Date.now() - t0 };
}

const unlocked = async (bg: Bg) => ((await call(bg, 'vault.status')).result as { unlocked: boolean }).unlocked;

describe('panic switch: a venue that does not answer', () => {
  it(
    'order book silent: panic returns within its bound, perps cancelled, grant ' +
      'revoked, vault locked; the report names the heartbeat lapse, which then cancels',
    async () => {
      const bg = await granted();
      for (let i = 0; i < 3; i++) await bg.page(page).request('perps_sendCommand', ethOrder(String(3099 - i)));
      await placeClob(bg, 2);
      expect(openPerps().length).toBe(4);
      expect(liveClob().length).toBe(2);

      h.ctx.setSilent('clob', true);
      const { report, ms } = await panic(bg);
      expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
      expect(report.locked).toBe(true);
      expect(await unlocked(bg)).toBe(false);
      expect(report.grants).toBe(2); // the perps and the order-book grant
      expect(report.perps).toEqual({ ok: true, detail: '4 open order(s) cancelled' });
      expect(openPerps()).toEqual([]);
      expect(report.clob).toMatchObject({
        ok: false,
        noAnswer: true,
        killSwitch: 'heartbeat lapse',
        error: expect.stringMatching(/^did not answer — its kill switch \(heartbeat lapse\) will cancel within \d+ s$/),
      });
      const within = (report.clob as { cancelWithinS: number }).cancelWithinS;
      expect(within).toBeGreaterThan(0);
      expect(within).toBeLessThanOrEqual(ORDER_BOOK_HEARTBEAT_LAPSE_MS / 1000);
      // The cancel was tried (twice: one retry) and never answered; nothing else reached the silent venue after it.
      expect(
        h.ctx.requestLog.filter((r) => r.method === 'DELETE' && r.path === '/clob/cancel-all' && r.status === 0),
      ).toHaveLength(2);
      // The perps kill switch stays armed: panic never sends autoCancel {time: 0}.
      expect(
        h.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/auto-cancel' && /"time":0\b/.test(r.body ?? '')),
      ).toEqual([]);
      expect(h.ctx.venue.account(h.demo.owner.address as `0x${string}`).autoCancelAt).toBeGreaterThan(0);
      // What the report promised: once heartbeats have lapsed the venue cancels the order-book orders.
      expect(liveClob().length).toBe(2);
      h.ctx.setSilent('clob', false);
      h.clock.advance(HEARTBEAT_TIMEOUT_MS + 1_000);
      await fetch(`${h.clobUrl}/ok`);
      expect(liveClob()).toEqual([]);
      // The grant is gone for good.
      expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
      expect((await call(bg, 'grant.list')).result).toEqual([]);
      // The audit log says what panic did, venue by venue (written before the lock).
      const [entry] = (await call(bg, 'audit.list', { kind: 'panic' })).result as { summary: string }[];
      expect(entry!.summary).toMatch(
        new RegExp(
          String.raw`^Panic switch: perps 4 open order\(s\) cancelled; ` +
            String.raw`order book did not answer — its kill switch \(heartbeat lapse\) will cancel within \d+ s;`,
        ),
      );
    },
  );

  it(
    'perps silent: every order-book order is still cancelled; ' +
      'the report names the perps auto-cancel, which then cancels',
    async () => {
      const bg = await granted();
      await bg.page(page).request('perps_sendCommand', ethOrder('3099'));
      await placeClob(bg, 10);
      expect(liveClob().length).toBe(10);

      h.ctx.setSilent('perps', true);
      const { report, ms } = await panic(bg, true);
      expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
      expect(report.clob).toEqual({ ok: true, detail: '10 open order(s) cancelled' });
      expect(liveClob()).toEqual([]);
      expect(report.perps).toMatchObject({
        ok: false,
        noAnswer: true,
        killSwitch: 'auto-cancel',
        error: expect.stringMatching(/^did not answer — its kill switch \(auto-cancel\) will cancel within \d+ s$/),
      });
      expect(report.positions).toMatchObject({ ok: false, error: expect.stringContaining('not closed') });
      expect(report.locked).toBe(true);
      expect(await unlocked(bg)).toBe(false);
      // The venue's auto-cancel, still armed, cancels the perps orders when its time comes.
      expect(openPerps().length).toBe(2);
      const at = h.ctx.venue.account(h.demo.owner.address as `0x${string}`).autoCancelAt!;
      expect(at - Date.now()).toBeLessThanOrEqual((report.perps as { cancelWithinS: number }).cancelWithinS * 1000);
      h.ctx.setSilent('perps', false);
      h.clock.now = at + 1;
      await h.read('openOrders');
      expect(openPerps()).toEqual([]);
    },
  );

  it('both venues silent: still bounded and locked, and each venue is named with its kill switch', async () => {
    const bg = await granted();
    h.ctx.setSilent('perps', true);
    h.ctx.setSilent('clob', true);
    const { report, ms } = await panic(bg);
    expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
    expect(report.perps).toMatchObject({ noAnswer: true, killSwitch: 'auto-cancel' });
    expect(report.clob).toMatchObject({ noAnswer: true, killSwitch: 'heartbeat lapse' });
    expect(await unlocked(bg)).toBe(false);
  });
});

describe('panic switch: signing stops first', () => {
  it('a granted request started after panic began is refused and nothing is signed', async () => {
    const bg = await granted();
    h.ctx.setSilent('clob', true); // holds panic in its cancel phase
    const running = panic(bg);
    await waitFor(() => h.ctx.requestLog.some((r) => r.path === '/clob/cancel-all'), 'panic to send its cancels');
    const before = accepted();
    const audit = (await bg.db().getAll('audit')).length;
    const late = await bg
      .page(page)
      .request('perps_sendCommand', ethOrder('3098'))
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 4900 });
    expect(bg.registry.size).toBe(0); // no window either
    expect(accepted(0) - before).toBe(0);
    expect((await bg.db().getAll('audit')).filter((e, i) => i >= audit && e.kind === 'perps.createOrders')).toEqual([]);
    const { report } = await running;
    expect(report.locked).toBe(true);
    expect(openPerps()).toEqual([]);
  });

  it(
    'a site flooding orders under its grant while panic runs: when panic ' +
      'returns nothing is open and nothing was accepted after the cancel',
    async () => {
      // The venues answer here (slowly, under the flood): the short test deadlines would report a busy
      // machine's slow answer as silence, which is not what this test is about.
      const bg = await granted({ drainMs: 500, requestTimeoutMs: 5_000, venuesMaxMs: 12_000 });
      await placeClob(bg, 3);
      let stop = false;
      let sent = 0;
      const flood = (async () => {
        for (let i = 0; !stop && i < 2_000; i++) {
          sent++;
          await bg
            .page(page)
            .request('perps_sendCommand', ethOrder((3090 - (i % 50) * 0.5).toFixed(1)))
            .catch(() => undefined);
        }
      })();
      await waitFor(() => accepted() >= 5, 'the flood to be under way');
      // a slow order book: a panic that revoked only after its cancels lets the flood through meanwhile
      h.ctx.delayMs.set('clob', 300);
      const { report } = await panic(bg);
      h.ctx.delayMs.delete('clob');
      const afterPanic = accepted();
      await new Promise((r) => setTimeout(r, 50));
      stop = true;
      await flood;
      expect(sent).toBeGreaterThan(5);
      expect(report.perps).toMatchObject({ ok: true });
      expect(report.clob).toEqual({ ok: true, detail: '3 open order(s) cancelled' });
      expect(openPerps()).toEqual([]);
      expect(liveClob()).toEqual([]);
      const cancelAt = h.ctx.requestLog.findIndex(
        (r) => r.method === 'DELETE' && r.path === '/perps/v1/trade/orders/all' && r.status === 200,
      );
      expect(cancelAt).toBeGreaterThan(0);
      expect(accepted(cancelAt)).toBe(0);
      expect(accepted()).toBe(afterPanic);
    },
  );

  it('still locks when a step throws, and says which step failed', async () => {
    const bg = await granted();
    const spy = vi.spyOn(bg.grants(), 'revokeAll').mockRejectedValue(new Error('disk full'));
    const { report } = await panic(bg);
    spy.mockRestore();
    expect(report.locked).toBe(true);
    expect(await unlocked(bg)).toBe(false);
    expect(report.problems.some((p) => p.startsWith('Revoking the standing permissions'))).toBe(true);
    expect(openPerps()).toEqual([]);
  });

  it('after the next unlock signing works again', async () => {
    const bg = await granted();
    await panic(bg);
    expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
    const r = await call(bg, 'perps.send', { account: h.demo.owner.address, op: ethOrder('3097').op });
    expect(r.ok).toBe(true);
    expect(openPerps().length).toBe(1);
  });
});

it('the order-book lapse panic reports is the one the sandbox applies', () => {
  expect(ORDER_BOOK_HEARTBEAT_LAPSE_MS).toBe(HEARTBEAT_TIMEOUT_MS);
});
