/**
 * ATTACKS 31 (grant/vault level; outside review of 1b1e391 + 4107427). Setup as attack30 (Vault +
 * GrantService + journal over fake-indexeddb with a clock seam; `restart()` = a worker restart).
 *
 * Tried:
 * - two worker stops in a row: the second worker's merge write of the first one's leftover fails too
 *   (storage error) and it stops; the third worker still counts the use (cap 3 orders: 2 more, not 3) — holds
 *   Note for test authors: attack30's `order(w, 'never')` helper restored the sealer before the
 *   background-task write ran, so that write actually landed (fixed since: a 'never' worker keeps it).
 * - a leftover merged while the next worker is in a trading session ('session' state): covered at the
 *   background level (lib/background/attack31.test.ts 31.1)
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { useWorkers, useOrder, journalRecords, uses24h, type Sealer } from './testkit';
import { grantUseRecords } from './use-records';

const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));
/** A worker with one ETH-PERP grant whose 24 h cap is `daily` USDC (`useWorkers`). */
const setup = (daily = '100') => useWorkers('grant-attack31', daily);
const order = useOrder;
const stored = journalRecords;

describe('31G.1 two stops in a row, the merge write fails in between', () => {
  it('holds: worker 1 sends with its write failing and stops; worker 2 merges the leftover but that write fails, and stops; worker 3 counts the use (3 orders fit the cap: 2 more, not 3)', async () => {
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
    expect(stored(s).filter((r) => r.use), 'the record still carries the use').toHaveLength(1);
    const w3 = await s.restart();
    expect(await uses24h(w3.grants)).toBe(1);
    expect((await order(w3)).ok).toBe(true);
    expect((await order(w3)).ok).toBe(true);
    expect((await order(w3)).ok, 'a fourth order on a 3-order cap').toBe(false);
  }, 30_000);
});
