/**
 * The vault's states and its password: create, unlock, lock, change password, the trading session and
 * the audit chain's key. The sealed records it opens are `lib/vault/records.ts`; the keys, `lib/vault/vault.ts`;
 * the keys opened and held in memory, `lib/vault/opened-keys.ts`; the trading session's bundle and what it
 * keeps, `lib/vault/trading-session.ts`.
 *
 * ## States
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
 * Every mutation (create, unlock and its back-off and re-wrap writes, change password, restore, key and
 * grant writes, the session transitions, lock) runs alone (`exclusive`, `lib/vault/records.ts`).
 * Password checks hold the chain while the KDF runs (about a second with the default cost); reads queued
 * behind one wait for it. The keys a granted order reads are answered from memory instead, while that is
 * provably what a read through the chain would return (`lib/vault/held-keys.ts`).
 *
 * Password checks and the master key's wrap: `lib/vault/keys.ts`.
 */
import {
  DEFAULT_KDF,
  DEFAULT_KDF_BOUNDS,
  importMasterKey,
  kdfWeaker,
  open,
  randomBytes,
  seal,
  type KdfBounds,
  type KdfParams,
} from './crypto';
import { readMeta, type VaultMeta } from './db';
import { vaultWrite } from './copy';
import { VaultOpenedKeys } from './opened-keys';
import { VaultCopyExistsError, VaultExistsError, VaultNotInitializedError, WeakPasswordError } from './errors';
import {
  checkPassword,
  checkVerifier,
  deriveAuditRaw,
  importSessionKey,
  MIN_PASSWORD_LENGTH,
  newVaultMeta,
  rewrap,
  type ChangePasswordHooks,
  type Unwrapped,
} from './keys';
import { b64, dec, digestOf, enc, GRANT_PREFIX, unb64, type RecordsOptions } from './records';
import { keptBundle, SESSION_AAD, type SessionBundle } from './trading-session';

/** The vault's state (see the module docstring): nothing usable, a trading session, or everything. */
export type VaultState = 'locked' | 'session' | 'unlocked';

/**
 * `db` the vault database; `session` where the session keys live (`storage.session`; memory in tests); `now` Unix ms
 * clock; `kdf` for new wraps; `bounds` for stored KDF parameters.
 */
export type VaultOptions = RecordsOptions & {
  kdf?: KdfParams;
  bounds?: KdfBounds;
};

/**
 * The vault's states and password (see the module docstring); `Vault` (`lib/vault/vault.ts`) adds the
 * keys. Errors: `lib/vault/errors.ts` and `lib/vault/crypto.ts`.
 */
export class VaultSession extends VaultOpenedKeys {
  private auditCache: { of: CryptoKey; key: CryptoKey } | undefined;
  readonly kdf: KdfParams;
  readonly bounds: KdfBounds;

  constructor(o: VaultOptions) {
    super(o);
    this.kdf = o.kdf ?? DEFAULT_KDF;
    this.bounds = o.bounds ?? DEFAULT_KDF_BOUNDS;
  }

  /**
   * `{ initialized, unlocked, state, retryAfterMs, recoverable }`, no secrets. `retryAfterMs`: the back-off left.
   * `recoverable` (read while locked): the vault is missing or older than its copy (`./copy.ts`), which the next unlock
   * restores; `initialized` is then true (never onboarding over a copy).
   */
  async status(): Promise<{
    initialized: boolean;
    unlocked: boolean;
    state: VaultState;
    retryAfterMs: number;
    recoverable: boolean;
  }> {
    const [meta, backoff] = await Promise.all([this.meta(), readMeta(this.db, 'backoff')]);
    const recoverable = this.state === 'locked' && (await this.copyToRestore()) !== undefined;
    return {
      initialized: !!meta || recoverable,
      unlocked: this.unlocked,
      state: this.state,
      retryAfterMs: Math.max(0, (backoff?.nextAllowedAt ?? 0) - this.now()),
      recoverable,
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

  /**
   * Creates a new vault protected by `password`. Throws `VaultExistsError`, `WeakPasswordError`. Leaves it unlocked.
   */
  async create(password: string): Promise<void> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    if (password.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    return this.exclusive(async () => {
      if (await this.meta()) throw new VaultExistsError();
      if (await this.copyToRestore()) throw new VaultCopyExistsError();
      const { meta, mk, salt } = await newVaultMeta(password, this.kdf, this.now());
      await this.bumpGeneration?.();
      await this.storeNewVault(meta);
      this.index = undefined;
      this.reset();
      const copyFailed = await this.afterKeyWriteOrUndo(
        () => this.metaOpensWith(mk),
        () => this.db.delete('meta', 'vault'),
      );
      await this.setUnlocked(mk, salt);
      if (copyFailed) throw copyFailed; // made and unlocked; the copy is written at the next start
    });
  }

  /** Enters 'unlocked' with `mk` (forgets any session key) and stores it in the session store. */
  protected async setUnlocked(mk: CryptoKey, salt: Uint8Array): Promise<void> {
    this.mk = mk;
    this.sk = undefined;
    this.bundle = undefined;
    const raw = new Uint8Array(await crypto.subtle.exportKey('raw', mk));
    await this.session.set({ mk: b64(raw), salt: b64(salt) });
    raw.fill(0);
  }

  /** `checkPassword` (`lib/vault/keys.ts`) on this vault's database. Call inside `exclusive` only. */
  protected checkPassword(meta: VaultMeta, password: string): Promise<Unwrapped> {
    return checkPassword(this.db, this.now, this.bounds, meta, password);
  }

  /**
   * Unlocks with `password`, from 'locked' or from 'session' (then the session's grants, with their uses,
   * become sealed records again and the bundle is deleted). Throws `VaultNotInitializedError`,
   * `UnlockBackoffError` (too soon after a failure — nothing is derived), `WrongPasswordError` (with the
   * next delay; the state does not change), `KdfParamsError`. When the vault's KDF cost is below the
   * current default it is re-wrapped with the default.
   */
  async unlock(password: string): Promise<void> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    return this.exclusive(async () => {
      const fromCopy = this.state === 'locked' ? await this.copyToRestore() : undefined;
      if (fromCopy) return this.restoredFromCopy(fromCopy, password);
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const { mk, raw } = await this.checkPassword(meta, password);
      try {
        const weaker = kdfWeaker(meta.kdf, this.kdf);
        if (weaker) await this.bumpGeneration?.();
        const salt = weaker ? await vaultWrite(() => rewrap(this.db, meta, raw, password, this.kdf)) : meta.salt;
        const copyFailed = weaker ? await this.afterKeyWriteSettled(() => this.metaOpensWith(mk)) : undefined;
        if (this.bundle) await this.leaveSession(mk, this.bundle);
        this.index = undefined;
        await this.setUnlocked(mk, salt);
        if (copyFailed) throw copyFailed; // unlocked; the re-wrapped copy is written at the next start
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
    const recs = await Promise.all(
      bundle.grants.map((g) => this.sealRecord(mk, 'grant', `${GRANT_PREFIX}${g.grant.id}`, g.grant.account, {}, g)),
    );
    await this.commit(mk, recs, [], { delMeta: ['session'], loose: await this.resealLoose(this.looseKey(), mk) });
  }

  /**
   * Restores the state that was live before a worker restart, from the session store: 'unlocked' (the
   * master key opens the verifier) or 'session' (the session key opens the bundle). Returns true when the
   * vault is (now) unlocked or in a session. Returns false — and clears the session store and any
   * session bundle — when nothing is stored (a browser restart), the vault's salt changed, or nothing opens.
   */
  async restoreSession(): Promise<boolean> {
    // Every page request and popup message calls this: while unlocked or in a session it changes nothing,
    // so the keys held in memory stay (clearing it here would send every granted order's key read
    // behind the grant's use write). Locked, nothing held can be served (a held key needs the live master
    // or session key) and a read queued before this call finds the vault locked, or unlocked by a call
    // queued before this one (then this one changes nothing): nothing to empty. Not emptying also lets the
    // restores every tab's first request starts side by side hold the kept keys (`since`: a change called
    // meanwhile, such as a lock, still stops them being held).
    if (this.state !== 'locked') return true;
    const since = this.heldKeys.since();
    return this.exclusive(async () => {
      if (this.state !== 'locked') return true;
      const s = await this.session.get();
      const meta = await this.meta();
      const fail = async () => {
        await this.session.clear();
        await this.dropLeftBundle();
        return false;
      };
      if (!s || !meta || typeof s.salt !== 'string' || s.salt !== b64(meta.salt)) return fail();
      try {
        if ('mk' in s && typeof s.mk === 'string') {
          const mk = await importMasterKey(unb64(s.mk));
          await checkVerifier(mk, meta);
          await this.dropLeftBundle(); // a bundle left by an interrupted transition: nobody can open it
          this.index = undefined;
          this.mk = mk;
          return true;
        }
        if ('sk' in s && typeof s.sk === 'string') {
          const rec = await readMeta(this.db, 'session');
          // Only the bundle last sealed in this browser session opens (an older copy put back is refused).
          if (!rec || !('bundle' in s) || typeof s.bundle !== 'string' || s.bundle !== digestOf(rec.sealed))
            return fail();
          const sk = await importSessionKey(unb64(s.sk));
          const bundle = dec<SessionBundle>(await open(sk, rec.sealed, SESSION_AAD));
          if (bundle.v !== 1) return fail();
          this.sk = sk;
          this.bundle = bundle;
          this.bundleDigest = s.bundle;
          this.holdKept(since);
          return true;
        }
      } catch {
        /* fall through: nothing opens */
      }
      return fail();
    });
  }

  /**
   * Deletes a session bundle left in `meta/session` that no state opens; with none there nothing is
   * written (a worker's start reads only). Call inside `exclusive`.
   */
  private async dropLeftBundle(): Promise<void> {
    if ((await this.db.getKey('meta', 'session')) !== undefined) await this.db.delete('meta', 'session');
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
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    this.keyEnds.locks++; // before queuing: a proxy key read before this call signs nothing after it
    return this.exclusive(async () => {
      const mk = this.mk;
      this.mk = undefined;
      this.sk = undefined;
      this.bundle = undefined;
      this.signers.clear();
      this.heldKeys.clear();
      this.reset();
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
   * Auto-lock while standing grants are live: keeps only what the live grants need and
   * forgets the master key. Requires 'unlocked' (else `VaultLockedError`). `accounts`: the accounts of
   * the live grants. Kept: those accounts' unexpired proxy keys (with their secret), their CLOB API
   * credentials and deposit-wallet builder credentials, every grant record with its uses, and the audit MAC key —
   * re-sealed under a fresh random session key (bundle in `meta/session`, key in the session store); the grant records
   * leave the `secrets` store in the same transaction. The master key is dropped from memory and from the session
   * store. Throws `TamperedRecordError` / `DecryptError` when a record to keep does not open; then the state is
   * unchanged ('unlocked') and the caller should `lock()`.
   */
  async enterTradingSession(o: { accounts: string[] }): Promise<void> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    const since = this.heldKeys.since();
    return this.exclusive(async () => {
      const mk = this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const keep = new Set(o.accounts.map((a) => a.toLowerCase()));
      const now = this.now();
      const all = await this.db.getAll('secrets');
      const bundle = await keptBundle(all, keep, now, <T>(id: string) => this.read<T>(id));
      const auditRaw = await deriveAuditRaw(mk);
      bundle.auditKey = b64(auditRaw);
      auditRaw.fill(0);
      const skRaw = randomBytes(32);
      const sk = await importSessionKey(skRaw);
      const sealed = await seal(sk, enc(bundle), SESSION_AAD);
      // The session store first: a crash before the bundle is written restores nothing (locked), never
      // a master key beside a half-made session.
      const digest = digestOf(sealed);
      await this.session.set({ sk: b64(skRaw), salt: b64(meta.salt), bundle: digest });
      skRaw.fill(0);
      try {
        const grantIds = all.filter((r) => r.kind === 'grant').map((r) => r.id);
        await this.commit(mk, [], grantIds, {
          putMeta: [{ id: 'session', sealed }],
          dropIndexPrefix: GRANT_PREFIX,
          loose: await this.resealLoose(mk, sk),
        });
      } catch (err) {
        await this.setUnlocked(mk, meta.salt).catch(() => undefined);
        throw err;
      }
      this.mk = undefined;
      this.index = undefined;
      this.signers.clear(); // owner keys opened while unlocked must not outlive the master key
      this.heldKeys.clear();
      this.sk = sk;
      this.bundle = bundle;
      this.bundleDigest = digest;
      // the clear just above is this call's own; any other means a change was called meanwhile
      this.holdKept(since + 1);
    });
  }

  /**
   * Changes the password: re-wraps only the master key (records stay as they are) in one IndexedDB
   * transaction, so a crash before commit leaves the old password working. The old password goes
   * through the back-off. The state does not change: locked stays locked, unlocked stays unlocked, a
   * trading session stays a trading session. Throws `WrongPasswordError`, `UnlockBackoffError` (old
   * password), `WeakPasswordError`, `VaultNotInitializedError`.
   */
  async changePassword(oldPassword: string, newPassword: string, hooks: ChangePasswordHooks = {}): Promise<void> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    if (newPassword.length < MIN_PASSWORD_LENGTH) throw new WeakPasswordError();
    return this.exclusive(async () => {
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      const { mk, raw } = await this.checkPassword(meta, oldPassword);
      try {
        await this.bumpGeneration?.();
        const salt = await vaultWrite(() => rewrap(this.db, meta, raw, newPassword, this.kdf, hooks));
        const copyFailed = await this.afterKeyWriteOrUndo(
          () => this.passwordOpens(newPassword, mk, this.bounds),
          () => this.db.put('meta', meta),
        );
        // The session store names the vault's salt: keep it current for whichever state is live (also when
        // only the copy failed: the new password holds; the copy is written at the next start).
        if (this.mk) await this.setUnlocked(this.mk, salt);
        else if (this.sk) {
          const skRaw = new Uint8Array(await crypto.subtle.exportKey('raw', this.sk));
          await this.session.set({ sk: b64(skRaw), salt: b64(salt), bundle: this.bundleDigest ?? '' });
          skRaw.fill(0);
        }
        if (copyFailed) throw copyFailed;
      } finally {
        raw.fill(0);
      }
    });
  }

  // ------------------------------------------------------------------------------------------
  // The audit chain's key

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
    const raw = this.mk ? await deriveAuditRaw(this.mk) : this.bundle ? unb64(this.bundle.auditKey) : undefined;
    if (!raw) return undefined;
    try {
      const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
        'verify',
      ]);
      this.auditCache = { of, key };
      return key;
    } finally {
      raw.fill(0);
    }
  }
}
