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
 *
 * v2 (the keyed audit log — `lib/audit`): the `audit` store gains the indexes `byOrigin`
 * `[origin, id]`, `byGroup` `[group, id]` and `byOriginGroup` `[origin, group, id]` (the Audit tab pages
 * newest first by origin and kind without reading the whole log), every existing entry gets its `group`,
 * and `meta` holds the audit log's MAC'd checkpoint (`auditCheckpoint`) and verified position
 * (`auditVerified`).
 *
 * v3 (what was sent is known after any death — `lib/audit/journal.ts`, `lib/page/outcomes.ts`): `journal`
 * holds the audit journal's open records (one row per submission sent or about to be, until its entry is
 * written) and `keyed` the keyed submissions' records (`idempotencyKey`, client order ids: in flight, answered
 * or of unknown outcome), index `byAt`. They outlive a killed browser, unlike `storage.session`; nothing in them is a
 * secret (origins, accounts, ids, digests, the venue's answers), so they are stored in clear.
 */
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import type { KdfParams, Sealed } from './crypto';

/** The vault's IndexedDB database name. */
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

/**
 * How many key-material writes this vault has had (`lib/vault/copy.ts`): bumped by each, and carried by
 * the second copy written after it, so a vault the disk rolled back reads older than its copy.
 */
export type GenerationRecord = { id: 'generation'; n: number };

/**
 * Failed password checks (unlock, reveal, change password, restore) and the earliest time (Unix ms) the next is
 * allowed.
 */
export type BackoffRecord = { id: 'backoff'; failures: number; nextAllowedAt: number };

/**
 * The sealed index of every secret record's digest (`id → sha256(iv ‖ ct)`), sealed by the master key:
 * a record replaced by an older copy of itself (rolled back) no longer matches it.
 */
export type RecordIndex = { id: 'index'; sealed: Sealed };

/**
 * The trading-session bundle ("a grant outlives auto-lock"): what the live grants need,
 * sealed by a random session key that lives only in memory and in `storage.session`. Present only while
 * the vault is in its 'session' state.
 */
export type SessionRecord = { id: 'session'; sealed: Sealed };

/**
 * Kinds of secret record. `grant`: a site's standing grant and how many uses it holds (sealed: origin and
 * limits are private); `grantuse`: one minute of a grant's uses (sealed; see `lib/grants/use-records.ts`); `deposit`:
 * an owner key's deposit wallet and builder credentials.
 */
export type SecretKind = 'owner' | 'proxy' | 'clob' | 'grant' | 'grantuse' | 'deposit';

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
  /** Unix ms. */
  at: number;
  origin: string;
  account: string;
  kind: string;
  summary: string;
  digest?: string;
  result: 'ok' | 'rejected' | 'error' | 'unknown';
  detail?: string;
  /** The kind's first segment (`perps`, `clob`, `grant` …), for the `byGroup` index (v2; covered by the MAC). */
  group?: string;
  /** The previous link of the keyed chain (lib/audit): the previous entry's `mac`, or the chain's anchor. */
  prev?: string;
  /** HMAC-SHA256 (hex) of this entry's fields, its id and `prev`, under the vault's audit key (v2). */
  mac?: string;
  /** `'locked'`: recorded while no key was available and chained in at the next keyed append (v2). */
  auth?: 'locked';
  /** v1 only: the unkeyed keccak link of an entry written before the keyed log. */
  hash?: string;
};

/** A seal event of the audit log (why the keyed chain (re)started at `fromId`). `at` Unix ms. */
export type AuditSealEvent = {
  at: number;
  fromId: number;
  reason: 'legacy' | 'missing' | 'invalid' | 'restore';
  count: number;
};

/**
 * The audit log's checkpoint (lib/audit), MAC'd with the vault's audit key and written in the same
 * transaction as every append and every prune. Ids are the `audit` store's keys; links are hex MACs.
 */
export type AuditCheckpointRecord = {
  id: 'auditCheckpoint';
  v: 1;
  /** Entries kept with `firstId ≤ id ≤ lastId` (the store's count, minus entries not yet chained). */
  count: number;
  /** The oldest entry kept (`lastId + 1` when none). */
  firstId: number;
  /** The first entry of the keyed chain; older entries kept are outside it (not authenticated). */
  chainFrom: number;
  /** The `prev` the oldest chained entry kept must carry (after a prune: the last dropped entry's MAC). */
  anchor: string;
  /** The newest entry the checkpoint covers (0 when none). */
  lastId: number;
  /** The newest chained entry's MAC (the anchor when none). */
  head: string;
  /** When this seal started (Unix ms). */
  startedAt: number;
  /**
   * Why this seal started, when it did not start with an empty log (at most one event today; a list so later versions
   * can keep history).
   */
  seals: AuditSealEvent[];
  mac: string;
};

/**
 * How far the chain was verified (lib/audit), MAC'd: entries up to `upTo` (whose MAC is `head`) were
 * checked; `broken` keeps a break found by a full check so later incremental checks still report it.
 */
export type AuditVerifiedRecord = {
  id: 'auditVerified';
  upTo: number;
  head: string;
  broken: { id: number; reason: string } | null;
  mac: string;
};

/** A connected origin and the accounts it may see. */
export type Connection = { origin: string; accounts: string[]; connectedAt: number };

/**
 * One open audit journal record (v3): `id` the record's id, `record` what it says (read back through the
 * journal's own checks: the disk is not trusted to hold the shape written).
 */
export type JournalRow = { id: string; record: unknown };

/**
 * One keyed submission's record (v3): `key` the submission key (`origin|account|kind|id`), `at` Unix ms
 * (when it was written: records older than the keyed window are pruned by `byAt`), `value` the record
 * (read back through `lib/page/outcomes.ts`'s schema).
 */
export type KeyedRow = { key: string; at: number; value: unknown };

/** The vault database's stores (v3): keys, values and indexes, as `idb` types them. */
export interface VaultSchema extends DBSchema {
  meta: {
    key: string;
    value:
      | VaultMeta
      | BackoffRecord
      | RecordIndex
      | SessionRecord
      | AuditCheckpointRecord
      | AuditVerifiedRecord
      | GenerationRecord;
  };
  secrets: { key: string; value: SecretRecord; indexes: { byAccount: string } };
  settings: { key: string; value: unknown };
  audit: {
    key: number;
    value: AuditEntry;
    indexes: { byOrigin: [string, number]; byGroup: [string, number]; byOriginGroup: [string, string, number] };
  };
  connections: { key: string; value: Connection };
  journal: { key: string; value: JournalRow };
  keyed: { key: string; value: KeyedRow; indexes: { byAt: number } };
}

/** The vault's database handle (`idb` over `VaultSchema`). */
export type VaultDb = IDBPDatabase<VaultSchema>;

/** Every record of the `meta` store (a union discriminated by `id`). */
export type MetaRecord = VaultSchema['meta']['value'];
/** The `meta` record whose key (and `id`) is `K`, e.g. `MetaOf<'backoff'>` is `BackoffRecord`. */
export type MetaOf<K extends MetaRecord['id']> = Extract<MetaRecord, { id: K }>;

function isMeta<K extends MetaRecord['id']>(value: MetaRecord | undefined, id: K): value is MetaOf<K> {
  return value?.id === id;
}

/**
 * Narrows a value read from the `meta` store at key `id` to its record kind: the value when its `id`
 * field is `id`, otherwise (missing, or a record of another kind under that key) `undefined`.
 */
export function metaRecord<K extends MetaRecord['id']>(value: MetaRecord | undefined, id: K): MetaOf<K> | undefined {
  return isMeta(value, id) ? value : undefined;
}

/** Reads the `meta` record `id` (`undefined` when missing). */
export async function readMeta<K extends MetaRecord['id']>(db: VaultDb, id: K): Promise<MetaOf<K> | undefined> {
  return metaRecord(await db.get('meta', id), id);
}

/** A migration from `version - 1` to `version`. */
export type Migration = {
  version: number;
  migrate: (
    db: IDBPDatabase<VaultSchema>,
    tx: IDBPTransaction<VaultSchema, StoreNames<VaultSchema>[], 'versionchange'>,
  ) => void;
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

/** The group of an audit kind: its first dot-separated segment (`perps.createOrders` → `perps`). */
export function auditGroupOf(kind: string): string {
  const dot = kind.indexOf('.');
  return dot < 0 ? kind : kind.slice(0, dot);
}

/**
 * v2: indexes for paging the audit log by origin and kind, and each existing entry's
 * `group`. v1 entries keep their keccak `hash`; the keyed chain starts after them (`lib/audit`).
 */
export const V2: Migration = {
  version: 2,
  migrate(_db, tx) {
    const audit = tx.objectStore('audit');
    audit.createIndex('byOrigin', ['origin', 'id']);
    audit.createIndex('byGroup', ['group', 'id']);
    audit.createIndex('byOriginGroup', ['origin', 'group', 'id']);
    void (async () => {
      for (let c = await audit.openCursor(); c; c = await c.continue()) {
        if (c.value.group === undefined) await c.update({ ...c.value, group: auditGroupOf(c.value.kind) });
      }
    })();
  },
};

/** An audit entry as the store holds it: `id` is its key (given by the store on append). */
export type StoredAuditEntry = AuditEntry & { id: number };

/**
 * The `audit` store's entries in `query` (all when absent), in key order, at most `count`, each with
 * its key as `id` (values and keys read in one transaction).
 */
export async function readAuditRows(
  db: VaultDb,
  query?: IDBKeyRange | null,
  count?: number,
): Promise<StoredAuditEntry[]> {
  const tx = db.transaction('audit');
  const [keys, values] = await Promise.all([tx.store.getAllKeys(query, count), tx.store.getAll(query, count)]);
  await tx.done;
  return keys.flatMap((id, i) => {
    const e = values[i];
    return e ? [{ ...e, id }] : [];
  });
}

/** v3: the audit journal's open records and the keyed submissions' records, kept across a killed browser. */
export const V3: Migration = {
  version: 3,
  migrate(db) {
    db.createObjectStore('journal', { keyPath: 'id' });
    db.createObjectStore('keyed', { keyPath: 'key' }).createIndex('byAt', 'at');
  },
};

/**
 * Write options of the journal and keyed stores: relaxed durability — the write has reached the browser's
 * storage process when it resolves, so it survives a killed browser; a power cut may lose the last ones
 * (the operating system's cache was not flushed).
 */
export const RELAXED: { durability: 'relaxed' } = { durability: 'relaxed' };

/** The migrations of this build, in order. Add one per schema change; never edit a shipped one. */
export const MIGRATIONS: readonly Migration[] = [V1, V2, V3];

/**
 * Opens (creating or upgrading) the vault database. Each migration above the stored version runs in
 * the one upgrade transaction; a failure aborts it and leaves the old version intact.
 */
export function openVaultDb(name = DB_NAME, migrations: readonly Migration[] = MIGRATIONS): Promise<VaultDb> {
  const target = migrations.at(-1)?.version;
  if (target === undefined) throw new RangeError('openVaultDb: at least one migration is required');
  return openDB<VaultSchema>(name, target, {
    upgrade(db, oldVersion, _newVersion, tx) {
      for (const m of migrations) if (m.version > oldVersion) m.migrate(db, tx);
    },
  });
}
