/**
 * The vault: create, unlock, lock, change password, and the encrypted key records (owner keys, proxy
 * keys with their secret, CLOB API credentials), backup and restore. Background only.
 *
 * Lock state: after unlock the master key lives in this object and, exported, in the session store
 * (`browser.storage.session`, trusted contexts only) together with the vault's salt, so a service-worker
 * restart does not ask again; `restoreSession` re-imports it only when the salt still matches the vault
 * and the verifier opens. `lock()` clears both.
 *
 * Wrong passwords back off 1 s, 2 s, 4 s … capped at 5 min; the counter and the next allowed time are in
 * IndexedDB, so a worker restart does not reset them.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import {
  checkKdfParams,
  DecryptError,
  DEFAULT_KDF,
  DEFAULT_KDF_BOUNDS,
  deriveKek,
  importMasterKey,
  kdfWeaker,
  MASTER_KEY_AAD,
  open,
  randomBytes,
  recordAad,
  seal,
  type KdfBounds,
  type KdfParams,
  type Sealed,
} from './crypto';
import type { BackoffRecord, RecordIndex, SecretRecord, VaultDb, VaultMeta } from './db';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Grant, GrantUse } from '../grants/evaluate';
import {
  BackupInvalidError,
  KeyNotFoundError,
  ProxyKeyMismatchError,
  UnlockBackoffError,
  VaultExistsError,
  VaultLockedError,
  VaultNotInitializedError,
  WeakPasswordError,
  WrongPasswordError,
  TamperedRecordError,
} from './errors';

/** What survives a worker restart while unlocked (`storage.session`). Base64 strings. */
export type SessionState = { mk: string; salt: string };

/** The session store (in the extension: `browser.storage.session`, access level trusted contexts only). */
export type SessionStore = {
  get: () => Promise<SessionState | undefined>;
  set: (s: SessionState) => Promise<void>;
  clear: () => Promise<void>;
};

/** A session store in memory (tests, and Firefox builds without `storage.session`). */
export function memorySessionStore(): SessionStore {
  let s: SessionState | undefined;
  return { get: async () => s, set: async (v) => void (s = v), clear: async () => void (s = undefined) };
}

const VERIFIER = new TextEncoder().encode('countersign-vault-verifier-v1');
const BACKOFF_CAP_MS = 5 * 60_000;
/** Shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 8;

const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const enc = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const dec = <T>(b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as T;

/** Non-secret view of an owner key. */
export type OwnerInfo = { address: Address; label: string; createdAt: number };
/** Non-secret view of a proxy key. `expiry` Unix ms. */
export type ProxyInfo = { id: string; account: Address; proxy: Address; expiry: number; label: string };
/** Non-secret view of CLOB credentials. */
export type ClobInfo = { id: string; account: Address; nonce: number; signatureType: 0 | 1 | 2; funder: Address | null };

export type VaultOptions = {
  db: VaultDb;
  session?: SessionStore;
  now?: () => number;
  kdf?: KdfParams;
  bounds?: KdfBounds;
};

/** Hooks for tests (simulating a crash between steps). */
export type ChangePasswordHooks = { beforeCommit?: () => void };

const INDEX_AAD = 'countersign/v1/meta/index';

export class Vault {
  private index: Map<string, string> | undefined;
  private mk: CryptoKey | undefined;
  private readonly db: VaultDb;
  private readonly session: SessionStore;
  private readonly now: () => number;
  readonly kdf: KdfParams;
  readonly bounds: KdfBounds;

  constructor(o: VaultOptions) {
    this.db = o.db;
    this.session = o.session ?? memorySessionStore();
    this.now = o.now ?? Date.now;
    this.kdf = o.kdf ?? DEFAULT_KDF;
    this.bounds = o.bounds ?? DEFAULT_KDF_BOUNDS;
  }

  private async meta(): Promise<VaultMeta | undefined> {
    return (await this.db.get('meta', 'vault')) as VaultMeta | undefined;
  }

  /** `{ initialized, unlocked, retryAfterMs }` — no secrets. */
  async status(): Promise<{ initialized: boolean; unlocked: boolean; retryAfterMs: number }> {
    const meta = await this.meta();
    const backoff = (await this.db.get('meta', 'backoff')) as BackoffRecord | undefined;
    return {
      initialized: !!meta,
      unlocked: !!this.mk,
      retryAfterMs: Math.max(0, (backoff?.nextAllowedAt ?? 0) - this.now()),
    };
  }

  get unlocked(): boolean {
    return !!this.mk;
  }

  /** Creates a new vault protected by `password`. Throws `VaultExistsError`, `WeakPasswordError`. Leaves it unlocked. */
  async create(password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    if (await this.meta()) throw new VaultExistsError();
    const mkRaw = randomBytes(32);
    const mk = await importMasterKey(mkRaw);
    const salt = randomBytes(16);
    const kek = await deriveKek(password, salt, this.kdf);
    const meta: VaultMeta = {
      id: 'vault',
      kdf: this.kdf,
      salt,
      wrapped: await seal(kek, mkRaw, MASTER_KEY_AAD),
      verifier: await seal(mk, VERIFIER, 'verifier'),
      createdAt: this.now(),
    };
    mkRaw.fill(0);
    const tx = this.db.transaction('meta', 'readwrite');
    if (await tx.store.get('vault')) {
      tx.abort();
      throw new VaultExistsError();
    }
    await tx.store.put(meta);
    await tx.done;
    await this.setUnlocked(mk, salt);
  }

  private async setUnlocked(mk: CryptoKey, salt: Uint8Array): Promise<void> {
    this.mk = mk;
    const raw = new Uint8Array(await crypto.subtle.exportKey('raw', mk));
    await this.session.set({ mk: b64(raw), salt: b64(salt) });
    raw.fill(0);
  }

  /** Unwraps the master key with `password` (no state change). Throws `DecryptError` on a wrong password. */
  private async unwrap(meta: VaultMeta, password: string): Promise<{ mk: CryptoKey; raw: Uint8Array<ArrayBuffer> }> {
    const kdf = checkKdfParams(meta.kdf, this.bounds);
    const kek = await deriveKek(password, meta.salt, kdf);
    const raw = await open(kek, meta.wrapped, MASTER_KEY_AAD);
    const mk = await importMasterKey(raw);
    await open(mk, meta.verifier, 'verifier');
    return { mk, raw };
  }

  /** `unwrap` for a re-authentication: a wrong password is a `WrongPasswordError` (no back-off counted). */
  private async reauthenticate(meta: VaultMeta, password: string): Promise<{ mk: CryptoKey; raw: Uint8Array<ArrayBuffer> }> {
    try {
      return await this.unwrap(meta, password);
    } catch (err) {
      if (err instanceof DecryptError) throw new WrongPasswordError(0);
      throw err;
    }
  }

  /**
   * Unlocks with `password`. Throws `VaultNotInitializedError`, `UnlockBackoffError` (too soon after a
   * failure — nothing is derived), `WrongPasswordError` (with the next delay), `KdfParamsError`. When the
   * vault's KDF cost is below the current default it is re-wrapped with the default.
   */
  async unlock(password: string): Promise<void> {
    const meta = await this.meta();
    if (!meta) throw new VaultNotInitializedError();
    const backoff = ((await this.db.get('meta', 'backoff')) as BackoffRecord | undefined) ?? { id: 'backoff', failures: 0, nextAllowedAt: 0 };
    const wait = backoff.nextAllowedAt - this.now();
    if (wait > 0) throw new UnlockBackoffError(wait);
    let unwrapped;
    try {
      unwrapped = await this.unwrap(meta, password);
    } catch (err) {
      if (!(err instanceof DecryptError)) throw err;
      const failures = backoff.failures + 1;
      const delay = Math.min(1000 * 2 ** (failures - 1), BACKOFF_CAP_MS);
      await this.db.put('meta', { id: 'backoff', failures, nextAllowedAt: this.now() + delay });
      throw new WrongPasswordError(delay);
    }
    if (backoff.failures > 0) await this.db.put('meta', { id: 'backoff', failures: 0, nextAllowedAt: 0 });
    if (kdfWeaker(meta.kdf, this.kdf)) await this.rewrap(meta, unwrapped.raw, password, this.kdf);
    unwrapped.raw.fill(0);
    await this.setUnlocked(unwrapped.mk, meta.salt);
  }

  private async rewrap(meta: VaultMeta, mkRaw: Uint8Array<ArrayBuffer>, password: string, kdf: KdfParams, hooks: ChangePasswordHooks = {}) {
    const salt = randomBytes(16);
    const kek = await deriveKek(password, salt, kdf);
    const next: VaultMeta = { ...meta, kdf, salt, wrapped: await seal(kek, mkRaw, MASTER_KEY_AAD) };
    const tx = this.db.transaction('meta', 'readwrite');
    await tx.store.put(next);
    try {
      hooks.beforeCommit?.();
    } catch (err) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw err;
    }
    await tx.done;
    return salt;
  }

  /**
   * Restores the unlocked state after a worker restart from the session store. Returns false (and clears
   * the session) when nothing is stored, the vault's salt changed, or the verifier does not open.
   */
  async restoreSession(): Promise<boolean> {
    if (this.mk) return true;
    const s = await this.session.get();
    const meta = await this.meta();
    if (!s || !meta || s.salt !== b64(meta.salt)) {
      await this.session.clear();
      return false;
    }
    try {
      const mk = await importMasterKey(unb64(s.mk) as Uint8Array<ArrayBuffer>);
      await open(mk, meta.verifier, 'verifier');
      this.mk = mk;
      return true;
    } catch {
      await this.session.clear();
      return false;
    }
  }

  /** Forgets the master key here and in the session store. */
  async lock(): Promise<void> {
    this.mk = undefined;
    this.index = undefined;
    this.auditKeyCache = undefined;
    await this.session.clear();
  }

  /**
   * Changes the password: re-wraps only the master key (records stay as they are) in one IndexedDB
   * transaction, so a crash before commit leaves the old password working. Throws `WrongPasswordError`
   * (old password), `WeakPasswordError`.
   */
  async changePassword(oldPassword: string, newPassword: string, hooks: ChangePasswordHooks = {}): Promise<void> {
    if (newPassword.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    const meta = await this.meta();
    if (!meta) throw new VaultNotInitializedError();
    const unwrapped = await this.reauthenticate(meta, oldPassword);
    const salt = await this.rewrap(meta, unwrapped.raw, newPassword, this.kdf, hooks);
    unwrapped.raw.fill(0);
    await this.setUnlocked(unwrapped.mk, salt);
  }

  private key(): CryptoKey {
    if (!this.mk) throw new VaultLockedError();
    return this.mk;
  }

  private auditKeyCache: { mk: CryptoKey; key: Promise<CryptoKey> } | undefined;

  /**
   * The audit log's MAC key (issue #17 §8): HMAC-SHA256, non-extractable, derived with HKDF-SHA256 from
   * the master key's raw bytes (empty salt, info `countersign/audit/v1`), so it exists only while the
   * vault is unlocked and only the vault can re-derive it. `undefined` while locked. Never leaves the
   * background. (Minimal version for the audit branch; the vault branch's implementation supersedes it.)
   */
  async auditKey(): Promise<CryptoKey | undefined> {
    const mk = this.mk;
    if (!mk) return undefined;
    if (this.auditKeyCache?.mk !== mk) {
      const derive = async () => {
        const raw = new Uint8Array(await crypto.subtle.exportKey('raw', mk));
        try {
          const ikm = await crypto.subtle.importKey('raw', raw, 'HKDF', false, ['deriveKey']);
          return await crypto.subtle.deriveKey(
            { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode('countersign/audit/v1') },
            ikm,
            { name: 'HMAC', hash: 'SHA-256', length: 256 },
            false,
            ['sign', 'verify'],
          );
        } finally {
          raw.fill(0);
        }
      };
      this.auditKeyCache = { mk, key: derive() };
    }
    return this.auditKeyCache.key;
  }

  // ------------------------------------------------------------------------------------------
  // The sealed record index (rollback detection, issue #12 §3)

  /** Digest of a sealed record: sha256(iv ‖ ct), hex. */
  private static digestOf(s: Sealed): string {
    const buf = new Uint8Array(s.iv.length + s.ct.length);
    buf.set(s.iv);
    buf.set(s.ct, s.iv.length);
    return bytesToHex(sha256(buf));
  }

  /** The index, loaded (or, for a vault that has none yet, built from the records on first use). */
  private async loadIndex(): Promise<Map<string, string>> {
    if (this.index) return this.index;
    const rec = (await this.db.get('meta', 'index')) as RecordIndex | undefined;
    if (rec) {
      this.index = new Map(Object.entries(dec<Record<string, string>>(await open(this.key(), rec.sealed, INDEX_AAD))));
    } else {
      const all = await this.db.getAll('secrets');
      this.index = new Map(all.map((r) => [r.id, Vault.digestOf(r.sealed)]));
      await this.db.put('meta', { id: 'index', sealed: await seal(this.key(), enc(Object.fromEntries(this.index)), INDEX_AAD) });
    }
    return this.index;
  }

  /** Writes `put` records and deletes `del` ids together with the updated index, in one transaction. */
  private async commit(put: SecretRecord[], del: string[]): Promise<void> {
    const next = new Map(await this.loadIndex());
    for (const id of del) next.delete(id);
    for (const r of put) next.set(r.id, Vault.digestOf(r.sealed));
    const sealedIndex = await seal(this.key(), enc(Object.fromEntries(next)), INDEX_AAD);
    const tx = this.db.transaction(['secrets', 'meta'], 'readwrite');
    for (const id of del) await tx.objectStore('secrets').delete(id);
    for (const r of put) await tx.objectStore('secrets').put(r);
    await tx.objectStore('meta').put({ id: 'index', sealed: sealedIndex });
    await tx.done;
    this.index = next;
  }

  /** Deletes records: with the index while unlocked; the records alone while locked (lock revokes grants). */
  private async remove(ids: string[]): Promise<void> {
    if (this.mk) await this.commit([], ids);
    else for (const id of ids) await this.db.delete('secrets', id);
  }

  private async put(kind: SecretRecord['kind'], id: string, account: string, meta: SecretRecord['meta'], secret: unknown) {
    const rec: SecretRecord = {
      id,
      kind,
      account: account.toLowerCase(),
      meta,
      sealed: await seal(this.key(), enc(secret), recordAad('secrets', id, account)),
      createdAt: this.now(),
    };
    await this.commit([rec], []);
  }

  /**
   * Reads and opens a record. Throws `KeyNotFoundError`, `TamperedRecordError` (not the record the
   * index sealed: changed, rolled back or injected) or `DecryptError` (corrupted, swapped or moved).
   */
  private async read<T>(id: string): Promise<{ rec: SecretRecord; secret: T }> {
    const rec = await this.db.get('secrets', id);
    if (!rec) throw new KeyNotFoundError('key');
    const index = await this.loadIndex();
    if (index.get(id) !== Vault.digestOf(rec.sealed)) throw new TamperedRecordError();
    const secret = dec<T>(await open(this.key(), rec.sealed, recordAad('secrets', rec.id, rec.account)));
    return { rec, secret };
  }

  // ------------------------------------------------------------------------------------------
  // Owner keys

  /** Stores an owner private key (0x + 64 hex). Returns its address. Requires unlock. */
  async importOwnerKey(privateKey: Hex, label = ''): Promise<OwnerInfo> {
    this.key();
    const account = privateKeyToAccount(privateKey);
    const info = { address: account.address, label, createdAt: this.now() };
    await this.put('owner', `owner:${account.address.toLowerCase()}`, account.address, { address: account.address, label }, { privateKey });
    return info;
  }

  /** Generates and stores a new owner key (viem `generatePrivateKey`). Returns its address only. */
  async generateOwnerKey(label = ''): Promise<OwnerInfo> {
    return this.importOwnerKey(generatePrivateKey(), label);
  }

  /** Owner keys (metadata only; works while locked). */
  async listOwners(): Promise<OwnerInfo[]> {
    const all = await this.db.getAll('secrets');
    return all
      .filter((r) => r.kind === 'owner')
      .map((r) => ({ address: r.meta.address as Address, label: String(r.meta.label ?? ''), createdAt: r.createdAt }));
  }

  /** The signing account of an owner key. Background only — never send its key anywhere. */
  async ownerAccount(address: string): Promise<LocalAccount> {
    const { secret } = await this.read<{ privateKey: Hex }>(`owner:${address.toLowerCase()}`);
    return privateKeyToAccount(secret.privateKey);
  }

  /** The owner private key, for a person who re-entered the password (reveal-after-reauth). */
  async revealOwnerKey(address: string, password: string): Promise<Hex> {
    const meta = await this.meta();
    if (!meta) throw new VaultNotInitializedError();
    (await this.reauthenticate(meta, password)).raw.fill(0);
    return (await this.read<{ privateKey: Hex }>(`owner:${address.toLowerCase()}`)).secret.privateKey;
  }

  // ------------------------------------------------------------------------------------------
  // Proxy keys

  /**
   * Stores a proxy key and its secret for `account`. When `proxy` is given, checks that `privateKey`
   * belongs to it (`ProxyKeyMismatchError`). `expiry` Unix ms.
   */
  async putProxy(input: { account: string; privateKey: Hex; secret: string; proxy?: string; expiry: number; label?: string }): Promise<ProxyInfo> {
    this.key();
    const acct = privateKeyToAccount(input.privateKey);
    if (input.proxy && acct.address.toLowerCase() !== input.proxy.toLowerCase()) throw new ProxyKeyMismatchError();
    const id = `proxy:${acct.address.toLowerCase()}`;
    const info: ProxyInfo = { id, account: input.account as Address, proxy: acct.address, expiry: input.expiry, label: input.label ?? '' };
    await this.put('proxy', id, input.account, { proxy: acct.address, expiry: input.expiry, label: info.label, account: input.account }, {
      privateKey: input.privateKey,
      secret: input.secret,
    });
    return info;
  }

  /** Proxy keys of `account` (metadata only). */
  async listProxies(account?: string): Promise<ProxyInfo[]> {
    const all = account ? await this.db.getAllFromIndex('secrets', 'byAccount', account.toLowerCase()) : await this.db.getAll('secrets');
    return all
      .filter((r) => r.kind === 'proxy')
      .map((r) => ({ id: r.id, account: r.meta.account as Address, proxy: r.meta.proxy as Address, expiry: Number(r.meta.expiry), label: String(r.meta.label ?? '') }));
  }

  /** The unexpired proxy of `account` with the latest expiry: its signing account and secret. Background only. */
  async proxyFor(account: string): Promise<{ info: ProxyInfo; signer: LocalAccount; secret: string }> {
    const live = (await this.listProxies(account)).filter((p) => p.expiry > this.now()).sort((a, b) => b.expiry - a.expiry);
    if (!live[0]) throw new KeyNotFoundError('unexpired proxy key');
    const { secret } = await this.read<{ privateKey: Hex; secret: string }>(live[0].id);
    return { info: live[0], signer: privateKeyToAccount(secret.privateKey), secret: secret.secret };
  }

  /** Removes a proxy record. */
  async deleteProxy(proxy: string): Promise<void> {
    await this.remove([`proxy:${proxy.toLowerCase()}`]);
  }

  // ------------------------------------------------------------------------------------------
  // CLOB credentials

  /** Stores CLOB API credentials of `account` (with nonce, signature type and funder). */
  async putClobCredentials(input: {
    account: string;
    apiKey: string;
    secret: string;
    passphrase: string;
    nonce: number;
    signatureType?: 0 | 1 | 2;
    funder?: string | null;
  }): Promise<ClobInfo> {
    this.key();
    const id = `clob:${input.account.toLowerCase()}`;
    const info: ClobInfo = {
      id,
      account: input.account as Address,
      nonce: input.nonce,
      signatureType: input.signatureType ?? 0,
      funder: (input.funder ?? null) as Address | null,
    };
    await this.put('clob', id, input.account, { account: input.account, nonce: info.nonce, signatureType: info.signatureType, funder: info.funder }, {
      apiKey: input.apiKey,
      secret: input.secret,
      passphrase: input.passphrase,
    });
    return info;
  }

  /** CLOB credentials of `account`. Background only. */
  async clobCredentials(account: string): Promise<{ info: ClobInfo; apiKey: string; secret: string; passphrase: string }> {
    const { rec, secret } = await this.read<{ apiKey: string; secret: string; passphrase: string }>(`clob:${account.toLowerCase()}`);
    return {
      info: { id: rec.id, account: rec.meta.account as Address, nonce: Number(rec.meta.nonce), signatureType: Number(rec.meta.signatureType) as 0 | 1 | 2, funder: rec.meta.funder as Address | null },
      ...secret,
    };
  }

  /** Whether CLOB credentials are stored for `account` (works while locked). */
  async hasClobCredentials(account: string): Promise<boolean> {
    return !!(await this.db.get('secrets', `clob:${account.toLowerCase()}`));
  }

  // ------------------------------------------------------------------------------------------
  // Standing grants (issue #11): sealed like keys, so a site's limits and usage are private at rest.

  /** Stores (or replaces) a grant with its uses. Requires unlock. */
  async putGrant(grant: Grant, uses: GrantUse[]): Promise<void> {
    await this.put('grant', `grant:${grant.id}`, grant.account, {}, { grant, uses });
  }

  /** Every grant with its uses (requires unlock: the records are sealed). */
  async listGrants(): Promise<{ grant: Grant; uses: GrantUse[] }[]> {
    const recs = (await this.db.getAll('secrets')).filter((r) => r.kind === 'grant');
    return Promise.all(recs.map(async (r) => (await this.read<{ grant: Grant; uses: GrantUse[] }>(r.id)).secret));
  }

  /** Removes one grant (no error when it is gone). */
  async deleteGrant(id: string): Promise<void> {
    await this.remove([`grant:${id}`]);
  }

  /** Removes every grant (works while locked: lock revokes them all). */
  async deleteAllGrants(): Promise<number> {
    const ids = (await this.db.getAll('secrets')).filter((r) => r.kind === 'grant').map((r) => r.id);
    await this.remove(ids);
    return ids.length;
  }

  // ------------------------------------------------------------------------------------------
  // Backup

  /**
   * An encrypted backup: the vault metadata (KDF, salt, wrapped master key, verifier) and every sealed
   * record, as JSON. Useless without the password. Requires unlock (so a person proves presence).
   */
  async exportBackup(): Promise<string> {
    this.key();
    const meta = await this.meta();
    const secrets = await this.db.getAll('secrets');
    const sealed = (s: Sealed) => ({ iv: b64(s.iv), ct: b64(s.ct) });
    return JSON.stringify({
      format: 'countersign-backup',
      version: 1,
      meta: { kdf: meta!.kdf, salt: b64(meta!.salt), wrapped: sealed(meta!.wrapped), verifier: sealed(meta!.verifier), createdAt: meta!.createdAt },
      secrets: secrets.map((r) => ({ ...r, sealed: sealed(r.sealed) })),
    });
  }

  /**
   * Restores a backup into this profile (replacing any vault here) after checking `password` opens it.
   * Throws `BackupInvalidError`, `WrongPasswordError`, `KdfParamsError`. Leaves the vault unlocked.
   */
  async restoreBackup(json: string, password: string): Promise<void> {
    type B = { format: string; version: number; meta: { kdf: unknown; salt: string; wrapped: { iv: string; ct: string }; verifier: { iv: string; ct: string }; createdAt: number }; secrets: (Omit<SecretRecord, 'sealed'> & { sealed: { iv: string; ct: string } })[] };
    let b: B;
    const unsealed = (s: { iv: string; ct: string }): Sealed => ({ iv: unb64(s.iv) as Uint8Array<ArrayBuffer>, ct: unb64(s.ct) as Uint8Array<ArrayBuffer> });
    let meta: VaultMeta;
    let secrets: SecretRecord[];
    try {
      b = JSON.parse(json) as B;
      if (b.format !== 'countersign-backup' || b.version !== 1 || !Array.isArray(b.secrets)) throw new Error('format');
      meta = { id: 'vault', kdf: b.meta.kdf as KdfParams, salt: unb64(b.meta.salt) as Uint8Array<ArrayBuffer>, wrapped: unsealed(b.meta.wrapped), verifier: unsealed(b.meta.verifier), createdAt: b.meta.createdAt };
      secrets = b.secrets.map((r) => ({ id: String(r.id), kind: r.kind, account: String(r.account), meta: r.meta, sealed: unsealed(r.sealed), createdAt: Number(r.createdAt) }));
    } catch {
      throw new BackupInvalidError();
    }
    checkKdfParams(meta.kdf, this.bounds);
    const unwrapped = await this.reauthenticate(meta, password);
    for (const r of secrets) await open(unwrapped.mk, r.sealed, recordAad('secrets', r.id, r.account)).catch(() => {
      throw new BackupInvalidError();
    });
    const tx = this.db.transaction(['meta', 'secrets'], 'readwrite');
    await tx.objectStore('secrets').clear();
    await tx.objectStore('meta').put(meta);
    await tx.objectStore('meta').put({ id: 'backoff', failures: 0, nextAllowedAt: 0 });
    // The restored records are trusted (the person restored them): the index is rebuilt from them.
    await tx.objectStore('meta').delete('index');
    for (const r of secrets) await tx.objectStore('secrets').put(r);
    await tx.done;
    this.index = undefined;
    unwrapped.raw.fill(0);
    await this.setUnlocked(unwrapped.mk, meta.salt);
  }
}
