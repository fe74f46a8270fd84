/**
 * The vault's sealed records: every secret record (`secrets` store) is sealed (AES-GCM) by the master key,
 * bound to its id and account by its AAD, and vouched for by the sealed record index (`meta/index`,
 * `id → sha256(iv ‖ ct)`): a record changed, rolled back or injected no longer matches it
 * (`TamperedRecordError`). Records outside the index ("loose": grant use buckets, `grantuse:…`) are bound
 * by their AAD only; the grant heads that count them are indexed (or, in a trading session, carried in
 * the session bundle). The base of `Vault` (`lib/vault/session.ts`, `lib/vault/vault.ts`).
 *
 * ## One writer at a time
 * Every mutation and every read of a sealed record runs alone, through one promise chain (`exclusive`):
 * the index is read and updated in the same critical section as the record it covers, so concurrent
 * calls all succeed and never leave a record that the index does not vouch for.
 *
 * `SealedRecords` is what the grant use records (`lib/grants/use-records.ts`) use: sealed grant heads and
 * loose use buckets, without the keys. The record kinds and their clear views: `./record-kinds.ts`; the
 * session store: `./session-store.ts`; the trading session's bundle: `./trading-session.ts`.
 */
import type { Hex, LocalAccount } from 'viem';
import { SignerCache } from './signers';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { open, recordAad, seal, type Sealed } from './crypto';
import { readMeta, type SecretRecord, type SessionRecord, type VaultDb } from './db';
import { KeyNotFoundError, TamperedRecordError, VaultLockedError, VaultReadBackError } from './errors';
import { vaultWrite, type VaultCopyStore } from './copy';
import type { SealedHead } from './record-kinds';
import { memorySessionStore, type SessionStore } from './session-store';
import { SESSION_AAD, type SessionBundle } from './trading-session';

/** Base64 of bytes. */
export const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
/** Bytes of base64. */
export const unb64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
/** JSON → bytes (what a record seals). */
export const enc = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
/** Bytes → JSON (what a record opens to). */
export const dec = <T>(b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as T;

/** AAD of the sealed index (`meta/index`). */
const INDEX_AAD = 'countersign/v1/meta/index';
/** Id prefix of a grant head record: `grant:<grant id>`. */
export const GRANT_PREFIX = 'grant:';
/** Id prefix of a grant's use buckets: `grantuse:<grant id>:<minute, 10 digits>` (loose records). */
export const USE_PREFIX = 'grantuse:';
/** Whether record `id` is key material (kept in the second copy): not a grant head nor a grant's use bucket. */
const isKeyMaterial = (id: string) => !id.startsWith(GRANT_PREFIX) && !id.startsWith(USE_PREFIX);
/** The ids from `prefix` up (IndexedDB key range over one kind of record). */
export const idsFrom = (prefix: string) => IDBKeyRange.bound(prefix, `${prefix}\uffff`);

/**
 * The sealed-record storage the grant use records use (`lib/grants/use-records.ts`). Heads are indexed
 * records while unlocked and live in the session bundle in a trading session; loose records are sealed by
 * `looseKey()` (the master key, or the session key). Call every method but `exclusive`, `onReset` and
 * `looseKey` inside `exclusive`. Errors: `VaultLockedError` (nothing open), `KeyNotFoundError` (no such
 * head), `TamperedRecordError` (a head the index does not vouch for), `DecryptError` (altered or moved).
 */
export interface SealedRecords {
  /** Runs `fn` alone, after every earlier call queued on the vault's writer lock settled. Never nest. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Calls `cb` whenever every grant record is replaced or dropped at once (create, lock, restore): forget what is held.
   */
  onReset(cb: () => void): void;
  /** The key that seals loose records now: the master key, or the session key in a trading session. */
  looseKey(): CryptoKey;
  /** Head `grant:<grantId>`, opened. */
  readHead<T extends SealedHead>(grantId: string): Promise<T>;
  /** Every head, opened. */
  listHeads<T extends SealedHead>(): Promise<T[]>;
  /**
   * Writes `head` (vouched for by the index, or the bundle) with loose records `put` and deletes loose ids `del`, in
   * one transaction.
   */
  writeHead(head: SealedHead, put: SecretRecord[], del: string[]): Promise<void>;
  /** Deletes head `grantId` (when there) with loose ids `del`. */
  deleteHead(grantId: string, del: string[]): Promise<void>;
  /** Deletes every head and loose ids `del`; never blocked by a damaged index. Returns how many heads there were. */
  deleteAllHeads(del: string[]): Promise<number>;
  /** Seals `content` as loose record `id` (kind `grantuse`, empty account) with `key`. */
  sealLoose(key: CryptoKey, id: string, content: unknown): Promise<SecretRecord>;
  /** Opens loose record `id` with `key` (undefined when absent). Throws `DecryptError` when altered or moved. */
  openLoose<T>(key: CryptoKey, id: string): Promise<T | undefined>;
  /** Writes loose records `recs` in one transaction. */
  putLoose(recs: SecretRecord[]): Promise<void>;
  /** Ids of the records whose id starts with `prefix`. */
  idsFrom(prefix: string): Promise<string[]>;
}

/** Digest of a sealed record: sha256(iv ‖ ct), hex. */
export function digestOf(s: Sealed): string {
  const buf = new Uint8Array(s.iv.length + s.ct.length);
  buf.set(s.iv);
  buf.set(s.ct, s.iv.length);
  return bytesToHex(sha256(buf));
}

/**
 * `db` the vault database; `session` where the session keys live (`storage.session`; memory in tests);
 * `now` Unix ms clock; `copy` where the vault's second copy lives (`./copy.ts`; none: no copy is kept).
 */
export type RecordsOptions = { db: VaultDb; session?: SessionStore; now?: () => number; copy?: VaultCopyStore };

/** The sealed records of a vault (see the module docstring); `Vault` builds on it. */
export class VaultRecords implements SealedRecords {
  /** The sealed index as last read or written under the live master key. */
  protected index: Map<string, string> | undefined;
  /** The master key ('unlocked'). */
  protected mk: CryptoKey | undefined;
  /** The trading session's key and its opened bundle ('session'). */
  protected sk: CryptoKey | undefined;
  protected bundle: SessionBundle | undefined;
  /** Digest of the sealed session bundle last written (also in the session store). */
  protected bundleDigest: string | undefined;
  /** Signing accounts of keys opened since the last lock (`./signers.ts`). */
  protected signers = new SignerCache();
  /** The writer lock: every mutation and sealed read runs after the previous one settled. */
  private chain: Promise<unknown> = Promise.resolve();
  /**
   * Bumped before and after every write or delete of a record other than a grant's (what `Vault` holds in memory
   * follows it).
   */
  protected keyWrites = 0;
  private readonly resets: (() => void)[] = [];
  protected readonly db: VaultDb;
  protected readonly session: SessionStore;
  protected readonly now: () => number;

  constructor(o: RecordsOptions) {
    this.db = o.db;
    this.session = o.session ?? memorySessionStore();
    this.now = o.now ?? Date.now;
  }

  /**
   * Key-material write hooks `VaultCopied` fills (generation, read-back, second copy; `./copied.ts`); absent, no copy
   * is kept.
   */
  protected afterKeyWrite?(readBack: () => Promise<void>): Promise<void>;
  protected nextGeneration?(): Promise<number | undefined>;
  protected bumpGeneration?(): Promise<void>;

  /** The signing account of `privateKey` (cached until lock). */
  protected signerOf(privateKey: Hex): LocalAccount {
    return this.signers.accountOf(privateKey);
  }

  /** Runs `fn` alone: after every earlier call queued here settled (one writer at a time). Never nest. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** See `SealedRecords.onReset`. */
  onReset(cb: () => void): void {
    this.resets.push(cb);
  }

  /** Tells `onReset` listeners that every grant record was replaced or dropped. */
  protected reset(): void {
    for (const cb of this.resets) cb();
  }

  /** The master key; `VaultLockedError` (saying a password is needed in a trading session) otherwise. */
  protected key(): CryptoKey {
    if (!this.mk) throw new VaultLockedError({ inSession: !!this.sk });
    return this.mk;
  }

  /** See `SealedRecords.looseKey`. */
  looseKey(): CryptoKey {
    const key = this.mk ?? this.sk;
    if (!key) throw new VaultLockedError();
    return key;
  }

  /**
   * The index sealed by `key` (cached while it is the live master key), or, for a vault that has none
   * yet, built from the records on first use. Call inside `exclusive`.
   */
  protected async loadIndex(key: CryptoKey): Promise<Map<string, string>> {
    if (this.index && key === this.mk) return this.index;
    const rec = await readMeta(this.db, 'index');
    let index: Map<string, string>;
    if (rec) {
      index = new Map(Object.entries(dec<Record<string, string>>(await open(key, rec.sealed, INDEX_AAD))));
    } else {
      const all = await this.db.getAll('secrets');
      index = new Map(all.map((r) => [r.id, digestOf(r.sealed)]));
      await this.db.put('meta', { id: 'index', sealed: await seal(key, enc(Object.fromEntries(index)), INDEX_AAD) });
    }
    if (key === this.mk) this.index = index;
    return index;
  }

  /**
   * Writes `put` records and deletes `del` ids together with the updated index (sealed by `key`) in one
   * transaction; `putMeta` / `delMeta` join it; `loose` / `looseDel` (grant use buckets, outside the
   * index) join it too, written first; `dropIndexPrefix` also drops index entries of records already gone.
   * Call inside `exclusive`, so the index read here is still current when it is written.
   */
  protected async commit(
    key: CryptoKey,
    put: SecretRecord[],
    del: string[],
    o: {
      putMeta?: SessionRecord[];
      delMeta?: string[];
      dropIndexPrefix?: string;
      loose?: SecretRecord[];
      looseDel?: string[];
    } = {},
  ): Promise<void> {
    const keys = [...put.map((r) => r.id), ...del].some((id) => !id.startsWith(GRANT_PREFIX));
    if (keys) this.keyWrites++; // before and after the write: see `Vault.listOwners` for why both
    const next = new Map(await this.loadIndex(key));
    if (o.dropIndexPrefix) for (const id of [...next.keys()]) if (id.startsWith(o.dropIndexPrefix)) next.delete(id);
    for (const id of del) next.delete(id);
    for (const r of put) next.set(r.id, digestOf(r.sealed));
    const sealedIndex = await seal(key, enc(Object.fromEntries(next)), INDEX_AAD);
    // Placed at once, run in order (one failure aborts all): loose records (grant use buckets) first — a use
    // without its head counts, a head without its use is a gap. Key material carries the next generation.
    const material = [...put.map((r) => r.id), ...del].some(isKeyMaterial);
    const generation = material ? await this.nextGeneration?.() : undefined;
    await vaultWrite(() => {
      const tx = this.db.transaction(['secrets', 'meta'], 'readwrite');
      const secrets = tx.objectStore('secrets');
      const metaStore = tx.objectStore('meta');
      return Promise.all([
        ...(o.loose ?? []).map((r) => secrets.put(r)),
        ...(o.looseDel ?? []).map((id) => secrets.delete(id)),
        ...del.map((id) => secrets.delete(id)),
        ...put.map((r) => secrets.put(r)),
        ...(o.putMeta ?? []).map((m) => metaStore.put(m)),
        ...(o.delMeta ?? []).map((id) => metaStore.delete(id)),
        metaStore.put({ id: 'index', sealed: sealedIndex }),
        ...(generation === undefined ? [] : [metaStore.put({ id: 'generation', n: generation })]),
        tx.done,
      ]);
    });
    if (keys) this.keyWrites++;
    if (key === this.mk) this.index = next;
    if (material) {
      // What was put reads back and opens with its key, what was deleted is gone; then the second copy.
      await this.afterKeyWrite?.(async () => {
        for (const r of put) {
          const back = await this.db.get('secrets', r.id);
          if (!back || digestOf(back.sealed) !== digestOf(r.sealed)) throw new VaultReadBackError();
          await open(key, back.sealed, recordAad('secrets', back.id, back.account)).catch(() => {
            throw new VaultReadBackError();
          });
        }
        for (const id of del) if ((await this.db.getKey('secrets', id)) !== undefined) throw new VaultReadBackError();
      });
    }
  }

  /** Deletes records: with the index while unlocked; the records alone while locked (lock revokes grants). */
  protected async remove(ids: string[]): Promise<void> {
    this.keyWrites++;
    if (this.mk) await this.commit(this.mk, [], ids);
    else {
      // Deleted while locked: the generation, the records, then the copy (a deleted key never comes back from it).
      const material = ids.some(isKeyMaterial);
      if (material) await this.bumpGeneration?.();
      await vaultWrite(async () => {
        const tx = this.db.transaction('secrets', 'readwrite');
        await Promise.all([...ids.map((id) => tx.store.delete(id)), tx.done]);
      });
      if (material) {
        await this.afterKeyWrite?.(async () => {
          for (const id of ids) if ((await this.db.getKey('secrets', id)) !== undefined) throw new VaultReadBackError();
        });
      }
    }
    this.keyWrites++;
  }

  /** A record of `kind` sealed by `key` (AAD: store, `id`, `account` lower-case). */
  protected async sealRecord(
    key: CryptoKey,
    kind: SecretRecord['kind'],
    id: string,
    account: string,
    meta: SecretRecord['meta'],
    secret: unknown,
  ): Promise<SecretRecord> {
    return {
      id,
      kind,
      account: account.toLowerCase(),
      meta,
      sealed: await seal(key, enc(secret), recordAad('secrets', id, account)),
      createdAt: this.now(),
    };
  }

  /** Seals and writes one indexed record (requires 'unlocked'). Call inside `exclusive`. */
  protected async put(
    kind: SecretRecord['kind'],
    id: string,
    account: string,
    meta: SecretRecord['meta'],
    secret: unknown,
  ) {
    const key = this.key();
    await this.commit(key, [await this.sealRecord(key, kind, id, account, meta, secret)], []);
  }

  /**
   * Reads and opens a record (call inside `exclusive`). Throws `VaultLockedError`, `KeyNotFoundError`,
   * `TamperedRecordError` (not the record the index sealed: changed, rolled back or injected) or
   * `DecryptError` (corrupted, swapped or moved).
   */
  protected async read<T>(id: string): Promise<{ rec: SecretRecord; secret: T }> {
    const key = this.key();
    const rec = await this.db.get('secrets', id);
    if (!rec) throw new KeyNotFoundError('key');
    const index = await this.loadIndex(key);
    if (index.get(id) !== digestOf(rec.sealed)) throw new TamperedRecordError();
    const secret = dec<T>(await open(key, rec.sealed, recordAad('secrets', rec.id, rec.account)));
    return { rec, secret };
  }

  /**
   * Re-seals the session bundle after a change and writes it (call inside `exclusive`, in 'session');
   * `loose` records (grant use buckets) are put and deleted in the same transaction, before the bundle.
   */
  protected async saveBundle(
    next: SessionBundle,
    loose: { put: SecretRecord[]; del: string[] } = { put: [], del: [] },
  ): Promise<void> {
    if (!this.sk) throw new VaultLockedError();
    const sealed = await seal(this.sk, enc(next), SESSION_AAD);
    const digest = digestOf(sealed);
    const s = await this.session.get();
    // The session store first: a crash in between leaves a digest no bundle matches (locked, the safe side).
    if (s && 'sk' in s) await this.session.set({ ...s, bundle: digest });
    const tx = this.db.transaction(['secrets', 'meta'], 'readwrite');
    for (const r of loose.put) await tx.objectStore('secrets').put(r);
    for (const id of loose.del) await tx.objectStore('secrets').delete(id);
    await tx.objectStore('meta').put({ id: 'session', sealed });
    await tx.done;
    this.bundle = next;
    this.bundleDigest = digest;
  }

  // ------------------------------------------------------------------------------------------
  // Grant heads and loose records (`SealedRecords`)

  /** See `SealedRecords.readHead`. */
  async readHead<T extends SealedHead>(grantId: string): Promise<T> {
    if (this.bundle) {
      const found = this.bundle.grants.find((g) => g.grant.id === grantId);
      if (!found) throw new KeyNotFoundError('grant');
      return found as T;
    }
    return (await this.read<T>(`${GRANT_PREFIX}${grantId}`)).secret;
  }

  /** See `SealedRecords.listHeads`. */
  async listHeads<T extends SealedHead>(): Promise<T[]> {
    if (this.bundle) return [...this.bundle.grants] as T[];
    const heads: T[] = [];
    for (const id of await this.db.getAllKeys('secrets', idsFrom(GRANT_PREFIX)))
      heads.push((await this.read<T>(String(id))).secret);
    return heads;
  }

  /** See `SealedRecords.writeHead`. */
  async writeHead(head: SealedHead, put: SecretRecord[], del: string[]): Promise<void> {
    const b = this.bundle;
    if (b) {
      await this.saveBundle(
        { ...b, grants: [...b.grants.filter((g) => g.grant.id !== head.grant.id), structuredClone(head)] },
        { put, del },
      );
      return;
    }
    await this.commit(
      this.key(),
      [await this.sealRecord(this.key(), 'grant', `${GRANT_PREFIX}${head.grant.id}`, head.grant.account, {}, head)],
      [],
      { loose: put, looseDel: del },
    );
  }

  /** See `SealedRecords.deleteHead`. */
  async deleteHead(grantId: string, del: string[]): Promise<void> {
    const b = this.bundle;
    if (b) {
      if (b.grants.some((g) => g.grant.id === grantId) || del.length)
        await this.saveBundle({ ...b, grants: b.grants.filter((g) => g.grant.id !== grantId) }, { put: [], del });
      return;
    }
    await this.remove([`${GRANT_PREFIX}${grantId}`, ...del]);
  }

  /** See `SealedRecords.deleteAllHeads`. */
  async deleteAllHeads(del: string[]): Promise<number> {
    const ids = [...(await this.idsFrom(GRANT_PREFIX)), ...del];
    const b = this.bundle;
    if (b) {
      const n = b.grants.length;
      if (n || ids.length) await this.saveBundle({ ...b, grants: [] }, { put: [], del: ids });
      return n;
    }
    const n = ids.filter((id) => id.startsWith(GRANT_PREFIX)).length;
    if (this.mk) {
      try {
        await this.commit(this.mk, [], ids, { dropIndexPrefix: GRANT_PREFIX });
        return n;
      } catch {
        /* an unreadable index must not keep a grant alive: delete the records alone */
      }
    }
    for (const id of ids) await this.db.delete('secrets', id);
    return n;
  }

  /** See `SealedRecords.sealLoose`. */
  sealLoose(key: CryptoKey, id: string, content: unknown): Promise<SecretRecord> {
    return this.sealRecord(key, 'grantuse', id, '', {}, content);
  }

  /** See `SealedRecords.openLoose`. */
  async openLoose<T>(key: CryptoKey, id: string): Promise<T | undefined> {
    const rec = await this.db.get('secrets', id);
    return rec ? dec<T>(await open(key, rec.sealed, recordAad('secrets', id, ''))) : undefined;
  }

  /** See `SealedRecords.putLoose`. */
  async putLoose(recs: SecretRecord[]): Promise<void> {
    const tx = this.db.transaction('secrets', 'readwrite');
    await Promise.all([...recs.map((r) => tx.store.put(r)), tx.done]);
  }

  /** See `SealedRecords.idsFrom`. */
  async idsFrom(prefix: string): Promise<string[]> {
    return (await this.db.getAllKeys('secrets', idsFrom(prefix))).map(String);
  }

  /**
   * Every loose record opened with `from` and sealed again with `to` (entering and leaving a trading session). One that
   * does not open is dropped (its grant is then refused as incomplete).
   */
  protected async resealLoose(from: CryptoKey, to: CryptoKey): Promise<SecretRecord[]> {
    const out: SecretRecord[] = [];
    for (const id of await this.idsFrom(USE_PREFIX)) {
      const b = await this.openLoose<unknown>(from, id).catch(() => undefined);
      if (b) out.push(await this.sealLoose(to, id, b));
    }
    return out;
  }

  /** Ids of every grant head and loose record in the `secrets` store. */
  protected async grantRecordIds(): Promise<string[]> {
    const [heads, uses] = await Promise.all([this.idsFrom(GRANT_PREFIX), this.idsFrom(USE_PREFIX)]);
    return [...heads, ...uses];
  }
}
