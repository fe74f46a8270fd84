import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { appendAudit, auditCsv, pruneAudit, verifyAudit } from './index';

let n = 0;
const entry = (i: number, at = 1_000 + i) => ({ at, origin: 'https://a.example', account: '0xabc', kind: 'perps.createOrders', summary: `order ${i}, "quoted"`, digest: `0x${String(i).padStart(64, '0')}`, result: 'ok' as const });

describe('audit hash chain', () => {
  it('verifies an untouched log and detects an edited entry', async () => {
    const db = await openVaultDb(`audit-${n++}`);
    for (let i = 0; i < 5; i++) await appendAudit(db, entry(i));
    expect(await verifyAudit(db)).toEqual({ ok: true, count: 5 });
    const third = (await db.getAll('audit'))[2]!;
    await db.put('audit', { ...third, summary: 'order 2 for 10× the size' });
    expect(await verifyAudit(db)).toMatchObject({ ok: false, brokenAt: third.id, reason: 'this entry was changed' });
  });

  it('detects a removed entry', async () => {
    const db = await openVaultDb(`audit-${n++}`);
    for (let i = 0; i < 4; i++) await appendAudit(db, entry(i));
    const all = await db.getAll('audit');
    await db.delete('audit', all[1]!.id!);
    expect(await verifyAudit(db)).toMatchObject({ ok: false, brokenAt: all[2]!.id, reason: 'an entry before it was removed or changed' });
  });

  it('retention drops old entries and what remains still verifies', async () => {
    const db = await openVaultDb(`audit-${n++}`);
    const day = 86_400_000;
    for (let i = 0; i < 3; i++) await appendAudit(db, entry(i, 10 * day + i));
    for (let i = 3; i < 6; i++) await appendAudit(db, entry(i, 100 * day + i));
    expect(await pruneAudit(db, 30, 101 * day)).toBe(3);
    expect(await verifyAudit(db)).toEqual({ ok: true, count: 3 });
    await appendAudit(db, entry(6, 101 * day));
    expect(await verifyAudit(db)).toEqual({ ok: true, count: 4 });
  });

  it('exports CSV with quoting', async () => {
    const db = await openVaultDb(`audit-${n++}`);
    await appendAudit(db, entry(1));
    const csv = auditCsv(await db.getAll('audit'));
    expect(csv.split('\r\n')[0]).toBe('id,time,origin,account,kind,summary,digest,result,detail,hash');
    expect(csv).toContain('"order 1, ""quoted"""');
  });
});
