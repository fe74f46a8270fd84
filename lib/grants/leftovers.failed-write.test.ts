/**
 * A grant use whose vault write failed, or never ran, counts exactly once: a granted submission leaves
 * once its use is `counted` and its journal record carrying the use is stored; the use's vault write runs
 * in a later background task; `GrantService` keeps unwritten uses in memory (`unstored`) and merges them,
 * plus a stopped worker's journal leftovers, at every read of the grants. The use's second write lets its
 * journal record go (`onStored`). Setup as leftovers.test.ts: a Vault + GrantService + journal over
 * fake-indexeddb with a clock seam; `restart()` opens all three again on the same database and
 * `storage.session` double (a worker restart).
 */
import 'fake-indexeddb/auto';
import { grantUseRecords } from './use-records';
import { describe, expect, it } from 'vitest';
import { TamperedRecordError } from '../vault/errors';
import {
  SITE,
  USE_ACCOUNT,
  USE_T0,
  USE_ORDER,
  useRef,
  useArmed,
  useWorkers,
  useOrder,
  journalRecords,
  uses24h,
  type Sealer,
} from '../../test/kits/grants';

const ACCOUNT = USE_ACCOUNT;
const T0 = USE_T0;
const ORDER = USE_ORDER;
const ref = useRef;
const armed = useArmed;
const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));
/** A worker with one ETH-PERP grant whose 24 h cap is `daily` USDC (`useWorkers`). */
const setup = (daily = '100') => useWorkers('grant-failed-write', daily);
const order = useOrder;
const stored = journalRecords;

describe('a use whose write failed counts once across later uses, a re-read and a restart', () => {
  it(
    'a failed write, then a use that lands, then the grants are read again: each use counted ' +
      'once, numbers contiguous (no tamper), and the next worker counts 2 — not 1, not 3',
    async () => {
      const s = await setup('100');
      expect((await order(s.first, 'fails')).ok).toBe(true);
      expect((await order(s.first, 'lands')).ok).toBe(true);
      expect(await uses24h(s.first.grants)).toBe(2);
      s.first.grants.reload(); // as after a re-read of the grants from the vault
      expect(await uses24h(s.first.grants)).toBe(2);
      await tick();
      const inVault = (await grantUseRecords(s.first.vault).listGrants())[0]?.uses ?? [];
      expect(inVault).toHaveLength(2);
      expect(new Set(inVault.map((u) => u.seq)).size).toBe(2);
      const next = await s.restart();
      expect(await uses24h(next.grants)).toBe(2);
      expect(next.grants.integrityFailed).toBe(false);
      expect((await order(next)).ok, 'a third order of 31 fits in 100').toBe(true);
      expect((await order(next)).ok, 'a fourth (124) does not').toBe(false);
    },
  );

  it(
    'a use whose first vault write failed is written again at the next read of the grants, ' +
      'and that write lets its journal record go (no record stays open toward MAX_OPEN)',
    async () => {
      const s = await setup('1000');
      const r = await order(s.first, 'fails');
      expect(r.ok).toBe(true);
      s.first.grants.reload();
      expect(await uses24h(s.first.grants)).toBe(1);
      await tick(20);
      expect((await grantUseRecords(s.first.vault).listGrants())[0]?.uses, 'the use is in the vault now').toHaveLength(
        1,
      );
      await tick(20);
      expect(stored(s), 'the record that carried the (now stored) use is let go').toHaveLength(0);
    },
  );
});

describe('a grants read while the next worker is still locked does not use up the leftovers', () => {
  it(
    'a grants read before the session is restored (locked: nothing) does not use ' +
      "up the leftovers; after the restore the stopped worker's unwritten use counts",
    async () => {
      const s = await setup('70'); // two orders of 31
      expect((await order(s.first)).ok).toBe(true);
      expect((await order(s.first, 'never')).ok).toBe(true);
      const next = await s.restart(false);
      expect(await next.grants.list()).toEqual([]); // locked
      expect(await next.vault.restoreSession()).toBe(true);
      expect(await uses24h(next.grants)).toBe(2);
      expect((await order(next)).ok, 'a third of 31 is past the 70 cap').toBe(false);
    },
  );
});

describe("a leftover counts whatever the next worker's clock says", () => {
  it(
    "the next worker's clock is 10 min behind the stopped " + 'one\'s: the leftover (from "the future") still counts',
    async () => {
      const s = await setup('70');
      s.clock.now = T0 + 10 * 60_000;
      expect((await order(s.first)).ok).toBe(true);
      expect((await order(s.first, 'never')).ok).toBe(true);
      s.clock.now = T0 + 1_000;
      const next = await s.restart();
      expect(await uses24h(next.grants)).toBe(2);
      expect((await order(next)).ok).toBe(false);
      s.clock.now = T0 + 11 * 60_000;
      expect((await order(next)).ok).toBe(false);
    },
  );
});

describe("when the next worker's store fails its integrity check nothing is covered", () => {
  it(
    'the leftovers are let go (their grant reads as gone) but nothing is covered; ' +
      'revoke-all deletes the grant, so no later read brings it back without them',
    async () => {
      const s = await setup('70');
      expect((await order(s.first)).ok).toBe(true);
      expect((await order(s.first, 'never')).ok).toBe(true);
      const next = await s.restart();
      const v = grantUseRecords(next.vault) as unknown as { listGrants: () => Promise<unknown> };
      const real = v.listGrants.bind(v);
      v.listGrants = async () => {
        throw new TamperedRecordError();
      };
      expect(await next.grants.list()).toEqual([]);
      expect(next.grants.integrityFailed).toBe(true);
      expect(await next.grants.decide(SITE, ACCOUNT, ORDER, ref, armed)).toBeUndefined();
      v.listGrants = real;
      await next.grants.revokeAll();
      expect(await next.grants.list()).toEqual([]);
      expect(await next.grants.decide(SITE, ACCOUNT, ORDER, ref, armed)).toBeUndefined();
    },
  );
});

describe('a use survives two worker stops with the merge write failing in between', () => {
  it(
    'worker 1 sends with its write failing and stops; worker 2 merges the leftover but that ' +
      'write fails too, and stops; worker 3 counts the use (3 orders fit the cap: 2 more, not 3)',
    async () => {
      const s = await setup('100'); // 31 USDC an order: 3 fit
      // A write that fails leaves the use in the journal record only, which is what is wanted here.
      expect((await order(s.first, 'fails')).ok).toBe(true);
      expect(stored(s).filter((r) => r.use)).toHaveLength(1);
      const w2 = await s.restart();
      expect((await grantUseRecords(w2.vault).listGrants())[0]!.uses, 'not in the vault').toHaveLength(0);
      const v2 = grantUseRecords(w2.vault) as unknown as Sealer;
      const real = v2.sealBucket.bind(v2);
      let tried = 0;
      v2.sealBucket = async () => {
        tried++;
        throw new DOMException('The transaction was aborted', 'AbortError');
      };
      expect(await uses24h(w2.grants)).toBe(1); // merged here
      for (let i = 0; i < 200 && !tried; i++) await tick(10); // its write is tried, and fails
      await tick(20);
      v2.sealBucket = real;
      expect(tried).toBeGreaterThan(0);
      expect(
        stored(s).filter((r) => r.use),
        'the record still carries the use',
      ).toHaveLength(1);
      const w3 = await s.restart();
      expect(await uses24h(w3.grants)).toBe(1);
      expect((await order(w3)).ok).toBe(true);
      expect((await order(w3)).ok).toBe(true);
      expect((await order(w3)).ok, 'a fourth order on a 3-order cap').toBe(false);
    },
    30_000,
  );
});
