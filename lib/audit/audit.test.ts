import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { keccak256, stringToHex } from 'viem';
import { MIGRATIONS, openVaultDb, V1, type AuditCheckpointRecord, type AuditEntry, type VaultDb } from '../vault/db';
import {
  appendAudit,
  auditCsv,
  auditLog,
  auditOrigins,
  auditProgress,
  checkAudit,
  exportAudit,
  InvalidEntryError,
  pageAudit,
  pruneAudit,
  resealAfterRestore,
  type AuditCheck,
  type AuditInput,
  type AuditLog,
} from './index';
import { checkpointParts, entryParts } from './mac';

let n = 0;
const DAY = 86_400_000;
const hmacKey = () =>
  crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']) as Promise<CryptoKey>;
const entry = (i: number, o: Partial<AuditInput> = {}): AuditInput => ({
  at: 1_000 + i,
  origin: 'https://a.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: `order ${i}, "quoted"`,
  digest: `0x${String(i).padStart(64, '0')}`,
  result: 'ok',
  ...o,
});

/** A log with its own key; `lock()` / `unlock()` switch the key source like the vault does. */
async function fresh(): Promise<{
  db: VaultDb;
  log: AuditLog;
  lock: () => void;
  unlock: () => void;
  rekey: () => Promise<void>;
}> {
  const db = await openVaultDb(`audit-${n++}`);
  let key = await hmacKey();
  let unlocked = true;
  return {
    db,
    log: auditLog(db, async () => (unlocked ? key : undefined)),
    lock: () => void (unlocked = false),
    unlock: () => void (unlocked = true),
    rekey: async () => void (key = await hmacKey()),
  };
}
async function fill(log: AuditLog, count: number, o: (i: number) => Partial<AuditInput> = () => ({})): Promise<void> {
  for (let i = 0; i < count; i++) await appendAudit(log, entry(i, o(i)));
}
// test-side inspection only
const rows = async (db: VaultDb) => (await db.getAll('audit')) as (AuditEntry & { id: number })[];
const checkpoint = async (db: VaultDb) => (await db.get('meta', 'auditCheckpoint')) as AuditCheckpointRecord;
async function settle(log: AuditLog, o: { full?: boolean } = {}): Promise<{ last: AuditCheck; seen: AuditCheck[] }> {
  const seen: AuditCheck[] = [];
  let r = await checkAudit(log, o);
  seen.push(r);
  while (r.state === 'checking') {
    await new Promise((res) => setTimeout(res, 1));
    r = await checkAudit(log);
    seen.push(r);
  }
  return { last: r, seen };
}

// ---- A store writer who knows the format but not the key: rebuilds every link and the checkpoint. ----
type Forge = (parts: unknown[]) => Promise<string>;
const keccakForge: Forge = async (parts) => keccak256(stringToHex(JSON.stringify(parts))).slice(2);
const otherKeyForge = async (): Promise<Forge> => {
  const k = await hmacKey();
  return async (parts) =>
    Buffer.from(await crypto.subtle.sign('HMAC', k, new TextEncoder().encode(JSON.stringify(parts)))).toString('hex');
};
async function rechain(db: VaultDb, forge: Forge): Promise<void> {
  const cp = await checkpoint(db);
  const all = await rows(db);
  let prev = cp.anchor;
  for (const e of all) {
    e.prev = prev;
    e.mac = await forge(entryParts(e, e.id, prev));
    prev = e.mac;
    await db.put('audit', e);
  }
  const next = {
    ...cp,
    count: all.length,
    firstId: all[0]?.id ?? cp.lastId + 1,
    lastId: all[all.length - 1]?.id ?? cp.lastId,
    head: prev,
  };
  await db.put('meta', { ...next, mac: await forge(checkpointParts(next)) });
}

describe('appendAudit / checkAudit: a chain a store writer cannot rebuild', () => {
  it('verifies an untouched log', async () => {
    const { log } = await fresh();
    await fill(log, 5);
    expect(await checkAudit(log)).toMatchObject({
      ok: true,
      state: 'ok',
      count: 5,
      checked: 5,
      unauthenticated: 0,
      pending: 0,
    });
  });

  for (const [name, attacker] of [
    ['keccak', async () => keccakForge],
    ['HMAC under another key', otherKeyForge],
  ] as const) {
    it(`detects an edited entry re-chained with ${name}`, async () => {
      const { db, log } = await fresh();
      await fill(log, 5);
      const third = (await rows(db))[2]!;
      await db.put('audit', { ...third, summary: 'order 2 for 10× the size' });
      await rechain(db, await attacker());
      const r = await checkAudit(log);
      expect(r).toMatchObject({ ok: false, state: 'broken', reason: expect.stringContaining('seal did not verify') });
      // The forged checkpoint does not verify: a new seal starts and the entries before it are never shown as sealed.
      expect((await pageAudit(log)).entries.find((e) => e.id === third.id)).toMatchObject({
        summary: 'order 2 for 10× the size',
        status: 'unauthenticated',
      });
    });

    it(`detects the oldest entries dropped and the anchor moved (${name})`, async () => {
      const { db, log } = await fresh();
      await fill(log, 6);
      const all = await rows(db);
      await db.delete('audit', IDBKeyRange.bound(all[0]!.id, all[1]!.id));
      const cp = await checkpoint(db);
      const moved = { ...cp, anchor: all[1]!.mac!, firstId: all[2]!.id, count: 4 };
      await db.put('meta', { ...moved, mac: await (await attacker())(checkpointParts(moved)) });
      expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    });

    it(`detects a standing-permission entry re-attributed to the extension (${name})`, async () => {
      const { db, log } = await fresh();
      await fill(log, 4, (i) =>
        i === 2 ? { origin: 'https://dapp.example', summary: 'Sell 0.2 BTC-PERP at 1 (standing permission)' } : {},
      );
      const e = (await rows(db))[2]!;
      await db.put('audit', { ...e, origin: 'extension', summary: 'Sell 0.2 BTC-PERP at 1' });
      await rechain(db, await attacker());
      expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    });

    it(`detects the newest entries truncated (${name})`, async () => {
      const { db, log } = await fresh();
      await fill(log, 6);
      const all = await rows(db);
      await db.delete('audit', IDBKeyRange.bound(all[4]!.id, all[5]!.id));
      await rechain(db, await attacker());
      expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    });
  }

  it('detects an edited entry re-chained while the real checkpoint is kept', async () => {
    const { db, log } = await fresh();
    await fill(log, 5);
    const cp = await checkpoint(db);
    const third = (await rows(db))[2]!;
    await db.put('audit', { ...third, summary: 'order 2 for 10× the size' });
    await rechain(db, keccakForge);
    await db.put('meta', cp);
    expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    expect((await pageAudit(log)).entries.map((e) => e.status)).toEqual([
      'changed',
      'changed',
      'changed',
      'changed',
      'changed',
    ]);
  });

  it(
    'detects the newest entries truncated without touching ' + 'the checkpoint, and still after another append',
    async () => {
      const { db, log } = await fresh();
      await fill(log, 6);
      const all = await rows(db);
      await db.delete('audit', IDBKeyRange.bound(all[4]!.id, all[5]!.id));
      expect(await checkAudit(log)).toMatchObject({ ok: false, reason: 'the newest entries were removed' });
      await appendAudit(log, entry(9));
      expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    },
  );

  it('detects a forged entry inserted between two others', async () => {
    const { db, log } = await fresh();
    await fill(log, 4);
    const [, second, third] = await rows(db);
    const forge = await otherKeyForge();
    const forged: AuditEntry = {
      ...entry(99, { origin: 'extension', summary: 'Withdrew 5 000 USDC' }),
      group: 'perps',
      id: second!.id + 0.5,
      prev: second!.mac!,
    };
    forged.mac = await forge(entryParts(forged, forged.id!, forged.prev!));
    await db.put('audit', forged);
    await db.put('audit', { ...third!, prev: forged.mac });
    expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken' });
    const page = (await pageAudit(log)).entries;
    expect(page.find((e) => e.id === forged.id)?.status).toBe('changed');
  });

  it('reports a removed checkpoint and records the new seal that follows it', async () => {
    const { db, log } = await fresh();
    await fill(log, 3);
    await db.delete('meta', 'auditCheckpoint');
    const r = await checkAudit(log);
    expect(r).toMatchObject({
      ok: false,
      state: 'broken',
      unauthenticated: 3,
      seals: [{ reason: 'missing', count: 3 }],
    });
    const page = (await pageAudit(log)).entries;
    expect(page[0]).toMatchObject({ kind: 'audit.seal', result: 'error', status: 'ok' });
    expect(page.slice(1).map((e) => e.status)).toEqual(['unauthenticated', 'unauthenticated', 'unauthenticated']);
    await appendAudit(log, entry(7));
    expect((await checkAudit(log)).ok).toBe(false); // while entries from before the break are kept
  });

  it('refuses a malformed entry with a typed error naming the field, and records nothing', async () => {
    const { db, log } = await fresh();
    await expect(appendAudit(log, { ...entry(1), at: Number.NaN })).rejects.toBeInstanceOf(InvalidEntryError);
    await expect(appendAudit(log, { ...entry(1), origin: 42 as unknown as string })).rejects.toMatchObject({
      data: { field: 'origin' },
    });
    expect(await db.count('audit')).toBe(0);
  });

  it('records a dead-man period with nothing more than the usual fields', async () => {
    const { log } = await fresh();
    const r = await appendAudit(log, {
      at: 5_000,
      origin: 'dead-man',
      account: '0xabc',
      kind: 'deadman.period',
      summary: 'Kill switches armed 10:00–11:00: 450 renewals, last at 10:59:52',
      result: 'ok',
    });
    expect(r.sealed).toBe(true);
    expect((await pageAudit(log, { kind: 'deadman' })).entries).toMatchObject([
      { kind: 'deadman.period', status: 'ok' },
    ]);
  });
});

describe('entries recorded while locked', () => {
  it('are kept, shown as pending, then chained in (marked) at the next keyed append', async () => {
    const { log, lock, unlock } = await fresh();
    await fill(log, 2);
    lock();
    expect(await appendAudit(log, entry(10, { summary: 'panic while locked' }))).toMatchObject({ sealed: false });
    expect(await checkAudit(log)).toMatchObject({ state: 'locked', ok: false });
    expect((await pageAudit(log)).entries.map((e) => e.status)).toEqual(['unchecked', 'unchecked', 'unchecked']);
    unlock();
    expect((await pageAudit(log)).entries.map((e) => e.status)).toEqual(['pending', 'ok', 'ok']);
    await appendAudit(log, entry(11));
    expect((await pageAudit(log)).entries.map((e) => [e.summary, e.status])).toEqual([
      ['order 11, "quoted"', 'ok'],
      ['panic while locked', 'locked'],
      ['order 1, "quoted"', 'ok'],
      ['order 0, "quoted"', 'ok'],
    ]);
    expect(await checkAudit(log)).toMatchObject({ ok: true, count: 4, pending: 0 });
  });
});

describe('checkAudit: incremental and full', () => {
  it('verifies only the entries added since the last check', async () => {
    const { log } = await fresh();
    await fill(log, 5);
    expect((await checkAudit(log)).checked).toBe(5);
    await fill(log, 3);
    expect(await checkAudit(log)).toMatchObject({ ok: true, count: 8, checked: 3 });
    expect((await checkAudit(log)).checked).toBe(0);
  });

  it(
    'a full check runs in the background with progress, finds an ' +
      'edit among checked entries, and every later check reports it',
    async () => {
      const { db, log } = await fresh();
      await fill(log, 2_500);
      expect((await checkAudit(log, { inlineLimit: 100 })).state).toBe('checking'); // too many new entries: background
      const first = await settle(log);
      expect(first.last).toMatchObject({ ok: true, count: 2_500 });
      const old = (await rows(db))[10]!;
      await db.put('audit', { ...old, summary: 'edited after it was checked' });
      expect((await checkAudit(log)).ok).toBe(true); // not new: only a full check walks it again
      const full = await settle(log, { full: true });
      const progress = full.seen.filter((r) => r.state === 'checking').map((r) => r.progress!);
      expect(progress[0]).toMatchObject({ done: 0, total: 2_500, full: true });
      expect(full.last).toMatchObject({ ok: false, brokenAt: old.id, reason: expect.stringContaining('changed') });
      await appendAudit(log, entry(3_000));
      expect(await checkAudit(log)).toMatchObject({ ok: false, brokenAt: old.id });
    },
  );

  it('reports progress chunk by chunk while a full check runs', async () => {
    const { log } = await fresh();
    await fill(log, 2_200);
    expect((await checkAudit(log, { full: true })).progress).toEqual({ done: 0, total: 2_200, full: true });
    const done: number[] = [];
    for (let p = auditProgress(log); p; p = auditProgress(log)) {
      if (done.at(-1) !== p.done) done.push(p.done);
      await new Promise((r) => setImmediate(r));
    }
    expect(done).toEqual([0, 1_000, 2_000, 2_200]); // chunks of 1 000
    expect(await checkAudit(log)).toMatchObject({ ok: true, state: 'ok', checked: 0 });
  });
});

describe('a background check and the lock', () => {
  it('stops when the vault locks and records nothing as checked', async () => {
    const { log, lock, unlock } = await fresh();
    await fill(log, 2_500);
    expect((await checkAudit(log, { full: true })).state).toBe('checking');
    lock();
    while (auditProgress(log)) await new Promise((r) => setImmediate(r));
    unlock();
    expect(await checkAudit(log)).toMatchObject({ ok: true, checked: 2_500 }); // nothing was recorded as checked
  });
});

describe('pageAudit / exportAudit / auditOrigins: cursors and filters', () => {
  it('pages newest first with filters and returns every entry exactly once', async () => {
    const { log } = await fresh();
    const origins = ['https://a.example', 'https://b.example', 'extension'];
    const kinds = ['perps.createOrders', 'clob.postOrders', 'grant.create', 'perps.cancelOrders'];
    await fill(log, 60, (i) => ({ origin: origins[i % 3]!, kind: kinds[i % 4]! }));
    const walk = async (q: { origin?: string; kind?: string }) => {
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const p = await pageAudit(log, { ...q, limit: 7, ...(before === undefined ? {} : { before }) });
        seen.push(...p.entries.map((e) => e.id));
        expect(p.entries.every((e) => e.status === 'ok')).toBe(true);
        if (p.next === null) return seen;
        before = p.next;
      }
    };
    const ids = (pred: (i: number) => boolean) =>
      Array.from({ length: 60 }, (_, i) => i)
        .filter(pred)
        .map((i) => i + 1)
        .reverse();
    expect(await walk({})).toEqual(ids(() => true));
    expect(await walk({ origin: 'https://b.example' })).toEqual(ids((i) => i % 3 === 1));
    expect(await walk({ kind: 'perps' })).toEqual(ids((i) => i % 4 === 0 || i % 4 === 3));
    expect(await walk({ kind: 'perps.cancel' })).toEqual(ids((i) => i % 4 === 3));
    expect(await walk({ origin: 'extension', kind: 'clob' })).toEqual(ids((i) => i % 3 === 2 && i % 4 === 1));
    expect(await auditOrigins(log)).toEqual([...origins].sort());
    const exported: number[] = [];
    let after: number | undefined;
    for (;;) {
      const p = await exportAudit(log, { limit: 9, ...(after === undefined ? {} : { after }) });
      exported.push(...p.entries.map((e) => e.id));
      if (p.next === null) break;
      after = p.next;
    }
    expect(exported).toEqual(ids(() => true).reverse());
  });

  it('exports CSV with quoting', async () => {
    const { log } = await fresh();
    await appendAudit(log, entry(1));
    const csv = auditCsv((await exportAudit(log)).entries);
    expect(csv.split('\r\n')[0]).toBe('id,time,origin,account,kind,summary,digest,result,detail,status,mac');
    expect(csv).toContain('"order 1, ""quoted"""');
    expect(auditCsv((await exportAudit(log)).entries, { header: false }).startsWith('"1",')).toBe(true);
  });
});

describe('pruneAudit: a cursor from the oldest end', () => {
  it('drops old entries (more than one chunk) and what remains still verifies, incrementally and in full', async () => {
    const { log } = await fresh();
    await fill(log, 1_203, (i) => ({ at: 10 * DAY + i }));
    await fill(log, 3, (i) => ({ at: 100 * DAY + i }));
    expect((await checkAudit(log)).ok).toBe(true);
    expect(await pruneAudit(log, 30, 101 * DAY)).toBe(1_203);
    expect(await checkAudit(log)).toMatchObject({ ok: true, count: 3 });
    await appendAudit(log, entry(7, { at: 101 * DAY }));
    expect(await checkAudit(log)).toMatchObject({ ok: true, count: 4, checked: 1 });
    expect((await settle(log, { full: true })).last).toMatchObject({ ok: true, count: 4 });
  });

  it('stops at an entry that does not verify, keeping the evidence', async () => {
    const { db, log } = await fresh();
    await fill(log, 6, (i) => ({ at: 10 * DAY + i }));
    const all = await rows(db);
    await db.put('audit', { ...all[3]!, summary: 'edited' });
    expect(await pruneAudit(log, 30, 101 * DAY)).toBe(3);
    expect((await pageAudit(log)).entries.map((e) => e.id)).toEqual([6, 5, 4]);
    expect((await settle(log, { full: true })).last).toMatchObject({ ok: false, brokenAt: 4 });
  });

  it('drops nothing while locked', async () => {
    const { log, lock } = await fresh();
    await fill(log, 3, (i) => ({ at: 10 * DAY + i }));
    lock();
    expect(await pruneAudit(log, 30, 101 * DAY)).toBe(0);
  });
});

describe('seals: upgrade and restore', () => {
  it(
    'seals a v1 (keccak) log at the first keyed append; ' + 'its entries stay readable, marked not authenticated',
    async () => {
      const name = `audit-${n++}`;
      const v1 = await openVaultDb(name, [V1]);
      let prev = `0x${'0'.repeat(64)}`;
      for (let i = 0; i < 3; i++) {
        const e = { ...entry(i, { kind: i === 1 ? 'grant.create' : 'perps.createOrders' }), prev } as AuditEntry;
        e.hash = keccak256(
          stringToHex(
            JSON.stringify([
              prev,
              e.at,
              e.origin,
              e.account,
              e.kind,
              e.summary,
              e.digest ?? '',
              e.result,
              e.detail ?? '',
            ]),
          ),
        );
        prev = e.hash;
        await v1.add('audit', e);
      }
      v1.close();
      const db = await openVaultDb(name, MIGRATIONS);
      const key = await hmacKey();
      const log = auditLog(db, async () => key);
      await appendAudit(log, entry(5));
      const r = await checkAudit(log);
      expect(r).toMatchObject({ ok: true, unauthenticated: 3, seals: [{ reason: 'legacy', count: 3 }] });
      const page = (await pageAudit(log)).entries;
      expect(page.map((e) => [e.kind, e.status])).toEqual([
        ['perps.createOrders', 'ok'],
        ['audit.seal', 'ok'],
        ['perps.createOrders', 'unauthenticated'],
        ['grant.create', 'unauthenticated'],
        ['perps.createOrders', 'unauthenticated'],
      ]);
      // the v2 migration indexed the old entries
      expect((await pageAudit(log, { kind: 'grant' })).entries.map((e) => e.id)).toEqual([2]);
    },
  );

  it('after a restore from a backup of another vault, starts a new seal recorded as a restore', async () => {
    const { log, rekey } = await fresh();
    await fill(log, 3);
    await rekey();
    await resealAfterRestore(log);
    expect(await checkAudit(log)).toMatchObject({ ok: true, unauthenticated: 3, seals: [{ reason: 'restore' }] });
    expect((await pageAudit(log)).entries[0]).toMatchObject({
      kind: 'audit.seal',
      summary: expect.stringContaining('restored from a backup'),
    });
  });

  it('a changed key without a restore is reported as a broken seal', async () => {
    const { log, rekey } = await fresh();
    await fill(log, 3);
    await rekey();
    expect(await checkAudit(log)).toMatchObject({ ok: false, state: 'broken', seals: [{ reason: 'invalid' }] });
  });
});
