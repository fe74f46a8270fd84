/**
 * What the check a tab open runs (incremental) and the full check detect, case by case, and what each
 * costs the database: the tab's check never counts the whole store (Chromium counts by walking every
 * record while holding the connection), the full check links every entry and counts in bounded key ranges.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openVaultDb, type AuditEntry, type VaultDb } from '../vault/db';
import { appendAudit, auditLog, checkAudit, pageAudit, type AuditCheck, type AuditInput, type AuditLog } from './index';

let n = 0;
const entry = (i: number, o: Partial<AuditInput> = {}): AuditInput => ({
  at: 1_000 + i,
  origin: 'https://a.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: `order ${i}`,
  result: 'ok',
  ...o,
});

async function fresh(): Promise<{ db: VaultDb; log: AuditLog }> {
  const db = await openVaultDb(`audit-tamper-${n++}`);
  const key = (await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKey;
  return { db, log: auditLog(db, async () => key) };
}
async function fill(log: AuditLog, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await appendAudit(log, entry(i));
}
const rows = async (db: VaultDb) => (await db.getAll('audit')) as (AuditEntry & { id: number })[];
/** A full check run to its end (polled as the popup does). */
async function fullCheck(log: AuditLog): Promise<AuditCheck> {
  let r = await checkAudit(log, { full: true });
  while (r.state === 'checking') {
    await new Promise((res) => setTimeout(res, 1));
    r = await checkAudit(log);
  }
  return r;
}

// Every count the audit store is asked for: `whole` when it spans the whole store (no key range),
// `above` for the ids past a given one (the entries above the checkpoint), else the span of ids.
type CountCall = { whole: boolean; above: boolean; span: number };
let counts: CountCall[] = [];
const nativeCount = IDBObjectStore.prototype.count;
beforeEach(() => {
  counts = [];
  IDBObjectStore.prototype.count = function (this: IDBObjectStore, query?: IDBValidKey | IDBKeyRange | null) {
    if (this.name === 'audit') {
      const r = query instanceof IDBKeyRange ? query : undefined;
      const span = r && typeof r.lower === 'number' && typeof r.upper === 'number' ? r.upper - r.lower : Infinity;
      counts.push({ whole: query === undefined || query === null, above: !!r && r.upper === undefined, span });
    }
    return nativeCount.call(this, query ?? undefined);
  };
});
afterEach(() => {
  IDBObjectStore.prototype.count = nativeCount;
});

describe('the check a tab open runs', () => {
  it('never counts the whole store, and the newest page with its check answers with the chain intact', async () => {
    const { log } = await fresh();
    await fill(log, 30);
    await checkAudit(log);
    await fill(log, 5);
    counts = [];
    const [page, check] = await Promise.all([pageAudit(log, { limit: 10 }), checkAudit(log)]);
    expect(page.entries).toHaveLength(10);
    expect(check).toMatchObject({ ok: true, state: 'ok', count: 35, checked: 5 });
    expect(counts.filter((c) => c.whole)).toEqual([]);
  });

  it('detects an entry deleted, changed or reordered among the entries added since the last check', async () => {
    for (const tamper of ['deleted', 'changed', 'reordered'] as const) {
      const { db, log } = await fresh();
      await fill(log, 4);
      expect((await checkAudit(log)).ok).toBe(true);
      await fill(log, 4);
      const all = await rows(db);
      if (tamper === 'deleted') await db.delete('audit', all[5]!.id);
      if (tamper === 'changed') await db.put('audit', { ...all[5]!, summary: 'order 5 for 10× the size' });
      if (tamper === 'reordered') {
        await db.put('audit', { ...all[6]!, id: all[5]!.id });
        await db.put('audit', { ...all[5]!, id: all[6]!.id });
      }
      expect(await checkAudit(log), tamper).toMatchObject({
        ok: false,
        state: 'broken',
        brokenAt: all[tamper === 'deleted' ? 6 : 5]!.id,
      });
    }
  });

  it(
    'leaves a deletion, change or reordering among already verified entries to ' +
      'the full check, which names the entry and is reported by every later check',
    async () => {
      for (const tamper of ['deleted', 'changed', 'reordered'] as const) {
        const { db, log } = await fresh();
        await fill(log, 8);
        expect((await checkAudit(log)).ok).toBe(true);
        const all = await rows(db);
        if (tamper === 'deleted') await db.delete('audit', all[3]!.id);
        if (tamper === 'changed') await db.put('audit', { ...all[3]!, origin: 'extension' });
        if (tamper === 'reordered') {
          await db.put('audit', { ...all[4]!, id: all[3]!.id });
          await db.put('audit', { ...all[3]!, id: all[4]!.id });
        }
        // the tab's check covers what is new and the log's ends
        expect((await checkAudit(log)).state, tamper).toBe('ok');
        if (tamper !== 'deleted')
          // a page shown checks each entry's seal
          expect((await pageAudit(log)).entries.find((e) => e.id === all[3]!.id)?.status, tamper).toBe('changed');
        counts = [];
        expect(await fullCheck(log), tamper).toMatchObject({
          ok: false,
          state: 'broken',
          brokenAt: all[tamper === 'deleted' ? 4 : 3]!.id,
        });
        expect(counts.filter((c) => c.whole)).toEqual([]);
        await appendAudit(log, entry(99));
        expect(await checkAudit(log), tamper).toMatchObject({ ok: false, state: 'broken' });
      }
    },
  );

  it('detects the oldest or the newest entries removed at once', async () => {
    for (const end of ['oldest', 'newest'] as const) {
      const { db, log } = await fresh();
      await fill(log, 6);
      expect((await checkAudit(log)).ok).toBe(true);
      const all = await rows(db);
      await db.delete('audit', end === 'oldest' ? all[0]!.id : all[5]!.id);
      expect(await checkAudit(log), end).toMatchObject({
        ok: false,
        state: 'broken',
        reason: `the ${end} entries were removed`,
      });
    }
  });
});

describe('the full check', () => {
  it(
    'counts the entries kept from before the current seal in ' +
      'bounded key ranges, never the whole store, and finds one removed',
    async () => {
      const { db, log } = await fresh();
      for (let i = 0; i < 5; i++) await db.add('audit', { ...entry(i), group: 'perps', hash: `0x${'1'.repeat(64)}` });
      await appendAudit(log, entry(5)); // seals the log: the five entries before stay unauthenticated
      expect(await checkAudit(log)).toMatchObject({ ok: true, unauthenticated: 5 });
      await db.delete('audit', 3);
      counts = [];
      const r = await fullCheck(log);
      expect(r).toMatchObject({ ok: false, state: 'broken', reason: expect.stringContaining('1 entry was removed') });
      expect(counts.filter((c) => c.whole)).toEqual([]);
      expect(Math.max(...counts.filter((c) => !c.above).map((c) => c.span))).toBeLessThanOrEqual(20_000);
      expect(await checkAudit(log)).toMatchObject({
        ok: false,
        state: 'broken',
        reason: expect.stringContaining('1 entry was removed'),
      });
    },
  );

  it('passes on an untouched log, and later checks say when every entry was last checked', async () => {
    const { log } = await fresh();
    await fill(log, 12);
    expect((await checkAudit(log)).fullAt).toBeUndefined(); // the tab's check does not claim the middle was checked
    expect(await fullCheck(log)).toMatchObject({ ok: true, state: 'ok' });
    expect(await checkAudit(log)).toMatchObject({ ok: true, state: 'ok', count: 12, fullAt: expect.any(Number) });
  });
});
