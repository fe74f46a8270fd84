/**
 * The keyed records' store on IndexedDB (`idbOutcomeStore`): a record several keys share (a batch's
 * client order ids) is stored once and read back under every key; a later record under one of those keys
 * never changes what the others read; a key whose shared record is gone reads as an unknown outcome, never
 * as none; a row of another shape reads as none; pruning drops what is older than the window.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { idbOutcomeStore, type StoredOutcome } from './outcomes';

let n = 0;
const rec = (at: number, what: string): StoredOutcome => ({
  at,
  what,
  reason: '',
  data: { command: 'createOrders' },
  answered: { fingerprint: what, answer: { what } },
});

describe("the keyed records' store", () => {
  it(
    "a batch's record is stored once and read under each key; " +
      'a later record under one key leaves the others as they were',
    async () => {
      const db = await openVaultDb(`outcomes-store-${n++}`);
      const store = idbOutcomeStore(db);
      const batch = rec(1_000, 'batch');
      await store.put({ 'o|a|perps-coid|x': batch, 'o|a|perps-coid|y': batch, 'o|a|perps-key|k': batch });
      expect((await db.getAll('keyed')).filter((r) => !('ref' in (r.value as object)))).toHaveLength(1);
      await store.put({ 'o|a|perps-coid|x': rec(2_000, 'other order') });
      const all = await store.load(0);
      expect(all['o|a|perps-coid|y']?.what).toBe('batch');
      expect(all['o|a|perps-key|k']?.what).toBe('batch');
      expect(all['o|a|perps-coid|x']?.what).toBe('other order');
      expect(Object.keys(all).sort()).toEqual(['o|a|perps-coid|x', 'o|a|perps-coid|y', 'o|a|perps-key|k']);
    },
  );

  it(
    'a key whose shared record is gone reads as an unknown outcome; ' +
      'a row of another shape reads as none; prune drops old rows',
    async () => {
      const db = await openVaultDb(`outcomes-store-${n++}`);
      const store = idbOutcomeStore(db);
      const batch = rec(1_000, 'batch');
      await store.put({ 'o|a|perps-coid|x': batch, 'o|a|perps-coid|y': batch });
      for (const r of await db.getAll('keyed')) if (r.key.startsWith('#')) await db.delete('keyed', r.key);
      await db.put('keyed', { key: 'o|a|clob|junk', at: 1_500, value: { what: 42 } });
      const all = await store.load(0);
      expect(all['o|a|perps-coid|x']).toMatchObject({ reason: expect.stringMatching(/look it up/) });
      expect(all['o|a|perps-coid|x']?.answered).toBeUndefined();
      expect(all['o|a|clob|junk']).toBeUndefined();
      await store.prune(1_200);
      expect((await db.getAllKeys('keyed')).sort()).toEqual(['o|a|clob|junk']);
    },
  );
});
