/**
 * The vault: create, unlock, lock, change password, and the encrypted key records (owner keys, proxy
 * keys with their secret, CLOB API credentials, standing grants), backup and restore. Background only.
 *
 * ## States (issue #17)
 * - **'locked'**: no key in memory or in the session store. Metadata (addresses, labels, expiries) is
 *   readable; nothing can be signed or decrypted.
 * - **'unlocked'**: the master key lives in this object and, exported, in the session store
 *   (`browser.storage.session`, trusted contexts only) with the vault's salt, so a service-worker restart
 *   does not ask again. Everything works.
 * - **'session'** (a trading session): entered by `enterTradingSession` when auto-lock fires while
 *   standing grants are live. The master key is forgotten (here and in the session store). What the live
 *   grants need — their accounts' unexpired proxy keys with their secrets, those accounts' CLOB API
 *   credentials and deposit-wallet builder credentials, every grant with its uses, and the audit MAC
 *   key — is kept in a bundle sealed (AES-GCM)
 *   by a fresh random session key, stored in IndexedDB (`meta/session`); the session key lives in memory
 *   and in the session store. `restoreSession` restores whichever state was live after a worker restart.
 *   `unlock(password)` returns to 'unlocked' (the grants and their uses are written back as sealed
 *   records); `lock()` ends everything.
 *
 * What someone holding the unlocked browser can do in the 'session' state: what the live grants allow
 * the granted site (proxy-signed perps commands and order-book orders for the kept accounts, within the
 * grants' limits — enforced by `lib/grants`, not here), read the grants' limits and usage, and revoke
 * grants or lock. What they cannot do without the password: use or reveal an owner key (withdrawals,
 * transfers, proxy issuance, any owner-signed command), export a backup, import or generate keys, add
 * proxy keys or API credentials, use the keys of an account no grant names, create a new grant (needs
 * 'unlocked'), or change a setting that needs the password. A person (or malware) reading the profile's
 * disk finds only sealed data: the session key is in `storage.session`, which the browser keeps in
 * memory and empties when it closes — a browser restart ends the session (locked).
 *
 * ## One writer at a time
 * Every mutation (create, unlock and its back-off and re-wrap writes, change password, restore, key and
 * grant writes, the session transitions, lock) and every read of a sealed record runs alone, through one
 * promise chain in this object (`exclusive`): the sealed record index is read and updated in the same
 * critical section as the record it covers, so concurrent calls all succeed and never leave a record
 * that the index does not vouch for. Password checks hold the chain while the KDF runs (about a second
 * with the default cost); reads queued behind one wait for it.
 *
 * ## Password back-off
 * Every password check — `unlock`, `revealOwnerKey`, `changePassword`, `restoreBackup` — goes through one
 * persisted back-off: wrong passwords wait 1 s, 2 s, 4 s … capped at 5 min; the counter and the next
 * allowed time are in IndexedDB (`meta/backoff`), so a worker restart does not reset them. Too soon →
 * `UnlockBackoffError` before anything is derived; wrong → `WrongPasswordError` with the next delay;
 * right → the counter resets. Checks are serialised, so concurrent guesses get one try per delay.
 */
import * as v from 'valibot';
import { address, parseOrThrow } from '../validation';
import type { Address, Hex, LocalAccount } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import {
  checkKdfParams,
  KdfParamsError,
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
import { readMeta, type BackoffRecord, type SecretRecord, type SessionRecord, type VaultDb, type VaultMeta } from './db';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Grant, GrantUse } from '../grants/evaluate';
import { backgroundTask } from '../tasks';
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

/**
 * What survives a worker restart (`storage.session`), base64 strings: the master key while 'unlocked'
 * (`mk`) or the trading session's key while in 'session' (`sk`), with the vault's salt at that time (a
 * restored, re-created or re-keyed vault no longer matches, and the state is not restored).
 */
/**
 * What the session store holds. A trading session also names the digest of its sealed bundle (`bundle`,
 * sha256 of iv ‖ ct, updated on every re-seal): the bundle in IndexedDB is the same kind of record as the
 * sealed index vouches for, and a store writer must not be able to put an older copy back (a grant
 * revoked during the session, or its usage before the daily cap was reached).
 */
export type SessionState = { mk: string; salt: string } | { sk: string; salt: string; bundle: string };

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

/** The vault's state (see the module docstring): nothing usable, a trading session, or everything. */
export type VaultState = 'locked' | 'session' | 'unlocked';

const VERIFIER = new TextEncoder().encode('countersign-vault-verifier-v1');
/**
 * Longest a grant head lags its newest use (ms): `addGrantUse` writes the use's bucket before anything
 * is signed, the head and the index (or the bundle) at most this long after, once for every use since.
 * Within it a store writer could delete or roll back the newest uses undetected (after it, a missing
 * number is refused as tampered); a crash within it loses nothing (uses above the head count).
 */
export const HEAD_LAG_MS = 500;
const BACKOFF_CAP_MS = 5 * 60_000;
/** Shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 8;

const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const unsealed = (s: { iv: string; ct: string }): Sealed => ({ iv: unb64(s.iv), ct: unb64(s.ct) });

/** A sealed value in a backup: IV and ciphertext, base64. */
const sealedJsonSchema = v.object({ iv: v.string(), ct: v.string() });
/** The backup file (`exportBackup`): format tag, version 1, vault metadata and every sealed record. */
const backupSchema = v.object({
  format: v.literal('countersign-backup'),
  version: v.literal(1),
  meta: v.object({ kdf: v.unknown(), salt: v.string(), wrapped: sealedJsonSchema, verifier: sealedJsonSchema, createdAt: v.number() }),
  secrets: v.array(
    v.object({
      id: v.string(),
      kind: v.picklist(['owner', 'proxy', 'clob', 'grant', 'grantuse', 'deposit']),
      account: v.string(),
      meta: v.record(v.string(), v.union([v.string(), v.number(), v.boolean(), v.null()])),
      sealed: sealedJsonSchema,
      createdAt: v.number(),
    }),
  ),
});
const unb64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const enc = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const dec = <T>(b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as T;

/** Non-secret view of an owner key. */
export type OwnerInfo = { address: Address; label: string; createdAt: number };
/** Non-secret view of a proxy key. `expiry` Unix ms. */
export type ProxyInfo = { id: string; account: Address; proxy: Address; expiry: number; label: string };
/** Non-secret view of CLOB credentials. */
export type ClobInfo = { id: string; account: Address; nonce: number; signatureType: 0 | 1 | 2 | 3; funder: Address | null };

/** `db` the vault database; `session` where the session keys live (`storage.session`; memory in tests); `now` Unix ms clock; `kdf` for new wraps; `bounds` for stored KDF parameters. */
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
const SESSION_AAD = 'countersign/v1/meta/session';
/** HKDF-SHA256 `info` of the audit chain's MAC key (derived from the master key; issue #17). */
const AUDIT_INFO = 'countersign/audit/v1';
const GRANT_PREFIX = 'grant:';
/** Id prefix of a grant's use buckets: `grantuse:<grant id>:<minute, 10 digits>`. */
const USE_PREFIX = 'grantuse:';
/** Width of one use bucket (ms): every use of a grant made in the same clock minute shares a record. */
const BUCKET_MS = 60_000;
/** The ids from `prefix` up (IndexedDB key range over one kind of record). */
const idsFrom = (prefix: string) => IDBKeyRange.bound(prefix, `${prefix}\uffff`);
const bucketsOf = (grantId: string) => idsFrom(`${USE_PREFIX}${grantId}:`);
const bucketId = (grantId: string, at: number) => `${USE_PREFIX}${grantId}:${String(Math.floor(at / BUCKET_MS)).padStart(10, '0')}`;

/**
 * A grant record's sealed content: the grant and `n`, how many uses it holds (uses are numbered 1 … n
 * in the bucket records). Records written before the buckets hold `{ grant, uses }` instead (migrated
 * when read).
 */
type GrantHead = { grant: Grant; n: number };
type LegacyGrant = { grant: Grant; uses: GrantUse[] };
/** One bucket record's sealed content: the uses of one minute and their numbers (`n[i]` numbers `uses[i]`). */
type UseBucket = { n: number[]; uses: GrantUse[] };
const isLegacy = (x: GrantHead | LegacyGrant): x is LegacyGrant => 'uses' in x && Array.isArray(x.uses);

/** A deposit wallet's builder API credentials (the sealed part of `deposit:<owner>`). */
type BuilderSecret = { key: string; secret: string; passphrase: string };

/**
 * The trading session's bundle, sealed by the session key in `meta/session` (AAD `SESSION_AAD`).
 * `accounts` lower-case; `auditKey` the audit MAC key's 32 raw bytes, base64.
 */
type SessionBundle = {
  v: 1;
  accounts: string[];
  proxies: { info: ProxyInfo; privateKey: Hex; secret: string }[];
  clob: { info: ClobInfo; apiKey: string; secret: string; passphrase: string }[];
  /** The kept accounts' deposit-wallet builder credentials (issue #21; `account` lower-case). Absent in bundles sealed before them. */
  deposit?: { account: string; key: string; secret: string; passphrase: string }[];
  /** Each grant with its use count (`GrantHead`); its uses are bucket records sealed by the session key. Bundles written before the buckets carry `uses` (migrated when read). */
  grants: (GrantHead | LegacyGrant)[];
  auditKey: string;
};

type ProxySecret = { privateKey: Hex; secret: string };
type ClobSecret = { apiKey: string; secret: string; passphrase: string };

/** Imports a trading session key (AES-256-GCM, extractable so it can live in `storage.session`). */
function importSessionKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', true, ['encrypt', 'decrypt']);
}

/** The clear metadata of each record kind (written by `storeOwnerKey`, `putProxy`, `putClobCredentials`). */
const ownerMetaSchema = v.object({ address, label: v.optional(v.string()) });
const proxyMetaSchema = v.object({ account: address, proxy: address, expiry: v.number(), label: v.optional(v.string()) });
const clobMetaSchema = v.object({ account: address, nonce: v.number(), signatureType: v.picklist([0, 1, 2, 3]), funder: v.nullable(address) });

const proxyInfoOf = (r: SecretRecord): ProxyInfo => {
  const m = parseOrThrow(proxyMetaSchema, r.meta, 'meta');
  return { id: r.id, account: m.account, proxy: m.proxy, expiry: m.expiry, label: m.label ?? '' };
};
const depositMetaSchema = v.object({ account: address, wallet: address, kind: v.picklist(['uups', 'beacon']), beacon: address });
/** Non-secret view of a deposit wallet (issue #21): owner `account`, its `wallet`, UUPS or beacon (`beacon` zero for UUPS). */
export type DepositWalletInfo = v.InferOutput<typeof depositMetaSchema>;

const clobInfoOf = (r: SecretRecord): ClobInfo => {
  const m = parseOrThrow(clobMetaSchema, r.meta, 'meta');
  return { id: r.id, account: m.account, nonce: m.nonce, signatureType: m.signatureType, funder: m.funder };
};

/**
 * The vault (see the module docstring): states locked / session / unlocked, owner and proxy keys, CLOB
 * credentials and grants as sealed records, the sealed index, the audit key, backup. Every mutation runs
 * through one writer lock. Errors: `lib/vault/errors.ts` and `lib/vault/crypto.ts`.
 */
export class Vault {
  private index: Map<string, string> | undefined;
  /** The master key ('unlocked'). */
  private mk: CryptoKey | undefined;
  /** The trading session's key and its opened bundle ('session'). */
  private sk: CryptoKey | undefined;
  private bundle: SessionBundle | undefined;
  /** Digest of the sealed session bundle last written (also in the session store). */
  private bundleDigest: string | undefined;
  /** The writer lock: every mutation and sealed read runs after the previous one settled. */
  private chain: Promise<unknown> = Promise.resolve();
  private auditCache: { of: CryptoKey; key: CryptoKey } | undefined;
  /**
   * Signing accounts of keys opened since the last lock, by private key (issue #20: deriving the public
   * key costs about a millisecond per signature). Only keys already opened are here; `lock` and entering
   * a trading session empty it.
   */
  private signers = new Map<Hex, LocalAccount>();
  /**
   * The last opened proxy of each account (lowercase), so that a granted order does not read and open
   * its record again (issue #20, the page path): valid only under the same master key object (lock,
   * unlock, restore and a new vault replace it) and the same `keyWrites` count (bumped by every write
   * or delete of a record other than a grant's), and only while unexpired. Read by `heldProxy`.
   */
  private proxyCache = new Map<string, { mk: CryptoKey; writes: number; info: ProxyInfo; signer: LocalAccount; secret: string }>();
  private keyWrites = 0;
  /**
   * The owner list as last read (issue #20: every page request reads it, and the read waited behind the
   * previous order's grant writes in the same store): valid while `keyWrites` is unchanged — every write
   * or delete of a record other than a grant's bumps it before and after, so a list read across a write is
   * never kept.
   */
  private ownersHeld: { writes: number; list: OwnerInfo[] } | undefined;
  /** Grant heads' use counts and the newest bucket of each grant, as last written (issue #20: a use reads nothing back). */
  private useHeads = new Map<string, { n: number; bucket: { id: string; b: UseBucket } | undefined }>();
  /**
   * Grants whose head lags their newest uses (`addGrantUse`), grants whose held bucket has recorded
   * orders not written yet (`updateGrantUses`), and the timer of the flush that catches both up (`flushHeads`).
   */
  private readonly headsDue = new Set<string>();
  private readonly bucketsDue = new Set<string>();
  private headTimer: ReturnType<typeof setTimeout> | undefined;
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

  /** Runs `fn` alone: after every earlier call queued here settled (one writer at a time, issue #17). Never nest. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async meta(): Promise<VaultMeta | undefined> {
    return readMeta(this.db, 'vault');
  }

  /** `{ initialized, unlocked, state, retryAfterMs }` — no secrets. `retryAfterMs`: the password back-off left. */
  async status(): Promise<{ initialized: boolean; unlocked: boolean; state: VaultState; retryAfterMs: number }> {
    const meta = await this.meta();
    const backoff = await readMeta(this.db, 'backoff');
    return {
      initialized: !!meta,
      unlocked: this.unlocked,
      state: this.state,
      retryAfterMs: Math.max(0, (backoff?.nextAllowedAt ?? 0) - this.now()),
    };
  }

  /** 'locked': nothing usable; 'session': a trading session (see the module docstring); 'unlocked': everything. */
  get state(): VaultState {
    return this.mk ? 'unlocked' : this.sk ? 'session' : 'locked';
  }

  /** `state === 'unlocked'`: the master key is present, everything works. */
  get unlocked(): boolean {
    return this.state === 'unlocked';
  }

  /** `state === 'session'`: a trading session keeps only what the live grants need. */
  get sessionLive(): boolean {
    return this.state === 'session';
  }

  /** Creates a new vault protected by `password`. Throws `VaultExistsError`, `WeakPasswordError`. Leaves it unlocked. */
  async create(password: string): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    if (password.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    return this.exclusive(async () => {
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
      this.index = undefined;
      this.useHeads.clear();
      await this.setUnlocked(mk, salt);
    });
  }

  /** Enters 'unlocked' with `mk` (forgets any session key) and stores it in the session store. */
  private async setUnlocked(mk: CryptoKey, salt: Uint8Array): Promise<void> {
    this.mk = mk;
    this.sk = undefined;
    this.bundle = undefined;
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

  /**
   * Every password check (unlock, reveal, change password, backup restore): the persisted back-off,
   * then `unwrap`. Throws `UnlockBackoffError` (too soon; nothing derived), `WrongPasswordError` (with
   * the next delay, counted in `meta/backoff`), `KdfParamsError` (not counted). A right password resets
   * the counter. Call inside `exclusive` only (so concurrent guesses cannot share one slot).
   */
  private async checkPassword(meta: VaultMeta, password: string): Promise<{ mk: CryptoKey; raw: Uint8Array<ArrayBuffer> }> {
    const backoff: BackoffRecord = (await readMeta(this.db, 'backoff')) ?? { id: 'backoff', failures: 0, nextAllowedAt: 0 };
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
    if (backoff.failures > 0 || backoff.nextAllowedAt > 0) await this.db.put('meta', { id: 'backoff', failures: 0, nextAllowedAt: 0 });
    return unwrapped;
  }

  /**
   * Unlocks with `password`, from 'locked' or from 'session' (then the session's grants, with their uses,
   * become sealed records again and the bundle is deleted). Throws `VaultNotInitializedError`,
   * `UnlockBackoffError` (too soon after a failure — nothing is derived), `WrongPasswordError` (with the
   * next delay; the state does not change), `KdfParamsError`. When the vault's KDF cost is below the
   * current default it is re-wrapped with the default.
   */
  async unlock(password: string): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const { mk, raw } = await this.checkPassword(meta, password);
      try {
        const salt = kdfWeaker(meta.kdf, this.kdf) ? await this.rewrap(meta, raw, password, this.kdf) : meta.salt;
        if (this.bundle) await this.leaveSession(mk, this.bundle);
        this.index = undefined;
        await this.setUnlocked(mk, salt);
      } finally {
        raw.fill(0);
      }
    });
  }

  /**
   * Writes the session's grants back as records sealed by `mk` (their use buckets re-sealed from the
   * session key to `mk`) and deletes the bundle, in one transaction.
   */
  private async leaveSession(mk: CryptoKey, bundle: SessionBundle): Promise<void> {
    const recs = await Promise.all(bundle.grants.map((g) => this.sealRecord(mk, 'grant', `${GRANT_PREFIX}${g.grant.id}`, g.grant.account, {}, g)));
    await this.commit(mk, recs, [], { delMeta: ['session'], loose: await this.resealBuckets(this.useKey(), mk) });
  }

  /** Every grant use bucket opened with `from` and sealed again with `to` (entering and leaving a trading session). A bucket that does not open is dropped (its grant is then refused as incomplete). */
  private async resealBuckets(from: CryptoKey, to: CryptoKey): Promise<SecretRecord[]> {
    const out: SecretRecord[] = [];
    for (const id of (await this.db.getAllKeys('secrets', idsFrom(USE_PREFIX))).map(String)) {
      const b = await this.readBucket(from, id).catch(() => undefined);
      if (b) out.push(await this.sealBucket(to, id, b));
    }
    return out;
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
   * Restores the state that was live before a worker restart, from the session store: 'unlocked' (the
   * master key opens the verifier) or 'session' (the session key opens the bundle). Returns true when the
   * vault is (now) unlocked or in a session. Returns false — and clears the session store and any
   * session bundle — when nothing is stored (a browser restart), the vault's salt changed, or nothing opens.
   */
  async restoreSession(): Promise<boolean> {
    // Every page request and popup message calls this: while unlocked or in a session it changes nothing,
    // so the proxy held in memory stays (issue #20: clearing it here sent every granted order's key read
    // behind the grant's use write). Locked, nothing is held (`heldProxy` needs the master key).
    if (this.state !== 'locked') return true;
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      if (this.state !== 'locked') return true;
      const s = await this.session.get();
      const meta = await this.meta();
      const fail = async () => {
        await this.session.clear();
        await this.db.delete('meta', 'session');
        return false;
      };
      if (!s || !meta || typeof s.salt !== 'string' || s.salt !== b64(meta.salt)) return fail();
      try {
        if ('mk' in s && typeof s.mk === 'string') {
          const mk = await importMasterKey(unb64(s.mk));
          await open(mk, meta.verifier, 'verifier');
          await this.db.delete('meta', 'session'); // a bundle left by an interrupted transition: nobody can open it
          this.index = undefined;
          this.mk = mk;
          return true;
        }
        if ('sk' in s && typeof s.sk === 'string') {
          const rec = await readMeta(this.db, 'session');
          // Only the bundle last sealed in this browser session opens (an older copy put back is refused).
          if (!rec || !('bundle' in s) || typeof s.bundle !== 'string' || s.bundle !== Vault.digestOf(rec.sealed)) return fail();
          const sk = await importSessionKey(unb64(s.sk));
          const bundle = dec<SessionBundle>(await open(sk, rec.sealed, SESSION_AAD));
          if (bundle.v !== 1) return fail();
          this.sk = sk;
          this.bundle = bundle;
          this.bundleDigest = s.bundle;
          return true;
        }
      } catch {
        /* fall through: nothing opens */
      }
      return fail();
    });
  }

  /**
   * Forgets the session store's copy of the keys (what a new worker restores, `restoreSession`) and keeps
   * the ones in memory: a worker that stops before its `lock` comes back locked. The panic switch calls
   * it before anything else it awaits, so a panic cut short by a stopped worker still ends locked.
   */
  async forgetRestorable(): Promise<void> {
    await this.session.clear();
  }

  /**
   * Locks, from any state: forgets the master key and the session key (here and in the session store),
   * deletes the session bundle and every grant record (lock ends every grant). Each step runs even when
   * an earlier one failed; the first failure is rethrown at the end — the keys are forgotten regardless.
   */
  async lock(): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      const mk = this.mk;
      this.mk = undefined;
      this.sk = undefined;
      this.bundle = undefined;
      this.signers.clear();
      this.proxyCache.clear();
      this.useHeads.clear();
      let failure: unknown;
      const step = async (fn: () => Promise<unknown>) => {
        try {
          await fn();
        } catch (err) {
          failure ??= err;
        }
      };
      await step(() => this.session.clear());
      await step(async () => {
        const grantIds = await this.grantRecordIds();
        if (mk) {
          try {
            await this.commit(mk, [], grantIds, { delMeta: ['session'], dropIndexPrefix: GRANT_PREFIX });
            return;
          } catch {
            /* an unreadable index: delete the records alone below */
          }
        }
        const tx = this.db.transaction(['secrets', 'meta'], 'readwrite');
        for (const id of grantIds) await tx.objectStore('secrets').delete(id);
        await tx.objectStore('meta').delete('session');
        await tx.done;
      });
      this.index = undefined;
      if (failure) throw failure;
    });
  }

  /**
   * Auto-lock while standing grants are live (issue #17): keeps only what the live grants need and
   * forgets the master key. Requires 'unlocked' (else `VaultLockedError`). `accounts`: the accounts of
   * the live grants. Kept: those accounts' unexpired proxy keys (with their secret), their CLOB API
   * credentials and deposit-wallet builder credentials, every grant record with its uses, and the audit MAC key — re-sealed under a fresh
   * random session key (bundle in `meta/session`, key in the session store); the grant records leave the
   * `secrets` store in the same transaction. The master key is dropped from memory and from the session
   * store. Throws `TamperedRecordError` / `DecryptError` when a record to keep does not open; then the
   * state is unchanged ('unlocked') and the caller should `lock()`.
   */
  async enterTradingSession(o: { accounts: string[] }): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      const mk = this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const keep = new Set(o.accounts.map((a) => a.toLowerCase()));
      const now = this.now();
      const all = await this.db.getAll('secrets');
      const bundle: SessionBundle = { v: 1, accounts: [...keep], proxies: [], clob: [], deposit: [], grants: [], auditKey: '' };
      for (const r of all) {
        if (r.kind === 'proxy' && keep.has(r.account.toLowerCase()) && Number(r.meta.expiry) > now) {
          const { secret } = await this.read<ProxySecret>(r.id);
          bundle.proxies.push({ info: proxyInfoOf(r), privateKey: secret.privateKey, secret: secret.secret });
        } else if (r.kind === 'clob' && keep.has(r.account.toLowerCase())) {
          const { secret } = await this.read<ClobSecret>(r.id);
          bundle.clob.push({ info: clobInfoOf(r), ...secret });
        } else if (r.kind === 'deposit' && keep.has(r.account.toLowerCase())) {
          const { secret } = await this.read<BuilderSecret>(r.id);
          bundle.deposit?.push({ account: r.account.toLowerCase(), key: secret.key, secret: secret.secret, passphrase: secret.passphrase });
        } else if (r.kind === 'grant') {
          bundle.grants.push((await this.read<GrantHead | LegacyGrant>(r.id)).secret);
        }
      }
      const auditRaw = await this.deriveAuditRaw(mk);
      bundle.auditKey = b64(auditRaw);
      auditRaw.fill(0);
      const skRaw = randomBytes(32);
      const sk = await importSessionKey(skRaw);
      const sealed = await seal(sk, enc(bundle), SESSION_AAD);
      // The session store first: a crash before the bundle is written restores nothing (locked), never
      // a master key beside a half-made session.
      const digest = Vault.digestOf(sealed);
      await this.session.set({ sk: b64(skRaw), salt: b64(meta.salt), bundle: digest });
      skRaw.fill(0);
      try {
        const grantIds = all.filter((r) => r.kind === 'grant').map((r) => r.id);
        await this.commit(mk, [], grantIds, { putMeta: [{ id: 'session', sealed }], dropIndexPrefix: GRANT_PREFIX, loose: await this.resealBuckets(mk, sk) });
      } catch (err) {
        await this.setUnlocked(mk, meta.salt).catch(() => undefined);
        throw err;
      }
      this.mk = undefined;
      this.index = undefined;
      this.signers.clear(); // owner keys opened while unlocked must not outlive the master key
      this.proxyCache.clear();
      this.sk = sk;
      this.bundle = bundle;
      this.bundleDigest = digest;
    });
  }

  /**
   * Re-seals the session bundle after a change and writes it (call inside `exclusive`, in 'session');
   * `loose` records (grant use buckets) are put and deleted in the same transaction, before the bundle.
   */
  private async saveBundle(next: SessionBundle, loose: { put: SecretRecord[]; del: string[] } = { put: [], del: [] }): Promise<void> {
    if (!this.sk) throw new VaultLockedError();
    const sealed = await seal(this.sk, enc(next), SESSION_AAD);
    const digest = Vault.digestOf(sealed);
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

  /**
   * Changes the password: re-wraps only the master key (records stay as they are) in one IndexedDB
   * transaction, so a crash before commit leaves the old password working. The old password goes
   * through the back-off. The state does not change: locked stays locked, unlocked stays unlocked, a
   * trading session stays a trading session. Throws `WrongPasswordError`, `UnlockBackoffError` (old
   * password), `WeakPasswordError`, `VaultNotInitializedError`.
   */
  async changePassword(oldPassword: string, newPassword: string, hooks: ChangePasswordHooks = {}): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    if (newPassword.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    return this.exclusive(async () => {
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const { raw } = await this.checkPassword(meta, oldPassword);
      try {
        const salt = await this.rewrap(meta, raw, newPassword, this.kdf, hooks);
        // The session store names the vault's salt: keep it current for whichever state is live.
        if (this.mk) await this.setUnlocked(this.mk, salt);
        else if (this.sk) {
          const skRaw = new Uint8Array(await crypto.subtle.exportKey('raw', this.sk));
          await this.session.set({ sk: b64(skRaw), salt: b64(salt), bundle: this.bundleDigest ?? '' });
          skRaw.fill(0);
        }
      } finally {
        raw.fill(0);
      }
    });
  }

  /** The signing account of `privateKey` (cached until lock). */
  private signerOf(privateKey: Hex): LocalAccount {
    let a = this.signers.get(privateKey);
    if (!a) {
      a = privateKeyToAccount(privateKey);
      if (this.signers.size >= 64) this.signers.clear();
      this.signers.set(privateKey, a);
    }
    return a;
  }

  /** The master key; `VaultLockedError` (saying a password is needed in a trading session) otherwise. */
  private key(): CryptoKey {
    if (!this.mk) throw new VaultLockedError({ inSession: !!this.sk });
    return this.mk;
  }

  /** The session bundle's part for `account`; `VaultLockedError` when no live grant names it. */
  private keptAccount(account: string): void {
    if (!this.bundle?.accounts.includes(account.toLowerCase())) throw new VaultLockedError({ inSession: true });
  }

  // ------------------------------------------------------------------------------------------
  // The audit chain's key (issue #17)

  /** The audit MAC key's 32 raw bytes: HKDF-SHA256(master key, salt = empty, info = `countersign/audit/v1`). */
  private async deriveAuditRaw(mk: CryptoKey): Promise<Uint8Array<ArrayBuffer>> {
    const mkRaw = new Uint8Array(await crypto.subtle.exportKey('raw', mk));
    try {
      const ikm = await crypto.subtle.importKey('raw', mkRaw, 'HKDF', false, ['deriveBits']);
      const bits = await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(AUDIT_INFO) }, ikm, 256);
      return new Uint8Array(bits);
    } finally {
      mkRaw.fill(0);
    }
  }

  /**
   * The audit chain's MAC key: HMAC-SHA256, non-extractable, usages sign and verify; derived from the
   * master key with HKDF-SHA256 (info `countersign/audit/v1`), so it is the same in every state and
   * after a password change, and only someone who can unlock the vault has it. Available in 'unlocked'
   * and 'session' (carried in the bundle); `undefined` when 'locked'.
   */
  async auditKey(): Promise<CryptoKey | undefined> {
    const of = this.mk ?? this.sk;
    if (!of) return undefined;
    if (this.auditCache?.of === of) return this.auditCache.key;
    const raw = this.mk ? await this.deriveAuditRaw(this.mk) : this.bundle ? unb64(this.bundle.auditKey) : undefined;
    if (!raw) return undefined;
    try {
      const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      this.auditCache = { of, key };
      return key;
    } finally {
      raw.fill(0);
    }
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

  /**
   * The index sealed by `key` (cached while it is the live master key), or, for a vault that has none
   * yet, built from the records on first use. Call inside `exclusive`.
   */
  private async loadIndex(key: CryptoKey): Promise<Map<string, string>> {
    if (this.index && key === this.mk) return this.index;
    const rec = await readMeta(this.db, 'index');
    let index: Map<string, string>;
    if (rec) {
      index = new Map(Object.entries(dec<Record<string, string>>(await open(key, rec.sealed, INDEX_AAD))));
    } else {
      const all = await this.db.getAll('secrets');
      index = new Map(all.map((r) => [r.id, Vault.digestOf(r.sealed)]));
      await this.db.put('meta', { id: 'index', sealed: await seal(key, enc(Object.fromEntries(index)), INDEX_AAD) });
    }
    if (key === this.mk) this.index = index;
    return index;
  }

  /**
   * Writes `put` records and deletes `del` ids together with the updated index (sealed by `key`) in one
   * transaction; `putMeta` / `delMeta` join it; `loose` / `looseDel` (grant use buckets, outside the
   * index) join it too, written first; `dropIndexPrefix` also drops index entries of records already gone. Call inside `exclusive`, so the index read here is still current when it is written.
   */
  private async commit(
    key: CryptoKey,
    put: SecretRecord[],
    del: string[],
    o: { putMeta?: SessionRecord[]; delMeta?: string[]; dropIndexPrefix?: string; loose?: SecretRecord[]; looseDel?: string[] } = {},
  ): Promise<void> {
    const keys = [...put.map((r) => r.id), ...del].some((id) => !id.startsWith(GRANT_PREFIX));
    if (keys) this.keyWrites++; // before and after the write: see `listOwners` for why both
    const next = new Map(await this.loadIndex(key));
    if (o.dropIndexPrefix) for (const id of [...next.keys()]) if (id.startsWith(o.dropIndexPrefix)) next.delete(id);
    for (const id of del) next.delete(id);
    for (const r of put) next.set(r.id, Vault.digestOf(r.sealed));
    const sealedIndex = await seal(key, enc(Object.fromEntries(next)), INDEX_AAD);
    const tx = this.db.transaction(['secrets', 'meta'], 'readwrite');
    const secrets = tx.objectStore('secrets');
    const metaStore = tx.objectStore('meta');
    // Placed at once, run in this order (IndexedDB keeps a transaction's request order; any failure aborts
    // them all): records outside the index (grant use buckets) first — see "Grant storage" for why.
    await Promise.all([
      ...(o.loose ?? []).map((r) => secrets.put(r)),
      ...(o.looseDel ?? []).map((id) => secrets.delete(id)),
      ...del.map((id) => secrets.delete(id)),
      ...put.map((r) => secrets.put(r)),
      ...(o.putMeta ?? []).map((m) => metaStore.put(m)),
      ...(o.delMeta ?? []).map((id) => metaStore.delete(id)),
      metaStore.put({ id: 'index', sealed: sealedIndex }),
      tx.done,
    ]);
    if (keys) this.keyWrites++;
    if (key === this.mk) this.index = next;
  }

  /** Deletes records: with the index while unlocked; the records alone while locked (lock revokes grants). */
  private async remove(ids: string[]): Promise<void> {
    this.keyWrites++;
    if (this.mk) await this.commit(this.mk, [], ids);
    else for (const id of ids) await this.db.delete('secrets', id);
    this.keyWrites++;
  }

  private async sealRecord(key: CryptoKey, kind: SecretRecord['kind'], id: string, account: string, meta: SecretRecord['meta'], secret: unknown): Promise<SecretRecord> {
    return {
      id,
      kind,
      account: account.toLowerCase(),
      meta,
      sealed: await seal(key, enc(secret), recordAad('secrets', id, account)),
      createdAt: this.now(),
    };
  }

  private async put(kind: SecretRecord['kind'], id: string, account: string, meta: SecretRecord['meta'], secret: unknown) {
    const key = this.key();
    await this.commit(key, [await this.sealRecord(key, kind, id, account, meta, secret)], []);
  }

  /**
   * Reads and opens a record (call inside `exclusive`). Throws `VaultLockedError`, `KeyNotFoundError`,
   * `TamperedRecordError` (not the record the index sealed: changed, rolled back or injected) or
   * `DecryptError` (corrupted, swapped or moved).
   */
  private async read<T>(id: string): Promise<{ rec: SecretRecord; secret: T }> {
    const key = this.key();
    const rec = await this.db.get('secrets', id);
    if (!rec) throw new KeyNotFoundError('key');
    const index = await this.loadIndex(key);
    if (index.get(id) !== Vault.digestOf(rec.sealed)) throw new TamperedRecordError();
    const secret = dec<T>(await open(key, rec.sealed, recordAad('secrets', rec.id, rec.account)));
    return { rec, secret };
  }

  // ------------------------------------------------------------------------------------------
  // Owner keys

  /** Stores an owner private key (0x + 64 hex). Returns its address. Requires 'unlocked' (`VaultLockedError`). */
  async importOwnerKey(privateKey: Hex, label = ''): Promise<OwnerInfo> {
    return this.exclusive(() => this.storeOwnerKey(privateKey, label));
  }

  /** Generates and stores a new owner key (viem `generatePrivateKey`). Returns its address only. Requires 'unlocked'. */
  async generateOwnerKey(label = ''): Promise<OwnerInfo> {
    return this.exclusive(() => this.storeOwnerKey(generatePrivateKey(), label));
  }

  private async storeOwnerKey(privateKey: Hex, label: string): Promise<OwnerInfo> {
    this.key();
    const account = privateKeyToAccount(privateKey);
    const info = { address: account.address, label, createdAt: this.now() };
    await this.put('owner', `owner:${account.address.toLowerCase()}`, account.address, { address: account.address, label }, { privateKey });
    return info;
  }

  /** Owner keys (metadata only; works in every state — in a trading session too, though only the password opens them). */
  async listOwners(): Promise<OwnerInfo[]> {
    const writes = this.keyWrites;
    const held = this.ownersHeld;
    if (held && held.writes === writes) return held.list.map((o) => ({ ...o }));
    const all = await this.db.getAll('secrets', idsFrom('owner:'));
    const list = all
      .filter((r) => r.kind === 'owner')
      .map((r) => {
        const m = parseOrThrow(ownerMetaSchema, r.meta, 'meta');
        return { address: m.address, label: m.label ?? '', createdAt: r.createdAt };
      });
    // Kept only when no key write began or ended during the read (each bumps `keyWrites` before and after).
    if (this.keyWrites === writes) this.ownersHeld = { writes, list: list.map((o) => ({ ...o })) };
    return list;
  }

  /** The signing account of an owner key. Requires 'unlocked'. Background only — never send its key anywhere. */
  async ownerAccount(address: string): Promise<LocalAccount> {
    return this.exclusive(async () => {
      const { secret } = await this.read<{ privateKey: Hex }>(`owner:${address.toLowerCase()}`);
      return this.signerOf(secret.privateKey);
    });
  }

  /**
   * The owner private key, for a person who re-entered the password (reveal-after-reauth). Requires
   * 'unlocked' (`VaultLockedError` first, nothing counted); the password goes through the back-off
   * (`UnlockBackoffError`, `WrongPasswordError`).
   */
  async revealOwnerKey(address: string, password: string): Promise<Hex> {
    return this.exclusive(async () => {
      this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      (await this.checkPassword(meta, password)).raw.fill(0);
      return (await this.read<{ privateKey: Hex }>(`owner:${address.toLowerCase()}`)).secret.privateKey;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Proxy keys

  /**
   * Stores a proxy key and its secret for `account`. When `proxy` is given, checks that `privateKey`
   * belongs to it (`ProxyKeyMismatchError`); a malformed `account` is an `InvalidFieldError`. `expiry` Unix ms. Requires 'unlocked'.
   */
  async putProxy(input: { account: string; privateKey: Hex; secret: string; proxy?: string; expiry: number; label?: string }): Promise<ProxyInfo> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      this.key();
      const acct = privateKeyToAccount(input.privateKey);
      if (input.proxy && acct.address.toLowerCase() !== input.proxy.toLowerCase()) throw new ProxyKeyMismatchError();
      const id = `proxy:${acct.address.toLowerCase()}`;
      const info: ProxyInfo = { id, account: parseOrThrow(address, input.account, 'account'), proxy: acct.address, expiry: input.expiry, label: input.label ?? '' };
      await this.put('proxy', id, input.account, { proxy: acct.address, expiry: input.expiry, label: info.label, account: input.account }, {
        privateKey: input.privateKey,
        secret: input.secret,
      });
      return info;
    });
  }

  /**
   * Proxy keys of `account` (or all), metadata only. In a trading session: only the kept ones (the
   * accounts of the live grants, unexpired when the session began) — the ones that can sign.
   */
  async listProxies(account?: string): Promise<ProxyInfo[]> {
    if (this.bundle) return this.bundle.proxies.map((p) => ({ ...p.info })).filter((p) => !account || p.account.toLowerCase() === account.toLowerCase());
    const all = account ? await this.db.getAllFromIndex('secrets', 'byAccount', account.toLowerCase()) : await this.db.getAll('secrets', idsFrom('proxy:'));
    return all.filter((r) => r.kind === 'proxy').map(proxyInfoOf);
  }

  /**
   * The unexpired proxy of `account` with the latest expiry: its signing account and secret. Background
   * only. Works in 'unlocked' and, for the kept accounts, in 'session'. Throws `KeyNotFoundError` (none
   * unexpired), `VaultLockedError` (locked, or an account the session did not keep), `TamperedRecordError`.
   */
  async proxyFor(account: string): Promise<{ info: ProxyInfo; signer: LocalAccount; secret: string }> {
    const held = this.heldProxy(account);
    if (held) return held;
    return this.exclusive(async () => {
      const now = this.now();
      if (this.bundle) {
        this.keptAccount(account);
        const live = this.bundle.proxies
          .filter((p) => p.info.account.toLowerCase() === account.toLowerCase() && p.info.expiry > now)
          .sort((a, b) => b.info.expiry - a.info.expiry)[0];
        if (!live) throw new KeyNotFoundError('unexpired proxy key');
        return { info: { ...live.info }, signer: this.signerOf(live.privateKey), secret: live.secret };
      }
      const mk = this.key();
      const writes = this.keyWrites;
      const live = (await this.listProxies(account)).filter((p) => p.expiry > now).sort((a, b) => b.expiry - a.expiry);
      if (!live[0]) throw new KeyNotFoundError('unexpired proxy key');
      const { secret } = await this.read<ProxySecret>(live[0].id);
      const found = { info: live[0], signer: this.signerOf(secret.privateKey), secret: secret.secret };
      if (this.proxyCache.size >= 64) this.proxyCache.clear();
      this.proxyCache.set(account.toLowerCase(), { mk, writes, ...found, info: { ...found.info } });
      return found;
    });
  }

  /**
   * The proxy `proxyFor` opened last for `account`, when still valid (see `proxyCache`), without
   * queuing behind a grant's use write: every call that changes keys or the master key empties the
   * cache before it queues, so a later read never returns what such a call replaced.
   */
  private heldProxy(account: string): { info: ProxyInfo; signer: LocalAccount; secret: string } | undefined {
    const hit = this.proxyCache.get(account.toLowerCase());
    if (!hit || this.bundle || !this.mk || hit.mk !== this.mk || hit.writes !== this.keyWrites || hit.info.expiry <= this.now()) return undefined;
    return { info: { ...hit.info }, signer: hit.signer, secret: hit.secret };
  }

  /** Removes a proxy record. Requires 'unlocked' or 'locked' (a trading session needs the password: `VaultLockedError`). */
  async deleteProxy(proxy: string): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    return this.exclusive(async () => {
      if (this.sk) throw new VaultLockedError({ inSession: true });
      await this.remove([`proxy:${proxy.toLowerCase()}`]);
    });
  }

  // ------------------------------------------------------------------------------------------
  // CLOB credentials

  /** Stores CLOB API credentials of `account` (with nonce, signature type and funder). Requires 'unlocked'; `InvalidFieldError` (`account`, `funder`) for a malformed address. */
  async putClobCredentials(input: {
    account: string;
    apiKey: string;
    secret: string;
    passphrase: string;
    nonce: number;
    signatureType?: 0 | 1 | 2 | 3;
    funder?: string | null;
  }): Promise<ClobInfo> {
    return this.exclusive(async () => {
      this.key();
      const id = `clob:${input.account.toLowerCase()}`;
      const info: ClobInfo = {
        id,
        account: parseOrThrow(address, input.account, 'account'),
        nonce: input.nonce,
        signatureType: input.signatureType ?? 0,
        funder: parseOrThrow(v.nullable(address), input.funder ?? null, 'funder'),
      };
      await this.put('clob', id, input.account, { account: input.account, nonce: info.nonce, signatureType: info.signatureType, funder: info.funder }, {
        apiKey: input.apiKey,
        secret: input.secret,
        passphrase: input.passphrase,
      });
      return info;
    });
  }

  /**
   * CLOB credentials of `account`. Background only. Works in 'unlocked' and, for the kept accounts, in
   * 'session'. Throws `KeyNotFoundError`, `VaultLockedError`, `TamperedRecordError`.
   */
  async clobCredentials(account: string): Promise<{ info: ClobInfo; apiKey: string; secret: string; passphrase: string }> {
    return this.exclusive(async () => {
      if (this.bundle) {
        this.keptAccount(account);
        const found = this.bundle.clob.find((c) => c.info.account.toLowerCase() === account.toLowerCase());
        if (!found) throw new KeyNotFoundError('CLOB API credential');
        return { ...found, info: { ...found.info } };
      }
      const { rec, secret } = await this.read<ClobSecret>(`clob:${account.toLowerCase()}`);
      return { info: clobInfoOf(rec), ...secret };
    });
  }

  /**
   * The signature type of `account`'s stored CLOB credentials (0 EOA, 1 proxy, 2 Safe, 3 deposit wallet;
   * clear metadata, works while locked; in a trading session: kept ones only), or undefined when none.
   */
  async clobSignatureType(account: string): Promise<0 | 1 | 2 | 3 | undefined> {
    if (this.bundle) return this.bundle.clob.find((c) => c.info.account.toLowerCase() === account.toLowerCase())?.info.signatureType;
    const rec = await this.db.get('secrets', `clob:${account.toLowerCase()}`);
    return rec?.kind === 'clob' ? clobInfoOf(rec).signatureType : undefined;
  }

  /**
   * Which keys `account` has stored, in every state (clear metadata only, nothing opened): an unexpired
   * proxy key (`proxy`), only expired ones (`expiredProxy`), order-book credentials. What panic names for
   * an account whose keys a trading session or the lock keeps sealed, or whose proxy key expired.
   */
  async storedKeys(account: string): Promise<{ proxy: boolean; expiredProxy: boolean; clob: boolean }> {
    const recs = await this.db.getAllFromIndex('secrets', 'byAccount', account.toLowerCase());
    const now = this.now();
    const proxies = recs.filter((r) => r.kind === 'proxy').map((r) => proxyInfoOf(r).expiry);
    const proxy = proxies.some((e) => e > now);
    return { proxy, expiredProxy: !proxy && proxies.length > 0, clob: recs.some((r) => r.kind === 'clob') };
  }

  /** Whether CLOB credentials are stored for `account` (works while locked; in a trading session: kept ones only). */
  async hasClobCredentials(account: string): Promise<boolean> {
    if (this.bundle) return this.bundle.clob.some((c) => c.info.account.toLowerCase() === account.toLowerCase());
    return !!(await this.db.get('secrets', `clob:${account.toLowerCase()}`));
  }

  // ------------------------------------------------------------------------------------------
  // Deposit wallets (issue #21): the owner key's deposit wallet (clear metadata) and the builder API
  // credentials that authorise its relayer requests (sealed like API credentials). Record `deposit:<owner>`.

  /** Stores `account`'s deposit wallet and builder credentials (replacing any). Requires 'unlocked'; `InvalidFieldError` (`account`, `wallet`, `beacon`). */
  async putDepositWallet(input: { account: string; wallet: string; kind: 'uups' | 'beacon'; beacon: string; builder: { key: string; secret: string; passphrase: string } }): Promise<DepositWalletInfo> {
    return this.exclusive(async () => {
      this.key();
      const meta = parseOrThrow(depositMetaSchema, { account: input.account, wallet: input.wallet, kind: input.kind, beacon: input.beacon });
      await this.put('deposit', `deposit:${meta.account.toLowerCase()}`, meta.account, meta, { key: input.builder.key, secret: input.builder.secret, passphrase: input.builder.passphrase });
      return meta;
    });
  }

  /** `account`'s deposit wallet (clear metadata; works while locked), or undefined. */
  async depositWallet(account: string): Promise<DepositWalletInfo | undefined> {
    const rec = await this.db.get('secrets', `deposit:${account.toLowerCase()}`);
    return rec?.kind === 'deposit' ? parseOrThrow(depositMetaSchema, rec.meta, 'meta') : undefined;
  }

  /**
   * The builder credentials of `account`'s deposit wallet. Background only. Works in 'unlocked' and, for
   * the kept accounts, in 'session' (carried in the bundle like API credentials). Throws
   * `KeyNotFoundError`, `VaultLockedError`, `TamperedRecordError`.
   */
  async builderCredentials(account: string): Promise<BuilderSecret> {
    return this.exclusive(async () => {
      if (this.bundle) {
        this.keptAccount(account);
        const found = this.bundle.deposit?.find((d) => d.account === account.toLowerCase());
        if (!found) throw new KeyNotFoundError('builder credential');
        return { key: found.key, secret: found.secret, passphrase: found.passphrase };
      }
      return (await this.read<BuilderSecret>(`deposit:${account.toLowerCase()}`)).secret;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Standing grants (issue #11): sealed like keys, so a site's limits and usage are private at rest.
  //
  // Grant storage (issue #20, flat per use): a grant is a head record `grant:<id>` ({ grant, n }, in the
  // sealed index while unlocked, in the session bundle during a trading session) and its uses, numbered
  // 1 … n, in one sealed record per clock minute (`grantuse:<id>:<minute>`, not in the index: each is
  // bound to its id by its AAD, and the head's `n` vouches for the set — a missing, rolled-back or
  // deleted bucket leaves a number missing, and the grant is refused with `TamperedRecordError`). A use
  // rewrites its minute's bucket, alone (issue #20, page path); the head and the index (or the bundle)
  // follow within `HEAD_LAG_MS`, once for all the uses since (`flushHeads`): the cost does not grow with
  // the uses of the day. A use without its head counts (numbers above `n` are counted, and the head is
  // repaired on the next read), and a head without its use is a gap (refused): a crash never un-counts a
  // use. Buckets are sealed by the master key, or by the session key in a session. A use's write runs in a
  // background task after its checks (`addGrantUse`'s `counted`): until it lands, the submission's audit
  // journal record carries the use (`lib/audit/journal.ts`, merged by the next worker's `GrantService`).

  /** The key that seals grant use buckets now: the master key, or the session key in a trading session. */
  private useKey(): CryptoKey {
    const key = this.mk ?? this.sk;
    if (!key) throw new VaultLockedError();
    return key;
  }

  /** Seals one bucket record (`account` is empty: buckets are found by id, never by account). */
  private sealBucket(key: CryptoKey, id: string, bucket: UseBucket): Promise<SecretRecord> {
    return this.sealRecord(key, 'grantuse', id, '', {}, bucket);
  }

  /** Opens bucket `id` (undefined when absent). Throws `DecryptError` when it was altered or moved. */
  private async readBucket(key: CryptoKey, id: string): Promise<UseBucket | undefined> {
    const rec = await this.db.get('secrets', id);
    return rec ? dec<UseBucket>(await open(key, rec.sealed, recordAad('secrets', id, ''))) : undefined;
  }

  /** Buckets of `uses` numbered from `first` (`n` of `uses[i]` is `first + i`), by bucket id. */
  private static bucketsFor(grantId: string, uses: readonly GrantUse[], first = 1): Map<string, UseBucket> {
    const out = new Map<string, UseBucket>();
    uses.forEach((u, i) => {
      const id = bucketId(grantId, u.at);
      const b = out.get(id) ?? { n: [], uses: [] };
      b.n.push(first + i);
      b.uses.push(u);
      out.set(id, b);
    });
    return out;
  }

  /**
   * Writes head `head` with bucket records `buckets` (sealed now) and deletes bucket ids `drop`, in one
   * transaction: the index (unlocked) or the session bundle (session) vouches for the head. Call inside `exclusive`.
   */
  private async writeGrant(head: GrantHead, buckets: Map<string, UseBucket>, drop: string[] = []): Promise<void> {
    const key = this.useKey();
    const loose = await Promise.all([...buckets].map(([id, b]) => this.sealBucket(key, id, b)));
    const before = this.useHeads.get(head.grant.id);
    this.useHeads.delete(head.grant.id); // set again once written
    const only = buckets.size === 1 ? [...buckets][0] : undefined;
    // A head alone (a repair, a flush) keeps the bucket held, with any recorded orders not written yet.
    const cache = { n: head.n, bucket: only ? { id: only[0], b: only[1] } : buckets.size === 0 ? before?.bucket : undefined };
    const b = this.bundle;
    try {
      if (b) {
        await this.saveBundle({ ...b, grants: [...b.grants.filter((g) => g.grant.id !== head.grant.id), structuredClone(head)] }, { put: loose, del: drop });
      } else {
        await this.commit(this.key(), [await this.sealRecord(this.key(), 'grant', `${GRANT_PREFIX}${head.grant.id}`, head.grant.account, {}, head)], [], { loose, looseDel: drop });
      }
    } catch (err) {
      // Nothing was written (one transaction): the held count and bucket stand — a use numbered from a
      // lagging head on disk would reuse a number (outside attack B1, attack28.test.ts).
      if (before) this.useHeads.set(head.grant.id, before);
      throw err;
    }
    this.useHeads.set(head.grant.id, cache);
  }

  /** The head of grant `id` (call inside `exclusive`). Throws `KeyNotFoundError`, `TamperedRecordError`, `VaultLockedError`. */
  private async readHead(id: string): Promise<GrantHead | LegacyGrant> {
    if (this.bundle) {
      const found = this.bundle.grants.find((g) => g.grant.id === id);
      if (!found) throw new KeyNotFoundError('grant');
      return found;
    }
    return (await this.read<GrantHead | LegacyGrant>(`${GRANT_PREFIX}${id}`)).secret;
  }

  /**
   * The uses of a head, in number order, checked complete: every number 1 … n present (else
   * `TamperedRecordError`); a legacy head is migrated (its uses written as buckets). A use numbered above
   * `n` (a torn write) counts, and the head is repaired. Call inside `exclusive`.
   */
  private async loadUses(head: GrantHead | LegacyGrant): Promise<{ grant: Grant; uses: GrantUse[] }> {
    const { grant } = head;
    const ids = await this.db.getAllKeys('secrets', bucketsOf(grant.id));
    if (isLegacy(head)) {
      await this.writeGrant({ grant, n: head.uses.length }, Vault.bucketsFor(grant.id, head.uses), ids.map(String));
      return { grant, uses: head.uses };
    }
    const key = this.useKey();
    const byN = new Map<number, GrantUse>();
    // A held bucket with recorded orders not written yet is read as held (`updateGrantUses`).
    const held = this.bucketsDue.has(grant.id) ? this.useHeads.get(grant.id)?.bucket : undefined;
    for (const id of ids) {
      const b = held?.id === String(id) ? held.b : await this.readBucket(key, String(id)).catch(() => {
        throw new TamperedRecordError();
      });
      b?.uses.forEach((u, i) => byN.set(b.n[i] ?? 0, u));
    }
    const top = Math.max(head.n, ...byN.keys());
    const uses: GrantUse[] = [];
    for (let i = 1; i <= top; i++) {
      const u = byN.get(i);
      if (u) uses.push(u);
      else if (i <= head.n) throw new TamperedRecordError();
    }
    if (top > head.n) await this.writeGrant({ grant, n: top }, new Map());
    return { grant, uses };
  }

  /**
   * Stores (or replaces, by `grant.id`) a grant with all its uses (creation, and tests). Per use, call
   * `addGrantUse`. Requires 'unlocked' or 'session'.
   */
  async putGrant(grant: Grant, uses: GrantUse[]): Promise<void> {
    return this.exclusive(async () => {
      this.useKey();
      const old = (await this.db.getAllKeys('secrets', bucketsOf(grant.id))).map(String);
      const buckets = Vault.bucketsFor(grant.id, uses);
      await this.writeGrant({ grant, n: uses.length }, buckets, old.filter((id) => !buckets.has(id)));
    });
  }

  /**
   * Appends one use to grant `grant` (stored before): rewrites the use's minute bucket only, whatever
   * the number of uses (the head follows, `flushHeads`). Two promises, in the vault's call order:
   * `counted` resolves once every check that could refuse the use has passed — the grant is there, the
   * vault open, the records it reads open and complete — and its write is about to be placed; `stored`
   * once it is written. Both reject with `VaultLockedError` (not 'unlocked' or 'session'),
   * `KeyNotFoundError` (the grant is gone: revoked) or `TamperedRecordError`; `stored` also with a
   * storage error. (Issue #20, page path: a granted submission is sent once its use is `counted` and its
   * audit journal record, which carries the use, is stored — `lib/audit/journal.ts`.)
   */
  addGrantUse(grant: Grant, use: GrantUse): { counted: Promise<void>; stored: Promise<void> } {
    let passed!: () => void;
    let refused!: (err: unknown) => void;
    const counted = new Promise<void>((resolve, reject) => {
      passed = resolve;
      refused = reject;
    });
    counted.catch(() => undefined); // the caller's await sees the error
    const stored = this.exclusive(async () => {
      let id: string, cached: { n: number; bucket: { id: string; b: UseBucket } | undefined } | undefined, b: UseBucket;
      try {
        id = bucketId(grant.id, use.at);
        cached = this.useHeads.get(grant.id);
        if (!cached) {
          // Numbered after every stored use, not after the head: the head may lag its newest uses
          // (`HEAD_LAG_MS`); `loadUses` counts every bucket and repairs a lagging head (which holds the count).
          const head = await this.readHead(grant.id);
          const { uses } = await this.loadUses(head);
          cached = this.useHeads.get(grant.id) ?? { n: isLegacy(head) ? uses.length : head.n, bucket: undefined };
        }
        b =
          cached.bucket?.id === id
            ? cached.bucket.b
            : ((await this.readBucket(this.useKey(), id).catch(() => {
                throw new TamperedRecordError();
              })) ?? { n: [], uses: [] });
        this.useKey();
      } catch (err) {
        refused(err);
        throw err;
      }
      passed();
      // Sealed and written from a later, background task on: what the caller does with `counted` now
      // (build and sign the command, send once its journal record is stored) goes first (issue #20, page path).
      await backgroundTask();
      const n = cached.n;
      // The bucket alone, in one write to the records store (issue #20, page path): the use counts from
      // here on (a number above the head's `n` counts, see "Grant storage"); the head and the index (or the
      // bundle) follow within `HEAD_LAG_MS` (`flushHeads`), one write for every use since.
      const bucket: UseBucket = { n: [...b.n, n + 1], uses: [...b.uses, use] };
      const key = this.useKey();
      // A held bucket whose recorded orders are not written yet (`updateGrantUses`) goes with it.
      const left = cached.bucket && cached.bucket.id !== id && this.bucketsDue.has(grant.id) ? cached.bucket : undefined;
      const recs = await Promise.all([this.sealBucket(key, id, bucket), ...(left ? [this.sealBucket(key, left.id, left.b)] : [])]);
      const tx = this.db.transaction('secrets', 'readwrite');
      await Promise.all([...recs.map((r) => tx.store.put(r)), tx.done]);
      this.bucketsDue.delete(grant.id); // the held bucket is written (this one, or the one left)
      this.useHeads.set(grant.id, { n: n + 1, bucket: { id, b: bucket } });
      this.due(grant.id, 'head');
    });
    return { counted, stored };
  }

  /** Marks grant `id`'s head (`head`) or held bucket (`bucket`) as behind, and starts the flush timer. */
  private due(id: string, what: 'head' | 'bucket'): void {
    (what === 'head' ? this.headsDue : this.bucketsDue).add(id);
    this.headTimer ??= setTimeout(() => void this.flushHeads(), HEAD_LAG_MS);
  }

  /**
   * Brings the heads of the grants used since the last flush up to their uses (`addGrantUse`): each
   * head's `n` (and the index or the bundle that vouches for it) written once for all its new uses. A
   * grant that is gone (revoked, locked, a transition that re-read the grants) is skipped: whoever reads
   * its uses next counts every bucket and repairs the head. Never throws.
   */
  private async flushHeads(): Promise<void> {
    this.headTimer = undefined;
    await this.exclusive(async () => {
      const due = [...new Set([...this.headsDue, ...this.bucketsDue])];
      const buckets = new Set(this.bucketsDue);
      this.headsDue.clear();
      this.bucketsDue.clear();
      for (const id of due) {
        const cached = this.useHeads.get(id);
        if (!cached) continue;
        let bucketWritten = false;
        try {
          const held = cached.bucket;
          if (buckets.has(id) && held) await this.db.put('secrets', await this.sealBucket(this.useKey(), held.id, held.b));
          bucketWritten = true;
          const head = await this.readHead(id);
          if (isLegacy(head) || head.n >= cached.n) continue;
          await this.writeGrant({ grant: head.grant, n: cached.n }, new Map()); // keeps the held bucket
        } catch (err) {
          // Locked, revoked or refused as tampered: the next read of the grant decides. Anything else (a
          // storage error) is tried again at the next flush (outside attack B1).
          if (err instanceof VaultLockedError || err instanceof KeyNotFoundError || err instanceof TamperedRecordError || err instanceof DecryptError) continue;
          if (!bucketWritten && buckets.has(id)) this.due(id, 'bucket');
          this.due(id, 'head');
        }
      }
    }).catch(() => undefined);
  }

  /**
   * Replaces stored uses of grant `grantId` by `uses`, matched by `seq` within the bucket of their `at`
   * (recording or forgetting orders); touches those buckets only. A use not found is skipped. Written
   * before it resolves, except with `defer: true` (orders just recorded, issue #20): a change to the held
   * (newest) bucket then waits for the next use's write or the flush (`HEAD_LAG_MS`).
   */
  async updateGrantUses(grantId: string, uses: readonly GrantUse[], o: { defer?: boolean } = {}): Promise<void> {
    if (!uses.length) return;
    return this.exclusive(async () => {
      const key = this.useKey();
      const cached = this.useHeads.get(grantId);
      if (!cached) await this.readHead(grantId); // the grant must still exist
      const ids = [...new Set(uses.map((u) => bucketId(grantId, u.at)))];
      const recs: SecretRecord[] = [];
      for (const id of ids) {
        const held = cached?.bucket?.id === id;
        const b = held && cached.bucket ? cached.bucket.b : await this.readBucket(key, id);
        if (!b) continue;
        const next = b.uses.map((u) => uses.find((x) => x.seq !== undefined && x.seq === u.seq && x.at === u.at) ?? u);
        const c = this.useHeads.get(grantId);
        if (c?.bucket?.id === id) c.bucket = { id, b: { n: b.n, uses: next } };
        // `defer` (orders just recorded): the held bucket (this minute's) is written with the next use, or by
        // the flush within HEAD_LAG_MS (issue #20: no write between two orders). Lost with a crash before
        // then: only orders a granted cancel may reach — those cancels then ask. Anything that takes an
        // order away from a grant (a forgotten client order id) is written now (outside attack B2).
        if (held && o.defer) this.due(grantId, 'bucket');
        else recs.push(await this.sealBucket(key, id, { n: b.n, uses: next }));
      }
      const tx = this.db.transaction('secrets', 'readwrite');
      for (const r of recs) await tx.store.put(r);
      await tx.done;
      const heldNow = this.useHeads.get(grantId)?.bucket;
      if (heldNow && recs.some((r) => r.id === heldNow.id)) this.bucketsDue.delete(grantId); // written as held
    });
  }

  /** Every grant with its uses (requires 'unlocked' or 'session' when there is any: the records are sealed). */
  async listGrants(): Promise<{ grant: Grant; uses: GrantUse[] }[]> {
    return this.exclusive(async () => {
      const heads = this.bundle ? [...this.bundle.grants] : [];
      if (!this.bundle) for (const id of await this.db.getAllKeys('secrets', idsFrom(GRANT_PREFIX))) heads.push((await this.read<GrantHead | LegacyGrant>(String(id))).secret);
      const out: { grant: Grant; uses: GrantUse[] }[] = [];
      for (const h of heads) out.push(await this.loadUses(h));
      return structuredClone(out);
    });
  }

  /** Removes one grant with its uses (no error when it is gone). */
  async deleteGrant(id: string): Promise<void> {
    return this.exclusive(async () => {
      this.useHeads.delete(id);
      const buckets = (await this.db.getAllKeys('secrets', bucketsOf(id))).map(String);
      const b = this.bundle;
      if (b) {
        if (b.grants.some((g) => g.grant.id === id) || buckets.length) await this.saveBundle({ ...b, grants: b.grants.filter((g) => g.grant.id !== id) }, { put: [], del: buckets });
        return;
      }
      await this.remove([`${GRANT_PREFIX}${id}`, ...buckets]);
    });
  }

  /** Ids of every grant head and use bucket in the `secrets` store. */
  private async grantRecordIds(): Promise<string[]> {
    const [heads, uses] = await Promise.all([this.db.getAllKeys('secrets', idsFrom(GRANT_PREFIX)), this.db.getAllKeys('secrets', idsFrom(USE_PREFIX))]);
    return [...heads, ...uses].map(String);
  }

  /**
   * Removes every grant, in every state (lock and panic revoke them all); never blocked by a damaged
   * index (then the records alone are deleted). Returns how many there were.
   */
  async deleteAllGrants(): Promise<number> {
    return this.exclusive(async () => {
      this.useHeads.clear();
      const ids = await this.grantRecordIds();
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
    });
  }

  // ------------------------------------------------------------------------------------------
  // Backup

  /**
   * An encrypted backup: the vault metadata (KDF, salt, wrapped master key, verifier) and every sealed
   * record, as JSON. Useless without the password. Requires 'unlocked' (so a person proves presence).
   */
  async exportBackup(): Promise<string> {
    return this.exclusive(async () => {
      this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const secrets = await this.db.getAll('secrets');
      const sealed = (s: Sealed) => ({ iv: b64(s.iv), ct: b64(s.ct) });
      return JSON.stringify({
        format: 'countersign-backup',
        version: 1,
        meta: { kdf: meta.kdf, salt: b64(meta.salt), wrapped: sealed(meta.wrapped), verifier: sealed(meta.verifier), createdAt: meta.createdAt },
        secrets: secrets.map((r) => ({ ...r, sealed: sealed(r.sealed) })),
      });
    });
  }

  /**
   * Restores a backup into this profile (replacing any vault here, and ending any trading session) after
   * checking `password` opens it; the password goes through the back-off. Throws `BackupInvalidError`,
   * `WrongPasswordError`, `UnlockBackoffError`, `KdfParamsError`. Leaves the vault unlocked.
   */
  async restoreBackup(json: string, password: string): Promise<void> {
    this.proxyCache.clear(); // before queuing: a proxy read from memory never passes this call
    let meta: VaultMeta;
    let secrets: SecretRecord[];
    try {
      const b = v.parse(backupSchema, JSON.parse(json));
      meta = { id: 'vault', kdf: checkKdfParams(b.meta.kdf, this.bounds), salt: unb64(b.meta.salt), wrapped: unsealed(b.meta.wrapped), verifier: unsealed(b.meta.verifier), createdAt: b.meta.createdAt };
      secrets = b.secrets.map((r) => ({ id: r.id, kind: r.kind, account: r.account, meta: r.meta, sealed: unsealed(r.sealed), createdAt: r.createdAt }));
    } catch (err) {
      if (err instanceof KdfParamsError) throw err;
      throw new BackupInvalidError();
    }
    return this.exclusive(async () => {
      const unwrapped = await this.checkPassword(meta, password);
      try {
        for (const r of secrets) {
          await open(unwrapped.mk, r.sealed, recordAad('secrets', r.id, r.account)).catch(() => {
            throw new BackupInvalidError();
          });
        }
        this.keyWrites++; // the owners and proxies held in memory end here (and again once written)
        const tx = this.db.transaction(['meta', 'secrets'], 'readwrite');
        await tx.objectStore('secrets').clear();
        await tx.objectStore('meta').put(meta);
        await tx.objectStore('meta').put({ id: 'backoff', failures: 0, nextAllowedAt: 0 });
        // The restored records are trusted (the person restored them): the index is rebuilt from them.
        await tx.objectStore('meta').delete('index');
        await tx.objectStore('meta').delete('session');
        for (const r of secrets) await tx.objectStore('secrets').put(r);
        await tx.done;
        this.keyWrites++;
        this.index = undefined;
        this.useHeads.clear();
        await this.setUnlocked(unwrapped.mk, meta.salt);
      } finally {
        unwrapped.raw.fill(0);
      }
    });
  }
}
