/**
 * A grant's use ledger across worker stops: the grant head lags its uses by up to `HEAD_LAG_MS`, the
 * newest minute bucket is held in memory with its recorded orders (`updateGrantUses` defers an added
 * order to the next use or the flush), and `decide()`'s use is counted at once and written beside the
 * signature. Setup as lib/grants/storage.test.ts: a Vault and a GrantService over fake-indexeddb with a
 * clock seam; `restart()` opens both again on the same database and session store (a worker restart). A
 * worker that stops is modelled by replacing its `flushHeads` with a no-op before the moment it stops: a
 * stopped MV3 worker runs no timer, and a test cannot kill the old instance's own `setTimeout`.
 *
 * Rules: a failed head write keeps the held count, so the next use is numbered after every stored use and
 * a restart counts every use that was signed (the page-path side is in
 * lib/background/page-path.granted.test.ts); a forget (`GrantService.forgetCoids`) is written before it
 * resolves, so a stop never brings back a client order id the grant stopped owning. Only added orders may
 * be lost with a stop (a cancel of them then asks).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { GrantService } from './service';
import type { GrantRequest } from './evaluate';
import type { Vault } from '../vault/vault';
import { grantUseRecords } from './use-records';
import { grantWorkers } from '../../test/kits/grants';

const SITE = 'https://trade.example';
const ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
/** A minute boundary (Unix ms), so each test knows which bucket a use falls in. */
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
/** 0.01 ETH-PERP at 3 100: 31 USDC notional. */
const ORDER: GrantRequest = {
  kind: 'order',
  venue: 'perps',
  orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }],
};
const COID = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const CANCEL_BY_COID: GrantRequest = { kind: 'cancel', venue: 'perps', oids: [], coids: [COID] };
const ref = async () => ({ price: '3100', source: 'mark' as const });
const armed = async () => true;
let n = 0;

type Opened = { vault: Vault; grants: GrantService };

/**
 * A vault and grant service on a fresh database with one ETH-PERP grant (orders and cancels); `restart()` opens both
 * again on it.
 */
async function setup(daily = '1000') {
  const w = await grantWorkers(`ledger-restart-${n++}`, {
    now: T0,
    limits: { allow: { order: true, cancel: true }, dailyNotional: daily },
  });
  return { ...w, ...w.first };
}

const order = (g: GrantService) => g.consume(SITE, ACCOUNT, ORDER, ref, armed);
const cancelByCoid = (g: GrantService) => g.consume(SITE, ACCOUNT, CANCEL_BY_COID, ref, armed);
/** The worker of `o` stops here: its head / held-bucket flush never runs (a stopped worker runs no timer). */
const stops = (o: Opened) => {
  (grantUseRecords(o.vault) as unknown as { flushHeads: () => Promise<void> }).flushHeads = async () => undefined;
};
const flush = (o: Opened) => (grantUseRecords(o.vault) as unknown as { flushHeads: () => Promise<void> }).flushHeads();
const owned = async (v: Vault) =>
  (await grantUseRecords(v).listGrants())[0]?.uses.flatMap((u) =>
    (u.orders ?? []).map((o) => `${o.oid}${o.coid ? `/${o.coid}` : ''}`),
  ) ?? [];

describe('a client order id the grant stopped owning stays forgotten across a worker stop', () => {
  it(
    'a coid the grant stopped owning (an order outside the grant now carries it) is not owned ' +
      'again after a worker stop inside HEAD_LAG_MS: the cancel by that coid is not covered',
    async () => {
      const s = await setup();
      const placed = await order(s.grants);
      if (!placed?.ok) throw new Error('not covered');
      // The venue accepted the granted order with client order id COID; the grant owns it, and the disk says so.
      await s.grants.recordOrders(placed.grantId, placed.seq, [{ oid: 7, coid: COID }]);
      await flush(s);
      // COID is free again at the venue (filled / cancelled). The site now sends an order OUTSIDE its grant with
      // the same COID; before the window opens the provider makes the grant forget it (`forgetCoids`: a coid sent
      // outside the grant is no longer the grant's). That change is to the use of the held (newest) minute bucket.
      s.clock.now += 5_000;
      await s.grants.forgetCoids(SITE, ACCOUNT, [COID]);
      expect((await cancelByCoid(s.grants))?.ok, 'this worker: the grant no longer owns COID (the cancel asks)').toBe(
        false,
      );
      // The person approves that order in the window; the worker stops before the flush (HEAD_LAG_MS) — or the
      // flush's write fails (`flushHeads` swallows it and does not retry) and the worker stops any time later.
      stops(s);
      const after = await s.restart();
      const covered = await cancelByCoid(after.grants);
      expect(
        covered?.ok,
        `after the restart the grant must not own ${COID} again (owns ` +
          `${JSON.stringify(await owned(after.vault))}): a granted cancelOrdersCOID would ` +
          `reach the order the person approved outside the grant, without a window`,
      ).not.toBe(true);
    },
  );

  it(
    'a forget survives one failed flush write and a use in a later minute that ' +
      'moves the held bucket on: a later restart does not own the coid again',
    async () => {
      const s = await setup();
      const placed = await order(s.grants);
      if (!placed?.ok) throw new Error('not covered');
      await s.grants.recordOrders(placed.grantId, placed.seq, [{ oid: 7, coid: COID }]);
      await flush(s);
      await s.grants.forgetCoids(SITE, ACCOUNT, [COID]);
      // The flush runs, but its write of the held bucket fails once (a transient storage error).
      const v = grantUseRecords(s.vault) as unknown as { sealBucket: (...a: unknown[]) => Promise<unknown> };
      const real = v.sealBucket.bind(v);
      v.sealBucket = async () => {
        throw new DOMException('The operation failed for reasons unrelated to the database itself', 'UnknownError');
      };
      await flush(s);
      v.sealBucket = real;
      // The worker lives on: an order a minute later, more flushes. Nothing writes the forget again.
      s.clock.now += 61_000;
      expect((await order(s.grants))?.ok).toBe(true);
      await flush(s);
      expect((await cancelByCoid(s.grants))?.ok, 'this worker: not owned').toBe(false);
      const after = await s.restart(); // e.g. MV3 idles the worker out half a minute later
      const covered = await cancelByCoid(after.grants);
      expect(
        covered?.ok,
        `the restarted worker must not own ${COID} again (owns ` +
          `${JSON.stringify(await owned(after.vault))}) nor cover a granted cancel by it`,
      ).not.toBe(true);
    },
  );

  it(
    'the forget of a coid on a use of an older (not held) ' + 'bucket is written at once and survives the same stop',
    async () => {
      const s = await setup();
      const placed = await order(s.grants);
      if (!placed?.ok) throw new Error('not covered');
      await s.grants.recordOrders(placed.grantId, placed.seq, [{ oid: 7, coid: COID }]);
      s.clock.now += 61_000; // a later minute: another use makes that bucket the held one
      expect((await order(s.grants))?.ok).toBe(true);
      await s.grants.forgetCoids(SITE, ACCOUNT, [COID]);
      stops(s);
      const after = await s.restart();
      expect(await owned(after.vault)).toEqual(['7']);
      expect((await cancelByCoid(after.grants))?.ok).toBe(false);
    },
  );
});

describe('uses above the lagging head are counted across minutes, restarts and trading sessions', () => {
  it(
    'uses in two minute buckets with the head never flushed, and orders recorded on ' +
      'the first (written with the second use): a restart counts both and owns the orders',
    async () => {
      const s = await setup('62');
      const first = await order(s.grants);
      if (!first?.ok) throw new Error('not covered');
      await s.grants.recordOrders(first.grantId, first.seq, [{ oid: 11 }]);
      stops(s); // no flush at all from here: only the writes on the use path reach the disk
      s.clock.now += 60_000;
      expect((await order(s.grants))?.ok).toBe(true); // 62: the cap is reached
      const after = await s.restart();
      expect(await after.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
      expect((await order(after.grants))?.ok).toBe(false);
      expect(await owned(after.vault)).toEqual(['11']);
    },
  );

  it(
    'auto-lock into a trading session while the head lags and the held bucket carries ' +
      'recorded orders, then a restart in the session: the cap and the orders are kept',
    async () => {
      const s = await setup('93');
      const first = await order(s.grants);
      if (!first?.ok) throw new Error('not covered');
      expect((await order(s.grants))?.ok).toBe(true); // 62, head still at 0
      await s.grants.recordOrders(first.grantId, first.seq, [{ oid: 21 }]);
      // buckets re-sealed from the disk (without oid 21), heads copied lagging
      await s.vault.enterTradingSession({ accounts: [ACCOUNT] });
      // the held bucket (with oid 21) is written under the session key, the head caught up in the bundle
      await flush(s);
      const during = await s.restart();
      expect(during.vault.state).toBe('session');
      expect(await during.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
      expect(await owned(during.vault)).toEqual(['21']);
      expect((await order(during.grants))?.ok).toBe(true); // 93
      expect((await order(during.grants))?.ok).toBe(false);
    },
  );

  it(
    'a stop while the session head lags (no flush): the ' + 'restarted session worker counts the uses above the head',
    async () => {
      const s = await setup('62');
      await s.vault.enterTradingSession({ accounts: [ACCOUNT] });
      expect((await order(s.grants))?.ok).toBe(true);
      expect((await order(s.grants))?.ok).toBe(true);
      stops(s);
      const after = await s.restart();
      expect(after.vault.state).toBe('session');
      expect(await after.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
      expect((await order(after.grants))?.ok).toBe(false);
    },
  );

  it(
    'one failed head write in the flush (a transient storage error) keeps the held count: the next ' +
      'use gets a number of its own, and a restart counts every use that was signed — the daily cap holds',
    async () => {
      const s = await setup('93'); // three orders of 31
      expect((await order(s.grants))?.ok).toBe(true);
      expect((await order(s.grants))?.ok).toBe(true); // uses 1 and 2 in their bucket; the head on disk still says 0
      // The flush's head write fails once (a transient storage error); the held count must outlive it.
      const v = s.vault as unknown as { commit: (...a: unknown[]) => Promise<void> };
      const real = v.commit.bind(v);
      v.commit = async () => {
        throw new DOMException('The operation failed for reasons unrelated to the database itself', 'UnknownError');
      };
      await flush(s); // swallowed
      v.commit = real;
      expect((await order(s.grants))?.ok).toBe(true); // 93: the cap is reached (counted right in memory)
      expect((await order(s.grants))?.ok).toBe(false);
      await flush(s);
      const after = await s.restart();
      const list = await after.grants.list();
      const fourth = await order(after.grants);
      expect(
        list,
        `three uses were stored (and signed); the restarted worker counts ` +
          `${JSON.stringify(list.map((g) => ({ used24h: g.used24h, uses24h: g.uses24h })))}`,
      ).toMatchObject([{ used24h: '93', uses24h: 3 }]);
      expect(fourth?.ok, 'a fourth order over the 93 USDC cap is not covered after the restart').toBe(false);
    },
  );

  it(
    'a use whose bucket write fails is not stored, still counts in this ' +
      'worker (refuses sooner), and the next use is numbered without a gap',
    async () => {
      const s = await setup('93');
      expect((await order(s.grants))?.ok).toBe(true);
      const v = grantUseRecords(s.vault) as unknown as { sealBucket: (...a: unknown[]) => Promise<unknown> };
      const real = v.sealBucket.bind(v);
      v.sealBucket = async () => {
        throw new Error('storage failed (test)');
      };
      const failed = await s.grants.decide(SITE, ACCOUNT, ORDER, ref, armed);
      if (!failed?.ok) throw new Error('not covered');
      await expect(failed.reservation.written).rejects.toThrow('storage failed');
      v.sealBucket = real;
      expect((await order(s.grants))?.ok).toBe(true); // 31 + (31 unsent) + 31 = 93
      expect((await order(s.grants))?.ok).toBe(false);
      await flush(s);
      const after = await s.restart();
      // what was stored (and could be signed)
      expect(await after.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
      expect((await order(after.grants))?.ok).toBe(true);
      expect((await order(after.grants))?.ok).toBe(false);
    },
  );
});
