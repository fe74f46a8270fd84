/**
 * The vault's second copy in the vault's class chain (`VaultRecords` → `VaultCopied` → `VaultOpenedKeys` →
 * `VaultSession` → `VaultBackup` → `Vault`; the copy itself: `./copy.ts`): the generation every
 * key-material write carries (`nextGeneration` in the write's transaction, `bumpGeneration` before a write
 * of its own), the read-back checks (`metaOpensWith`, `passwordOpens`) and the copy after the write
 * (`afterKeyWrite`); whether the vault should be restored from its copy (`copyToRestore`); the copy
 * written again at start (`refreshCopy`); a new vault's metadata stored (`storeNewVault`). `copyMeta` and
 * `restoreFromCopy` are stubs here: `VaultBackup` (`./backup.ts`) implements them with its backup parser
 * and restore.
 */
import { checkPassword, checkVerifier } from './keys';
import type { KdfBounds } from './crypto';
import { readMeta, type VaultMeta } from './db';
import { readVaultCopy, sameVault, snapshotVault, vaultWrite, type VaultCopy, type VaultCopyStore } from './copy';
import { digestOf, VaultRecords, type RecordsOptions } from './records';
import {
  VaultCopyError,
  VaultExistsError,
  VaultNotInitializedError,
  VaultReadBackError,
  VaultWriteError,
} from './errors';

/**
 * Whether `meta` has the shape a vault writes (a KDF, a 16-byte salt, a wrapped key and a verifier, each IV and
 * ciphertext bytes).
 */
function readableMeta(meta: VaultMeta): boolean {
  const sealed = (s: unknown) =>
    typeof s === 'object' &&
    s !== null &&
    'iv' in s &&
    'ct' in s &&
    s.iv instanceof Uint8Array &&
    s.ct instanceof Uint8Array &&
    s.iv.length > 0 &&
    s.ct.length > 0;
  return (
    typeof meta.kdf === 'object' &&
    meta.kdf !== null &&
    meta.salt instanceof Uint8Array &&
    meta.salt.length === 16 &&
    sealed(meta.wrapped) &&
    sealed(meta.verifier)
  );
}

/** A vault's sealed records with its second copy (see the module docstring). */
export class VaultCopied extends VaultRecords {
  /** Where the second copy lives (`./copy.ts`), if one is kept. */
  protected readonly copyStore: VaultCopyStore | undefined;
  /** The vault was restored from its copy since `takeStorageLost` was last called. */
  private storageLost = false;

  /**
   * Whether an unlock restored the vault from its second copy since the last call (then cleared): the
   * browser had discarded or rolled back the database, and what only the database held — the audit log,
   * the journal of what was in flight, keyed submissions' records, connections — may be gone.
   */
  takeStorageLost(): boolean {
    const lost = this.storageLost;
    this.storageLost = false;
    return lost;
  }

  /** `restoreFromCopy`, noting the loss for `takeStorageLost`. Call inside `exclusive`. */
  protected async restoredFromCopy(copy: VaultCopy, password: string): Promise<void> {
    await this.restoreFromCopy(copy, password);
    this.storageLost = true;
  }

  constructor(o: RecordsOptions) {
    super(o);
    this.copyStore = o.copy;
  }

  protected async meta(): Promise<VaultMeta | undefined> {
    return readMeta(this.db, 'vault');
  }

  /** The vault's generation (0 before its first key-material write). */
  private async generation(): Promise<number> {
    return (await readMeta(this.db, 'generation'))?.n ?? 0;
  }

  /** See `VaultRecords.nextGeneration`: the generation after this one, while a copy is kept. */
  protected override async nextGeneration(): Promise<number | undefined> {
    return this.copyStore ? (await this.generation()) + 1 : undefined;
  }

  /**
   * See `VaultRecords.bumpGeneration`: the next generation stored before a write of its own transaction,
   * so the vault's generation is never below what it holds (a crash between the two leaves a vault newer
   * than its copy, which `refreshCopy` copies). Throws `VaultWriteError` (nothing was saved).
   */
  protected override async bumpGeneration(): Promise<void> {
    const n = await this.nextGeneration();
    if (n !== undefined) await vaultWrite(() => this.db.put('meta', { id: 'generation', n }));
  }

  /**
   * After a write of key material (call inside `exclusive`, once the write's transaction, which stored
   * the new generation, is done): checks that what was written reads back and opens (`readBack`, e.g. the
   * verifier with the master key, each record put with its key), then writes the second copy at the
   * vault's generation (`./copy.ts`). Throws `VaultCopyError` (the copy could not be written: the change
   * holds), and what `readBack` throws (`VaultReadBackError`: the copy is left as it was).
   */
  protected override async afterKeyWrite(readBack: () => Promise<void>): Promise<void> {
    if (!this.copyStore) return;
    const n = await this.generation();
    await readBack();
    const copy = await snapshotVault(this.db, n, this.now());
    if (!copy) return;
    try {
      await this.copyStore.set(copy);
    } catch (err) {
      throw new VaultCopyError(err);
    }
  }

  /**
   * `afterKeyWrite`, returning (not throwing) a `VaultCopyError`: the caller settles its state (the change
   * holds) and then throws it. Other errors are thrown.
   */
  protected async afterKeyWriteSettled(readBack: () => Promise<void>): Promise<VaultCopyError | undefined> {
    try {
      await this.afterKeyWrite(readBack);
      return undefined;
    } catch (err) {
      if (err instanceof VaultCopyError) return err;
      throw err;
    }
  }

  /**
   * `afterKeyWriteSettled`, and when what was written does not read back, `undo` (the old state put back)
   * and `VaultWriteError`: the person is told nothing was saved, which is then true.
   */
  protected async afterKeyWriteOrUndo(
    readBack: () => Promise<void>,
    undo: () => Promise<unknown>,
  ): Promise<VaultCopyError | undefined> {
    try {
      return await this.afterKeyWriteSettled(readBack);
    } catch (err) {
      if (!(err instanceof VaultReadBackError)) throw err;
      await vaultWrite(undo);
      throw new VaultWriteError(err);
    }
  }

  /**
   * The second copy when the vault should be restored from it: the vault is missing, its metadata is
   * unreadable (not the shape a vault writes: no password could open it), or its generation is below the copy's.
   */
  protected async copyToRestore(): Promise<VaultCopy | undefined> {
    if (!this.copyStore) return undefined;
    const copy = await readVaultCopy(this.copyStore);
    // A copy that does not parse is damaged: ignored, never trusted (nor blocking onboarding).
    const copied = copy && this.copyMeta(copy);
    if (!copy || !copied) return undefined;
    const [meta, generation] = await Promise.all([this.meta(), readMeta(this.db, 'generation')]);
    if (!meta || !readableMeta(meta)) return copy;
    // Another vault's copy (its master key's verifier differs; a password change keeps it): never restored over this
    // one.
    if (digestOf(meta.verifier) !== digestOf(copied.verifier)) return undefined;
    return (generation?.n ?? 0) < copy.generation ? copy : undefined;
  }

  /** The vault metadata in `copy`, or undefined when it does not parse (the vault class implements it). */
  protected copyMeta(_copy: VaultCopy): VaultMeta | undefined {
    return undefined;
  }

  /**
   * Start-up work: writes the second copy when there is none or it is damaged, when the vault is newer
   * than it (a write whose copy failed, a crash between the two), or at the same generation when only the
   * settings changed. Never replaces a copy whose records differ at the same generation or that is
   * another vault's (what the vault holds then cannot be proven while locked: the next key-material write
   * of an unlocked vault replaces it), nor one the next unlock restores; writes nothing without a vault.
   * Throws `VaultCopyError`.
   */
  async refreshCopy(): Promise<void> {
    const store = this.copyStore;
    if (!store) return;
    return this.exclusive(async () => {
      const [copy, n, meta] = await Promise.all([readVaultCopy(store), this.generation(), this.meta()]);
      const copied = copy && this.copyMeta(copy);
      if (copy && copied) {
        if (copy.generation > n || !meta || digestOf(meta.verifier) !== digestOf(copied.verifier)) return;
      }
      const now = await snapshotVault(this.db, n, this.now());
      if (!now) return;
      if (copy && copied && copy.generation === n && (sameVault(copy, now) || copy.backup !== now.backup)) return;
      await store.set(now).catch((err: unknown) => {
        throw new VaultCopyError(err);
      });
    });
  }

  /** Restores the vault from `copy` with `password` (the vault class implements it; inside `exclusive`). */
  protected restoreFromCopy(_copy: VaultCopy, _password: string): Promise<void> {
    return Promise.reject(new VaultNotInitializedError());
  }

  /**
   * Reads the vault metadata back and opens its verifier with `mk` (a write's read-back check). Throws
   * `VaultReadBackError`.
   */
  protected async metaOpensWith(mk: CryptoKey): Promise<void> {
    const meta = await this.meta();
    if (!meta) throw new VaultReadBackError();
    await checkVerifier(mk, meta).catch(() => {
      throw new VaultReadBackError();
    });
  }

  /**
   * Stores a new vault's metadata (`VaultExistsError` when one appeared meanwhile; `VaultWriteError` when the browser
   * refuses). Call inside `exclusive`.
   */
  protected async storeNewVault(meta: VaultMeta): Promise<void> {
    await vaultWrite(async () => {
      const tx = this.db.transaction('meta', 'readwrite');
      if (await tx.store.get('vault')) {
        tx.abort();
        throw new VaultExistsError();
      }
      await tx.store.put(meta);
      await tx.done;
    });
  }

  /**
   * A password change's read-back check: the stored wrap opens with `password` (under `bounds`) to the master key `mk`.
   * Throws `VaultReadBackError`.
   */
  protected async passwordOpens(password: string, mk: CryptoKey, bounds: KdfBounds): Promise<void> {
    const back = await this.meta();
    if (!back) throw new VaultReadBackError();
    try {
      const reopened = await checkPassword(this.db, this.now, bounds, back, password);
      reopened.raw.fill(0);
      await checkVerifier(mk, back);
    } catch {
      throw new VaultReadBackError();
    }
  }
}
