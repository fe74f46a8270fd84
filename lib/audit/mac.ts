/**
 * The audit chain's MACs (HMAC-SHA256, WebCrypto, under the vault's audit key): what an entry's, the
 * checkpoint's and the verified position's MAC each cover, in a fixed, domain-separated order; signing
 * and checking them. MACs are lowercase hex (64 characters). The chain itself: `./log.ts`.
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import { auditGroupOf, type AuditCheckpointRecord, type AuditEntry } from '../vault/db';

const te = new TextEncoder();
const toHex = (buf: ArrayBuffer): string => bytesToHex(new Uint8Array(buf));
function fromHex(h: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

async function sign(key: CryptoKey, parts: readonly unknown[]): Promise<string> {
  return toHex(await crypto.subtle.sign('HMAC', key, te.encode(JSON.stringify(parts))));
}
async function macOk(key: CryptoKey, parts: readonly unknown[], mac: unknown): Promise<boolean> {
  if (typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac)) return false;
  return crypto.subtle.verify('HMAC', key, fromHex(mac), te.encode(JSON.stringify(parts)));
}

/** What an entry's MAC covers, in a fixed order (domain-separated from the checkpoint's). */
export function entryParts(e: AuditEntry, id: number, prev: string): unknown[] {
  return [
    'countersign/audit/entry/v1',
    id,
    prev,
    e.at,
    e.origin,
    e.account,
    e.kind,
    e.group ?? null,
    e.summary,
    e.digest ?? null,
    e.result,
    e.detail ?? null,
    e.auth ?? null,
  ];
}
/**
 * What the checkpoint's MAC covers, in a fixed order (exported for tests that play a store writer who knows the
 * format).
 */
export function checkpointParts(c: Omit<AuditCheckpointRecord, 'mac'>): unknown[] {
  return [
    'countersign/audit/checkpoint/v1',
    c.v,
    c.count,
    c.firstId,
    c.chainFrom,
    c.anchor,
    c.lastId,
    c.head,
    c.startedAt,
    c.seals.map((s) => [s.at, s.fromId, s.reason, s.count]),
  ];
}
/** What the verified-position record's MAC covers. */
export function verifiedParts(upTo: number, head: string, broken: { id: number; reason: string } | null): unknown[] {
  return ['countersign/audit/verified/v1', upTo, head, broken ? [broken.id, broken.reason] : null];
}

/** MAC of an entry stored at `id` after `prev` (hex). */
export function macEntry(key: CryptoKey, e: AuditEntry, id: number, prev: string): Promise<string> {
  return sign(key, entryParts(e, id, prev));
}
/** Whether a stored entry carries a valid MAC for its own id and `prev`, and a consistent group. */
export async function entryAuthentic(key: CryptoKey, e: AuditEntry): Promise<boolean> {
  if (
    typeof e.id !== 'number' ||
    typeof e.prev !== 'string' ||
    typeof e.kind !== 'string' ||
    e.group !== auditGroupOf(e.kind)
  )
    return false;
  return macOk(key, entryParts(e, e.id, e.prev), e.mac);
}
/** Signs a record's parts (checkpoint, verified position). */
export const signParts = sign;
/** Checks a record's MAC. */
export const partsOk = macOk;

/** The checkpoint `c` with its MAC under `key` (what `meta` › `auditCheckpoint` stores). */
export async function sealCheckpoint(
  key: CryptoKey,
  c: Omit<AuditCheckpointRecord, 'mac'>,
): Promise<AuditCheckpointRecord> {
  return { ...c, mac: await sign(key, checkpointParts(c)) };
}
