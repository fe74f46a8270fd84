/**
 * Panic is total across the vault, black-box: a vault holding several accounts (each with a proxy key
 * and/or order-book credentials and open orders at the sandbox), in each state the vault can be in
 * (unlocked, a trading session, one venue silent). Panic cancels on both venues for every account the
 * keys at hand allow, leaves armed kill switches armed, locks, and its report names each account and
 * venue with what happened — never an overall ok while any step is not.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import { panicBoundMs, type PanicAccountReport, type PanicReport, type PanicTiming } from './panic';
import type { DeadManStatus } from './deadman';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  markPrice,
  until,
  withPages,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';

const TIMING: PanicTiming = { drainMs: 500, requestTimeoutMs: 1_000, venuesMaxMs: 4_000 };
const PASSWORD = 'a good password';

let h: Harness;
let n = 0;
beforeEach(async () => {
  fakeBrowser.reset();
  h = await startHarness({ now: undefined });
});
afterEach(async () => {
  await h.close();
});

const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await callAs(bg, type, payload)) as Reply;
const ok = async (bg: PagedBackground, type: string, payload: unknown = {}) => {
  const r = await call(bg, type, payload);
  if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r.error)}`);
  return r.result;
};
const onTick = (x: number, tick: number, dp: number) => (Math.floor(x / tick) * tick).toFixed(dp);
const openPerps = (a: string) =>
  [...h.ctx.venue.orders.values()].filter(
    (o) => o.owner === a.toLowerCase() && (o.status === 'open' || o.status === 'untriggered'),
  );
const liveClob = (a: string) =>
  [...h.ctx.clob.orders.values()].filter((o) => o.address === a.toLowerCase() && o.status === 'live');
const row = (r: PanicReport, a: string) =>
  r.accounts.find((x) => x.account.toLowerCase() === a.toLowerCase()) as PanicAccountReport;

/** Two resting ETH buys of the active account `a` (popup path). */
async function restPerps(bg: PagedBackground, a: string) {
  const p = Number(await markPrice(h, 2));
  await ok(bg, 'perps.send', {
    account: a,
    op: {
      type: 'createOrders',
      args: [0.9, 0.91].map((k) => ({
        iid: 2,
        buy: true,
        qty: '0.1',
        p: onTick(p * k, 0.05, 2),
        tif: 'gtc',
        po: true,
      })),
    },
  });
}
/** Two resting order-book buys of the active account `a` (popup path). */
async function restClob(bg: PagedBackground, a: string) {
  const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
  await ok(bg, 'clob.postOrders', {
    account: a,
    orders: ['0.21', '0.22'].map((price) => ({ tokenId, side: 'BUY', price, size: '10', orderType: 'GTC' })),
  });
}

/**
 * A vault of three accounts: A (the sandbox's demo: proxy key and order-book credentials, a perps and an
 * order-book grant so both its kill switches are armed), B (an issued proxy key and order-book
 * credentials, no grant) and C (order-book credentials only). Each has open orders on every venue it has a
 * key for; A is the active account.
 */
async function threeAccounts() {
  const bg = withPages(
    startBackground({ browser, dbName: `panic-accounts-${n++}`, kdf: KDF, bounds: BOUNDS, panicTiming: TIMING }),
  );
  const A = h.demo.owner.address;
  const bKey = generatePrivateKey();
  const cKey = generatePrivateKey();
  const B = privateKeyToAccount(bKey);
  const C = privateKeyToAccount(cKey);
  await ok(bg, 'vault.create', { password: PASSWORD });
  await ok(bg, 'settings.set', {
    perpsUrl: h.perps,
    clobUrl: h.clobUrl,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
  });
  await ok(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey, label: 'A' });
  const p = h.demo.proxy;
  await ok(bg, 'proxy.import', {
    account: A,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  await ok(bg, 'clob.createOrDerive', { account: A });
  for (const [k, privateKey, label] of [
    [B, bKey, 'B'],
    [C, cKey, 'C'],
  ] as const) {
    await ok(bg, 'vault.importOwnerKey', { privateKey, label });
    await ok(bg, 'clob.createOrDerive', { account: k.address });
    h.ctx.clob.credit(k.address, 10_000_000_000n);
  }
  await ok(bg, 'proxy.issue', { account: B.address, expiry: Date.now() + 30 * 86_400_000, label: '' });
  await ok(bg, 'account.select', { address: B.address });
  await restPerps(bg, B.address);
  await restClob(bg, B.address);
  await ok(bg, 'account.select', { address: C.address });
  await restClob(bg, C.address);
  await ok(bg, 'account.select', { address: A });
  await restPerps(bg, A);
  await restClob(bg, A);
  await bg.grants().create({
    origin: 'https://trade.example',
    account: A,
    limits: {
      venue: 'perps',
      allow: { order: true, cancel: true, leverage: false },
      instruments: [2],
      maxNotional: '20000',
      dailyNotional: '1000000',
      priceBandPct: '20',
      slippagePct: '1',
    } as never,
    durationMs: 3_600_000,
  });
  await bg.grants().create({
    origin: 'https://trade.example',
    account: A,
    limits: {
      venue: 'clob',
      markets: [h.ctx.clob.markets[0]!.tokenIds[0]!],
      allow: { order: true },
      maxNotional: '20000',
      dailyNotional: '1000000',
      priceBandPct: '20',
    } as never,
    durationMs: 3_600_000,
  });
  await until(async () => {
    const s = (await ok(bg, 'deadman.status')) as DeadManStatus;
    return s.venues.some((v) => v.perpsCancelAt !== undefined) && s.venues.some((v) => v.lastHeartbeat !== undefined);
  }, 500);
  for (const a of [A, B.address]) expect(openPerps(a).length).toBe(2);
  for (const a of [A, B.address, C.address]) expect(liveClob(a).length).toBe(2);
  return { bg, A, B: B.address, C: C.address };
}
async function panic(bg: PagedBackground) {
  const t0 = Date.now();
  const report = (await ok(bg, 'panic.run', { closePositions: false })) as PanicReport;
  return { report, ms: Date.now() - t0 };
}

describe('panic with several accounts in the vault', () => {
  it('unlocked: cancels on both venues for every account, names each account and venue, and locks', async () => {
    const { bg, A, B, C } = await threeAccounts();
    const { report, ms } = await panic(bg);
    expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
    for (const a of [A, B]) expect(openPerps(a)).toEqual([]);
    for (const a of [A, B, C]) expect(liveClob(a)).toEqual([]);
    expect(report.accounts.map((x) => x.account.toLowerCase()).sort()).toEqual(
      [A, B, C].map((x) => x.toLowerCase()).sort(),
    );
    expect(row(report, A)).toMatchObject({
      active: true,
      perps: { ok: true, detail: '2 open order(s) cancelled' },
      clob: { ok: true, detail: '2 open order(s) cancelled' },
    });
    expect(row(report, B)).toMatchObject({
      active: false,
      perps: { ok: true, detail: '2 open order(s) cancelled' },
      clob: { ok: true, detail: '2 open order(s) cancelled' },
    });
    expect(row(report, C)).toMatchObject({
      perps: { skipped: 'no key for this venue' },
      clob: { ok: true, detail: '2 open order(s) cancelled' },
    });
    expect(report.ok).toBe(true);
    expect(report.locked).toBe(true);
    // A's armed kill switches stay armed: panic never unsets the auto-cancel.
    expect(
      h.ctx.requestLog.filter((r) => r.path === '/perps/v1/trade/auto-cancel' && /"time":0\b/.test(r.body ?? '')),
    ).toEqual([]);
    expect(h.ctx.venue.account(A as `0x${string}`).autoCancelAt).toBeGreaterThan(h.ctx.now());
    // The audit entry names every account.
    expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
    const [entry] = (await ok(bg, 'audit.list', { kind: 'panic' })) as { summary: string; result: string }[];
    for (const a of [A, B, C]) expect(entry!.summary.toLowerCase()).toContain(a.toLowerCase().slice(0, 10));
    expect(entry!.result).toBe('ok');
  });

  it(
    "order book silent: every account's order-book step says which kill switch " +
      'will cancel, or that none is armed; the report and its audit entry are not ok',
    async () => {
      const { bg, A, B, C } = await threeAccounts();
      h.ctx.setSilent('clob', true);
      const { report, ms } = await panic(bg);
      expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
      for (const a of [A, B]) expect(openPerps(a)).toEqual([]);
      expect(row(report, A).clob).toMatchObject({
        ok: false,
        noAnswer: true,
        killSwitch: 'heartbeat lapse',
        firesAt: expect.any(Number),
        error: expect.stringMatching(/^did not answer — its kill switch \(heartbeat lapse\) will cancel within \d+ s$/),
      });
      for (const a of [B, C])
        expect(row(report, a).clob).toMatchObject({
          ok: false,
          noAnswer: true,
          killSwitch: 'none',
          error: expect.stringMatching(/no kill switch (was )?armed/),
        });
      expect(report.ok).toBe(false);
      expect(report.locked).toBe(true);
      h.ctx.setSilent('clob', false);
      expect((await call(bg, 'vault.unlock', { password: PASSWORD })).ok).toBe(true);
      const [entry] = (await ok(bg, 'audit.list', { kind: 'panic' })) as { result: string }[];
      expect(entry!.result).toBe('error');
    },
  );

  it(
    'trading session: cancels with the keys the session kept, and ' +
      'names the accounts whose keys stay sealed as not cancelled',
    async () => {
      const { bg, A, B, C } = await threeAccounts();
      await bg.vault().enterTradingSession({ accounts: [A] });
      expect(bg.vault().state).toBe('session');
      const { report } = await panic(bg);
      expect(openPerps(A)).toEqual([]);
      expect(liveClob(A)).toEqual([]);
      expect(row(report, A)).toMatchObject({ perps: { ok: true }, clob: { ok: true } });
      for (const a of [B, C])
        expect(row(report, a).clob).toMatchObject({
          ok: false,
          error: expect.stringMatching(/sealed|password|unlock/i),
        });
      expect(row(report, B).perps).toMatchObject({ ok: false });
      expect(report.ok).toBe(false);
      expect(report.locked).toBe(true);
    },
  );

  it(
    'locked: nothing is signed; every account with keys is named as ' +
      'not cancelled, with its kill switch, and the report is not ok',
    async () => {
      const { bg, A, B, C } = await threeAccounts();
      expect((await call(bg, 'vault.lock')).ok).toBe(true);
      const sent = h.ctx.requestLog.length;
      const { report } = await panic(bg);
      expect(h.ctx.requestLog.slice(sent).filter((r) => r.method === 'DELETE')).toEqual([]);
      expect(report.accounts).toHaveLength(3);
      for (const a of [A, B])
        expect(row(report, a).perps).toMatchObject({
          ok: false,
          error: expect.stringMatching(/^not cancelled: its perps key is sealed until you unlock Countersign — /),
        });
      for (const a of [A, B, C])
        expect(row(report, a).clob).toMatchObject({
          ok: false,
          error: expect.stringMatching(/^not cancelled: its order-book key is sealed/),
        });
      expect(row(report, C).perps).toEqual({ skipped: 'no key for this venue' });
      expect(report.ok).toBe(false);
      expect(report.locked).toBe(true);
    },
  );
});
