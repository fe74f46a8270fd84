/**
 * The signing audit log (issue #11 §4): one entry per signature and per security action (time, origin
 * or "extension", what in plain words, account, binding digest, gateway answer). Entries form a hash
 * chain — each stores the previous entry's hash and its own, keccak256 of its canonical JSON with that
 * previous hash — so a removed, reordered or edited entry is detected on read (`verifyAudit`).
 * Retention drops entries older than the setting; the hash of the last dropped entry becomes the
 * chain's anchor, so what remains still verifies. Never holds a key, secret or signature.
 */
import { keccak256, stringToHex, type Hex } from 'viem';
import type { AuditEntry, VaultDb } from '../vault/db';

/** Key (in `settings`) of the hash the chain starts from after retention dropped older entries. */
export const AUDIT_ANCHOR_KEY = 'auditAnchor';
const ZERO: Hex = `0x${'0'.repeat(64)}`;

/** The hash of an entry given the previous hash: keccak256 of its fields in a fixed order. */
export function entryHash(prev: string, e: Omit<AuditEntry, 'id' | 'prev' | 'hash'>): Hex {
  const canonical = [prev, e.at, e.origin, e.account, e.kind, e.summary, e.digest ?? '', e.result, e.detail ?? ''];
  return keccak256(stringToHex(JSON.stringify(canonical)));
}

/** Appends an entry to the chain (atomically with reading the last one). `at` Unix ms. */
export async function appendAudit(db: VaultDb, entry: Omit<AuditEntry, 'id' | 'prev' | 'hash'>): Promise<void> {
  const anchor = ((await db.get('settings', AUDIT_ANCHOR_KEY)) as string | undefined) ?? ZERO;
  const tx = db.transaction('audit', 'readwrite');
  const last = await tx.store.openCursor(null, 'prev');
  const prev = last?.value.hash ?? anchor;
  await tx.store.add({ ...entry, prev, hash: entryHash(prev, entry) });
  await tx.done;
}

/** Result of checking the chain: `brokenAt` is the id of the first entry that does not verify. */
export type AuditVerification = { ok: boolean; count: number; brokenAt?: number; reason?: string };

/** Walks the whole log in order and recomputes every link. */
export async function verifyAudit(db: VaultDb): Promise<AuditVerification> {
  const all = await db.getAll('audit');
  let prev = ((await db.get('settings', AUDIT_ANCHOR_KEY)) as string | undefined) ?? ZERO;
  for (const e of all) {
    if (e.prev !== prev) return { ok: false, count: all.length, brokenAt: e.id!, reason: 'an entry before it was removed or changed' };
    if (e.hash !== entryHash(prev, e)) return { ok: false, count: all.length, brokenAt: e.id!, reason: 'this entry was changed' };
    prev = e.hash;
  }
  return { ok: true, count: all.length };
}

/** Drops entries older than `days` (0: keep everything); the last dropped hash becomes the anchor. */
export async function pruneAudit(db: VaultDb, days: number, now = Date.now()): Promise<number> {
  if (!days) return 0;
  const cutoff = now - days * 86_400_000;
  const old = (await db.getAll('audit')).filter((e) => e.at < cutoff);
  if (!old.length) return 0;
  await db.put('settings', old[old.length - 1]!.hash, AUDIT_ANCHOR_KEY);
  const tx = db.transaction('audit', 'readwrite');
  for (const e of old) await tx.store.delete(e.id!);
  await tx.done;
  return old.length;
}

/** CSV of entries (RFC 4180 quoting), oldest first. */
export function auditCsv(entries: readonly AuditEntry[]): string {
  const q = (v: unknown) => `"${String(v ?? '').replace(/"/g, '""')}"`;
  const head = ['id', 'time', 'origin', 'account', 'kind', 'summary', 'digest', 'result', 'detail', 'hash'];
  return [head.join(','), ...entries.map((e) => [e.id, new Date(e.at).toISOString(), e.origin, e.account, e.kind, e.summary, e.digest, e.result, e.detail, e.hash].map(q).join(','))].join('\r\n');
}
