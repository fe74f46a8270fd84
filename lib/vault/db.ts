/**
 * The vault's IndexedDB database (`idb`), with a versioned schema and written migrations.
 *
 * Stores (v1):
 * - `meta`: `vault` (KDF name and parameters, salt, wrapped master key, verifier), `backoff`
 *   (failed password checks, next allowed time — survives a worker restart), `index` (the sealed record
 *   index) and, during a trading session only, `session` (the sealed session bundle);
 * - `secrets`: encrypted records (owner keys; proxy keys with their secret; CLOB API credentials),
 *   each with non-secret metadata in clear and the secret part sealed; index `byAccount`;
 * - `settings`: gateway URLs, auto-lock minutes;
 * - `audit`: append-only signing log (what, for which origin, when, result — never a secret);
 * - `connections`: per-origin connections.
 */
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import type { KdfParams, Sealed } from './crypto';

export const DB_NAME = 'countersign-vault';

/** Vault metadata. `salt` 16 bytes; `wrapped` is the master key sealed by the password key. */
export type VaultMeta = {
  id: 'vault';
  kdf: KdfParams;
  salt: Uint8Array<ArrayBuffer>;
  wrapped: Sealed;
  /** A constant sealed by the master key: proves an unwrapped master key is the right one. */
  verifier: Sealed;
  createdAt: number;
};

/** Failed password checks (unlock, reveal, change password, restore) and the earliest time (Unix ms) the next is allowed. */
export type BackoffRecord = { id: 'backoff'; failures: number; nextAllowedAt: number };

/**
 * The sealed index of every secret record's digest (`id → sha256(iv ‖ ct)`), sealed by the master key:
 * a record replaced by an older copy of itself (rolled back) no longer matches it.
 */
export type RecordIndex = { id: 'index'; sealed: Sealed };

/**
 * The trading-session bundle (issue #17, "a grant outlives auto-lock"): what the live grants need,
 * sealed by a random session key that lives only in memory and in `storage.session`. Present only while
 * the vault is in its 'session' state.
 */
export type SessionRecord = { id: 'session'; sealed: Sealed };

/** Kinds of secret record. `grant`: a site's standing grant and its uses (sealed: origin and limits are private). */
export type SecretKind = 'owner' | 'proxy' | 'clob' | 'grant';

/**
 * An encrypted secret record. `meta` is non-secret and readable while locked (addresses, labels,
 * expiry, nonce, signature type, funder); `sealed` holds the secret part, bound to (store, id, account).
 */
export type SecretRecord = {
  id: string;
  kind: SecretKind;
  account: string;
  meta: Record<string, string | number | boolean | null>;
  sealed: Sealed;
  createdAt: number;
};

/** One signing audit entry. Never holds a key, secret or signature material beyond the digest. */
export type AuditEntry = {
  id?: number;
  at: number;
  origin: string;
  account: string;
  kind: string;
  summary: string;
  digest?: string;
  result: 'ok' | 'rejected' | 'error' | 'unknown';
  detail?: string;
  /** Hash chain (lib/audit): the previous entry's hash and this entry's. */
  prev?: string;
  hash?: string;
};

/** A connected origin and the accounts it may see. */
export type Connection = { origin: string; accounts: string[]; connectedAt: number };

export interface VaultSchema extends DBSchema {
  meta: { key: string; value: VaultMeta | BackoffRecord | RecordIndex | SessionRecord };
  secrets: { key: string; value: SecretRecord; indexes: { byAccount: string } };
  settings: { key: string; value: unknown };
  audit: { key: number; value: AuditEntry };
  connections: { key: string; value: Connection };
}

export type VaultDb = IDBPDatabase<VaultSchema>;

/** A migration from `version - 1` to `version`. */
export type Migration = {
  version: number;
  migrate: (db: IDBPDatabase<VaultSchema>, tx: IDBPTransaction<VaultSchema, StoreNames<VaultSchema>[], 'versionchange'>) => void;
};

/** v1: the initial schema. */
export const V1: Migration = {
  version: 1,
  migrate(db) {
    db.createObjectStore('meta', { keyPath: 'id' });
    const secrets = db.createObjectStore('secrets', { keyPath: 'id' });
    secrets.createIndex('byAccount', 'account');
    db.createObjectStore('settings');
    db.createObjectStore('audit', { keyPath: 'id', autoIncrement: true });
    db.createObjectStore('connections', { keyPath: 'origin' });
  },
};

/** The migrations of this build, in order. Add one per schema change; never edit a shipped one. */
export const MIGRATIONS: readonly Migration[] = [V1];

/**
 * Opens (creating or upgrading) the vault database. Each migration above the stored version runs in
 * the one upgrade transaction; a failure aborts it and leaves the old version intact.
 */
export function openVaultDb(name = DB_NAME, migrations: readonly Migration[] = MIGRATIONS): Promise<VaultDb> {
  const target = migrations[migrations.length - 1]!.version;
  return openDB<VaultSchema>(name, target, {
    upgrade(db, oldVersion, _newVersion, tx) {
      for (const m of migrations) if (m.version > oldVersion) m.migrate(db, tx);
    },
  });
}
