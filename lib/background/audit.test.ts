/**
 * The audit log through the background's `audit.*` procedures, black-box: entries come from real
 * procedures (account switches), a store writer edits the extension's IndexedDB (entries edited or
 * re-attributed with the chain rebuilt, the oldest dropped with the anchor moved, the newest
 * truncated), and the popup's procedures must say so.
 */
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { keccak256, stringToHex, type Hex } from 'viem';
import { startBackground } from './index';
import type { AuditEntry, VaultDb } from '../vault/db';
import { BOUNDS, browser, KDF } from '../../test/kits/background';

const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
type Reply = { ok: boolean; result?: unknown; error?: { name: string } };
type Bg = ReturnType<typeof startBackground>;
const call = async (bg: Bg, type: string, payload: unknown = {}) =>
  (await bg.handle({ type, payload }, popup())) as Reply;
type Check = {
  ok: boolean;
  state: string;
  count: number;
  checked: number;
  brokenAt?: number;
  reason?: string;
  progress?: { done: number; total: number };
};
const verify = async (bg: Bg, payload: object = {}) => (await call(bg, 'audit.verify', payload)).result as Check;
type View = { id: number; origin: string; kind: string; summary: string; status: string };
let n = 0;

beforeEach(() => {
  fakeBrowser.reset();
});

/** A background with a vault and `switches` audit entries made by the person switching accounts. */
async function withLog(switches: number): Promise<Bg> {
  const bg = startBackground({ browser, dbName: `bg-audit-${n++}`, kdf: KDF, bounds: BOUNDS });
  await call(bg, 'vault.create', { password: 'a good password' });
  const a = ((await call(bg, 'vault.generateOwnerKey', {})).result as { address: string }).address;
  const b = ((await call(bg, 'vault.generateOwnerKey', {})).result as { address: string }).address;
  const active = ((await call(bg, 'vault.status')).result as { activeAccount: string }).activeAccount;
  const other = active === a ? b : a;
  for (let i = 0; i < switches; i++)
    expect(
      ((await call(bg, 'account.select', { address: i % 2 ? active : other })).result as { changed: boolean }).changed,
    ).toBe(true);
  return bg;
}

// A store writer who knows the format but not the key: rebuilds the unkeyed links (as the v1 log
// checked them) and every other link it can compute.
const ZERO: Hex = `0x${'0'.repeat(64)}`;
const v1Hash = (prev: string, e: AuditEntry) =>
  keccak256(
    stringToHex(
      JSON.stringify([prev, e.at, e.origin, e.account, e.kind, e.summary, e.digest ?? '', e.result, e.detail ?? '']),
    ),
  );
async function rechain(db: VaultDb): Promise<void> {
  let prev = ((await db.get('settings', 'auditAnchor')) as string | undefined) ?? ZERO;
  for (const e of await db.getAll('audit')) {
    e.prev = prev;
    e.hash = v1Hash(prev, e);
    e.mac = keccak256(stringToHex(JSON.stringify(['rebuilt', e.hash]))).slice(2);
    prev = e.hash;
    await db.put('audit', e);
  }
  const cp = (await db.get('meta', 'auditCheckpoint')) as Record<string, unknown> | undefined;
  if (cp) await db.put('meta', { ...cp, head: (await db.getAll('audit')).at(-1)?.mac ?? cp.head } as never);
}

describe('background: the audit log through audit.* procedures', () => {
  it('checks an untouched log, then only what was added since, and pages newest first with a cursor', async () => {
    const bg = await withLog(7);
    expect(await verify(bg)).toMatchObject({ ok: true, state: 'ok', count: 7, checked: 7 });
    const switchAccount = async () => {
      const s = (await call(bg, 'vault.status')).result as { activeAccount: string; accounts: { address: string }[] };
      expect(
        (
          (
            await call(bg, 'account.select', {
              address: s.accounts.find((x) => x.address !== s.activeAccount)!.address,
            })
          ).result as { changed: boolean }
        ).changed,
      ).toBe(true);
    };
    await switchAccount();
    await switchAccount();
    expect(await verify(bg)).toMatchObject({ ok: true, count: 9, checked: 2 });
    const first = (await call(bg, 'audit.list', { limit: 4 })).result as View[];
    const second = (await call(bg, 'audit.list', { limit: 4, before: first.at(-1)!.id })).result as View[];
    const third = (await call(bg, 'audit.list', { limit: 4, before: second.at(-1)!.id })).result as View[];
    expect([...first, ...second, ...third].map((e) => e.id)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(first.every((e) => e.status === 'ok' && e.kind === 'account.switch')).toBe(true);
    expect((await call(bg, 'audit.origins')).result).toEqual(['extension']);
  });

  it('exports page by page, oldest first, and the pages join into the whole log', async () => {
    const bg = await withLog(5);
    const p1 = (await call(bg, 'audit.export', { format: 'csv', limit: 3 })).result as {
      text: string;
      next: number | null;
      verification: Check;
    };
    const p2 = (await call(bg, 'audit.export', { format: 'csv', limit: 3, after: p1.next! })).result as {
      text: string;
      next: number | null;
    };
    expect(p1.verification.ok).toBe(true);
    expect(p2.next).toBeNull();
    const lines = [p1.text, p2.text].join('\r\n').split('\r\n');
    expect(lines[0]).toBe('id,time,origin,account,kind,summary,digest,result,detail,status,mac');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['"1"', '"2"', '"3"', '"4"', '"5"']);
  });

  it('runs a full check in the background and reports its progress until done', async () => {
    const bg = await withLog(4);
    const started = await verify(bg, { full: true });
    expect(started).toMatchObject({ state: 'checking', progress: { done: 0, total: 4 } });
    let r = started;
    for (let i = 0; i < 100 && r.state === 'checking'; i++) r = await verify(bg);
    expect(r).toMatchObject({ ok: true, state: 'ok', count: 4 });
  });

  // Each of these leaves a chain the unkeyed v1 hash check reads as "ok": the keyed check reports it.
  const attacks: [string, (db: VaultDb) => Promise<void>][] = [
    [
      'an entry edited and the chain rebuilt',
      async (db) => {
        const e = (await db.getAll('audit'))[2]!;
        await db.put('audit', { ...e, summary: 'Switched nothing' });
        await rechain(db);
      },
    ],
    [
      'an entry re-attributed to another origin and the chain rebuilt',
      async (db) => {
        const e = (await db.getAll('audit'))[3]!;
        await db.put('audit', { ...e, origin: 'https://dapp.example', summary: `${e.summary} (standing permission)` });
        await rechain(db);
      },
    ],
    [
      'the oldest entries dropped and the anchor moved',
      async (db) => {
        const all = await db.getAll('audit');
        await db.delete('audit', IDBKeyRange.bound(all[0]!.id!, all[1]!.id!));
        await db.put('settings', all[1]!.hash ?? all[1]!.mac, 'auditAnchor');
        const cp = (await db.get('meta', 'auditCheckpoint')) as Record<string, unknown> | undefined;
        if (cp)
          await db.put('meta', { ...cp, anchor: all[1]!.mac, firstId: all[2]!.id, count: all.length - 2 } as never);
      },
    ],
    [
      'the newest entries truncated',
      async (db) => {
        const all = await db.getAll('audit');
        await db.delete('audit', IDBKeyRange.lowerBound(all[all.length - 2]!.id!));
      },
    ],
  ];
  for (const [what, attack] of attacks) {
    it(`reports ${what}`, async () => {
      const bg = await withLog(6);
      expect((await verify(bg)).ok).toBe(true);
      await attack(bg.db());
      const r = await verify(bg);
      expect(r.ok).toBe(false);
      expect(r.state).toBe('broken');
      const export1 = (await call(bg, 'audit.export', { format: 'json' })).result as { verification: Check };
      expect(export1.verification.ok).toBe(false);
    });
  }
});
