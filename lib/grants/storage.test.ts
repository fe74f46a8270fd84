/**
 * Grant storage ("flat as a grant is used"): uses in sealed per-minute buckets vouched for
 * by the grant's head. The caps stay exact across a worker restart with many uses, under concurrent
 * orders, as uses age past 24 h, after a torn write (either record lost), and for records written by
 * the previous version (`{ grant, uses }`, migrated when read).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import { GrantService } from './service';
import { DAY_MS, type Grant, type GrantRequest, type GrantUse } from './evaluate';
import type { Vault } from '../vault/vault';
import { TamperedRecordError } from '../vault/errors';
import { grantUseRecords, HEAD_LAG_MS } from './use-records';
import { grantWorkers } from '../../test/kits/grants';

const SITE = 'https://trade.example';
const ACCOUNT = '0x5aA4Dd94dEa3FEb6B2Bd1a5E5DB3d9A5c3a40307';
const T0 = 1_800_000_000_000;
/** 0.01 ETH-PERP at 3 100: 31 USDC notional. */
const ORDER: GrantRequest = {
  kind: 'order',
  venue: 'perps',
  orders: [{ market: '2', buy: true, size: '0.01', price: '3100', postOnly: true }],
};
const ref = async () => ({ price: '3100', source: 'mark' as const });
const armed = async () => true;
let n = 0;

/** A vault and grant service on a fresh database; `restart()` opens both again on it (a worker restart). */
async function setup(daily = '1000') {
  const w = await grantWorkers(`grant-storage-${n++}`, { now: T0, limits: { dailyNotional: daily } });
  return { ...w, ...w.first };
}

const order = (grants: GrantService) => grants.consume(SITE, ACCOUNT, ORDER, ref, armed);
/** `count` uses of `notional` each, spread over the 23 h before `end`. */
const spread = (count: number, notional: string, end: number): GrantUse[] =>
  Array.from({ length: count }, (_, i) => ({
    at: end - 23 * 3_600_000 + Math.floor((i * 23 * 3_600_000) / count),
    notional,
    seq: i + 1,
  }));

describe('grant storage: caps exact with many uses', () => {
  it('keeps the daily cap exact across a worker restart with 3 000 uses in the last 24 h', async () => {
    const { vault, grants, grant, clock, restart } = await setup('10000');
    await grantUseRecords(vault).putGrant(grant, spread(3_000, '3', clock.now)); // 9 000 USDC used
    grants.reload();
    let signed = 0;
    while ((await order(grants))?.ok) signed++;
    expect(signed).toBe(32); // 32 × 31 = 992 ≤ 1 000 left; the 33rd would reach 10 023
    const after = await restart();
    expect((await order(after.grants))?.ok).toBe(false);
    expect(await after.grants.list()).toMatchObject([{ used24h: '9992', uses24h: 3_032 }]);
  });

  it('lets exactly one of three concurrent orders take the last slot of the cap', async () => {
    const { vault, grants, grant, clock } = await setup('1000');
    // 961 used: one more reaches 992, a second 1 023
    await grantUseRecords(vault).putGrant(grant, spread(31, '31', clock.now));
    grants.reload();
    const all = await Promise.all([order(grants), order(grants), order(grants)]);
    expect(all.filter((d) => d?.ok)).toHaveLength(1);
    expect(await grants.list()).toMatchObject([{ used24h: '992' }]);
  });

  it('stops counting a use 24 h after it was made, also after a restart', async () => {
    const { vault, grants, grant, clock, restart } = await setup('62');
    // A grant lasts at most 24 h, so its oldest uses age out only near its end: seeded 23 h 59 min ago.
    const old = clock.now - DAY_MS + 60_000;
    await grantUseRecords(vault).putGrant(grant, [
      { at: old, notional: '31', seq: 1 },
      { at: old + 1, notional: '31', seq: 2 },
    ]);
    grants.reload();
    expect((await order(grants))?.ok).toBe(false); // 93 > 62
    clock.now = old + DAY_MS - 1; // still inside the 24 h
    expect((await order(grants))?.ok).toBe(false);
    clock.now = old + DAY_MS; // the first is 24 h old: 31 + 31 = 62 fits
    expect((await order(grants))?.ok).toBe(true);
    clock.now = old + DAY_MS + 1; // both seeded uses are out
    const after = await restart();
    expect(await after.grants.list()).toMatchObject([{ used24h: '31', uses24h: 1 }]);
    expect((await order(after.grants))?.ok).toBe(true);
  });
});

describe('grant storage: a torn write never lets the cap be exceeded', () => {
  /** A grant with one order of room left, and the `meta` index and grant head as they were before the last use. */
  async function nearCap() {
    const s = await setup('62');
    expect((await order(s.grants))?.ok).toBe(true);
    // the head catches up with its uses (at most HEAD_LAG_MS after them)
    await grantUseRecords(s.vault)['flushHeads']();
    const head = await s.db.get('secrets', `grant:${s.grant.id}`);
    const index = await s.db.get('meta', 'index');
    const buckets = await s.db.getAll('secrets', IDBKeyRange.bound('grantuse:', 'grantuse:\uffff'));
    expect((await order(s.grants))?.ok).toBe(true); // 62: the cap is reached
    await grantUseRecords(s.vault)['flushHeads']();
    return { ...s, before: { head, index, buckets } };
  }

  it(
    'counts a use across a restart before its head caught up ' +
      '(the bucket alone is written before anything is signed)',
    async () => {
      const s = await setup('62');
      expect((await order(s.grants))?.ok).toBe(true);
      expect((await order(s.grants))?.ok).toBe(true); // 62: the cap is reached; the head still says fewer uses
      const stored = await s.db.get('secrets', `grant:${s.grant.id}`);
      expect(stored, 'the head was written when the grant was made').toBeDefined();
      const after = await s.restart();
      expect(await after.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
      expect((await order(after.grants))?.ok).toBe(false);
    },
  );

  it('writes the head once for the uses since, at most HEAD_LAG_MS after them', async () => {
    const s = await setup('1000');
    const headBytes = async () => JSON.stringify((await s.db.get('secrets', `grant:${s.grant.id}`))?.sealed);
    const before = await headBytes();
    for (let i = 0; i < 3; i++) expect((await order(s.grants))?.ok).toBe(true);
    expect(await headBytes(), 'no head write on the signing path').toBe(before);
    await vi.waitFor(async () => expect(await headBytes()).not.toBe(before), { timeout: HEAD_LAG_MS * 4 });
    // Caught up: a restart reads the three uses under the new head.
    const after = await s.restart();
    expect(await after.grants.list()).toMatchObject([{ uses24h: 3 }]);
  });

  it('counts a use whose bucket was written but whose head was not (and repairs the head)', async () => {
    const { db, before, restart } = await nearCap();
    // The head and the index as they were before the last use: only its bucket reached the disk.
    if (!before.head || !before.index) throw new Error('nothing stored');
    await db.put('secrets', before.head);
    await db.put('meta', before.index);
    const after = await restart();
    expect(await after.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
    expect((await order(after.grants))?.ok).toBe(false);
    const again = await restart(); // the head was repaired: the next use is numbered after the torn one
    expect((await order(again.grants))?.ok).toBe(false);
    expect(await again.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
  });

  it('refuses the grant when its head was written but the bucket of its use was not', async () => {
    const { db, before, restart } = await nearCap();
    for (const b of before.buckets) await db.put('secrets', b); // the bucket as it was before the last use
    const after = await restart();
    // The vault refuses the records; the service then covers nothing (every request asks) and says why.
    await expect(grantUseRecords(after.vault).listGrants()).rejects.toBeInstanceOf(TamperedRecordError);
    expect(await order(after.grants)).toBeUndefined();
    expect(after.grants.integrityFailed).toBe(true);
  });
});

describe('grant storage: recorded orders between two orders', () => {
  const owned = async (v: Vault) =>
    (await grantUseRecords(v).listGrants())[0]?.uses.flatMap((u) => (u.orders ?? []).map((o) => o.oid)) ?? [];

  it('writes the orders of a use with the next use of the minute, and without one within HEAD_LAG_MS', async () => {
    const s = await setup('1000');
    const first = await order(s.grants);
    if (!first?.ok) throw new Error('not covered');
    await s.grants.recordOrders(first.grantId, first.seq, [{ oid: 11 }]);
    expect(await owned(s.vault), 'counted at once where the grant checks look').toEqual([11]);
    expect((await order(s.grants))?.ok).toBe(true); // the same minute's bucket, written with the order of the first use
    expect(await owned((await s.restart()).vault)).toEqual([11]);
    // No use after it: the flush writes its orders within HEAD_LAG_MS.
    const third = await order(s.grants);
    if (!third?.ok) throw new Error('not covered');
    await s.grants.recordOrders(third.grantId, third.seq, [{ oid: 12 }]);
    await vi.waitFor(async () => expect(await owned((await s.restart()).vault)).toEqual([11, 12]), {
      timeout: HEAD_LAG_MS * 4,
    });
  });
});

describe('grant storage: records of the previous version', () => {
  it('migrates a { grant, uses } record when read: same uses, same caps, then stored as buckets', async () => {
    const { db, vault, grant, clock, restart } = await setup('62');
    const legacy: { grant: Grant; uses: GrantUse[] } = {
      grant,
      uses: [{ at: clock.now - 1_000, notional: '31', seq: 1, orders: [{ oid: 7 }] }],
    };
    // What the previous version wrote: the whole grant with its uses in one sealed record.
    await vault['exclusive'](() => vault['put']('grant', `grant:${grant.id}`, grant.account, {}, legacy));
    const after = await restart();
    expect(await grantUseRecords(after.vault).listGrants()).toEqual([legacy]);
    expect(await db.getAllKeys('secrets', IDBKeyRange.bound('grantuse:', 'grantuse:\uffff'))).toHaveLength(1);
    expect((await order(after.grants))?.ok).toBe(true);
    expect((await order(after.grants))?.ok).toBe(false);
    const again = await restart();
    expect(await again.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
  });
});

describe('grant storage: a trading session', () => {
  it('counts uses made before and during the session across a worker restart and after unlock', async () => {
    const { vault, grants, restart } = await setup('93');
    expect((await order(grants))?.ok).toBe(true); // sealed by the master key
    await vault.enterTradingSession({ accounts: [ACCOUNT] }); // buckets re-sealed by the session key
    expect(vault.state).toBe('session');
    const entered = await restart(); // read back from the disk only
    expect(await entered.grants.list()).toMatchObject([{ used24h: '31', uses24h: 1 }]);
    expect((await order(entered.grants))?.ok).toBe(true);
    const during = await restart();
    expect(during.vault.state).toBe('session');
    expect(await during.grants.list()).toMatchObject([{ used24h: '62', uses24h: 2 }]);
    expect((await order(during.grants))?.ok).toBe(true);
    expect((await order(during.grants))?.ok).toBe(false); // 124 > 93
    await during.vault.unlock('a long enough password'); // back to records sealed by the master key
    const after = await restart();
    expect(after.vault.state).toBe('unlocked');
    expect(await after.grants.list()).toMatchObject([{ used24h: '93', uses24h: 3 }]);
    expect((await order(after.grants))?.ok).toBe(false);
  });
});
