/**
 * The vault's second copy in the vault's class chain (`VaultRecords` → `VaultCopied` → `VaultSession` →
 * `Vault`; the copy itself: `./copy.ts`): after each write of key material the generation, the read-back
 * check and the copy (`afterKeyWrite`); whether the vault should be restored from its copy
 * (`copyToRestore`); the copy written again at start (`refreshCopy`).
 */
import { checkPassword, checkVerifier } from './keys';
import type { KdfBounds } from './crypto';
import { readMeta, type VaultMeta } from './db';
import { readVaultCopy, sameVault, snapshotVault, VaultCopyError, VaultWriteError, vaultWrite, type VaultCopy, type VaultCopyStore } from './copy';
import { digestOf, VaultRecords, type RecordsOptions } from './records';
import { VaultExistsError, VaultNotInitializedError } from './errors';

/** A vault's sealed records with its second copy (see the module docstring). */
export class VaultCopied extends VaultRecords {
  /** Where the second copy lives (`./copy.ts`), if one is kept. */
  protected readonly copyStore: VaultCopyStore | undefined;

  constructor(o: RecordsOptions) {
    super(o);
    this.copyStore = o.copy;
  }

  protected async meta(): Promise<VaultMeta | undefined> {
    return readMeta(this.db, 'vault');
  }

  /**
   * After a write of key material (call inside `exclusive`, once the write's transaction is done): bumps
   * the vault's generation, checks that what was written reads back and opens (`readBack`, e.g. the
   * verifier with the master key, each record put with its key), then writes the second copy at that
   * generation (`./copy.ts`). Throws `VaultWriteError` (the generation could not be stored),
   * `VaultCopyError` (the copy could not be written: the change holds), and what `readBack` throws.
   */
  protected override async afterKeyWrite(readBack: () => Promise<void>): Promise<void> {
    if (!this.copyStore) return;
    const n = ((await readMeta(this.db, 'generation'))?.n ?? 0) + 1;
    // The change itself is stored by now: a refused generation write is the copy failing, not "nothing saved"
    // (the vault then differs from its copy at the same generation, which `refreshCopy` rewrites).
    try {
      await this.db.put('meta', { id: 'generation', n });
    } catch (err) {
      throw new VaultCopyError(err);
    }
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

  /** The second copy when the vault should be restored from it: the vault is missing, or its generation is below the copy's. */
  protected async copyToRestore(): Promise<VaultCopy | undefined> {
    if (!this.copyStore) return undefined;
    const copy = await readVaultCopy(this.copyStore);
    // A copy that does not parse is damaged: ignored, never trusted (nor blocking onboarding).
    const copied = copy && this.copyMeta(copy);
    if (!copy || !copied) return undefined;
    const [meta, generation] = await Promise.all([this.meta(), readMeta(this.db, 'generation')]);
    if (!meta) return copy;
    // Another vault's copy (its master key's verifier differs; a password change keeps it): never restored over this one.
    if (digestOf(meta.verifier) !== digestOf(copied.verifier)) return undefined;
    return (generation?.n ?? 0) < copy.generation ? copy : undefined;
  }

  /** The vault metadata in `copy`, or undefined when it does not parse (the vault class implements it). */
  protected copyMeta(_copy: VaultCopy): VaultMeta | undefined {
    return undefined;
  }

  /**
   * Writes the second copy again when the vault is newer than it or differs at the same generation (a
   * write whose copy failed, a crash between the two), or when the copy is damaged or another vault's:
   * start-up work. Leaves a copy that is newer (the vault is restored from it at unlock) and writes
   * nothing without a vault. Throws `VaultCopyError`.
   */
  async refreshCopy(): Promise<void> {
    const store = this.copyStore;
    if (!store) return;
    return this.exclusive(async () => {
      // A copy the next unlock restores stays; a damaged one or another vault's is replaced.
      if (await this.copyToRestore()) return;
      const [copy, generation] = await Promise.all([readVaultCopy(store), readMeta(this.db, 'generation')]);
      const n = generation?.n ?? 0;
      const now = await snapshotVault(this.db, n, this.now());
      if (!now || (copy && copy.generation === n && sameVault(copy, now))) return;
      await store.set(now).catch((err: unknown) => {
        throw new VaultCopyError(err);
      });
    });
  }

  /** Restores the vault from `copy` with `password` (the vault class implements it; inside `exclusive`). */
  protected restoreFromCopy(_copy: VaultCopy, _password: string): Promise<void> {
    return Promise.reject(new VaultNotInitializedError());
  }

  /** Reads the vault metadata back and opens its verifier with `mk` (a write's read-back check). Throws `VaultWriteError`. */
  protected async metaOpensWith(mk: CryptoKey): Promise<void> {
    const meta = await this.meta();
    if (!meta) throw new VaultWriteError(new Error('the vault did not read back'));
    await checkVerifier(mk, meta).catch((err: unknown) => {
      throw new VaultWriteError(err);
    });
  }

  /** Stores a new vault's metadata (`VaultExistsError` when one appeared meanwhile; `VaultWriteError` when the browser refuses). Call inside `exclusive`. */
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

  /** A password change's read-back check: the stored wrap opens with `password` (under `bounds`) to the master key `mk`. Throws `VaultWriteError`, the password check's errors. */
  protected async passwordOpens(password: string, mk: CryptoKey, bounds: KdfBounds): Promise<void> {
    const back = await this.meta();
    if (!back) throw new VaultWriteError(new Error('the vault did not read back'));
    const reopened = await checkPassword(this.db, this.now, bounds, back, password);
    reopened.raw.fill(0);
    await checkVerifier(mk, back);
  }
}
