/**
 * Backup and restore in the vault's class chain (`VaultRecords` → `VaultCopied` → `VaultOpenedKeys` →
 * `VaultSession` → `VaultBackup` → `Vault`): the encrypted backup file (its format, `exportBackup`,
 * `restoreBackup`) and the restore from the vault's second copy (`copyMeta`, `restoreFromCopy`), both
 * through `replaceWith`. The copy itself: `./copy.ts`. Background only.
 */
import * as v from 'valibot';
import { checkKdfParams, KdfParamsError, open, recordAad, type Sealed } from './crypto';
import type { SecretRecord, VaultMeta } from './db';
import { BackupInvalidError, VaultLockedError, VaultNotInitializedError } from './errors';
import { unb64 } from './records';
import { VaultSession } from './session';
import { backupJsonOf, vaultWrite, type VaultCopy } from './copy';

const unsealed = (s: { iv: string; ct: string }): Sealed => ({ iv: unb64(s.iv), ct: unb64(s.ct) });

/** A sealed value in a backup: IV and ciphertext, base64. */
const sealedJsonSchema = v.object({ iv: v.string(), ct: v.string() });
/** The backup file (`exportBackup`): format tag, version 1, vault metadata and every sealed record. */
const backupSchema = v.object({
  format: v.literal('countersign-backup'),
  version: v.literal(1),
  meta: v.object({
    kdf: v.unknown(),
    salt: v.string(),
    wrapped: sealedJsonSchema,
    verifier: sealedJsonSchema,
    createdAt: v.number(),
  }),
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

/**
 * The vault's states and password (`VaultSession`) with backup and restore (see the module docstring);
 * `Vault` (`./vault.ts`) adds the keys. Errors: `./errors.ts` and `./crypto.ts`.
 */
export class VaultBackup extends VaultSession {
  /**
   * An encrypted backup: the vault metadata (KDF, salt, wrapped master key, verifier) and every sealed
   * record, as JSON. Useless without the password. Requires 'unlocked' (so a person proves presence).
   */
  async exportBackup(): Promise<string> {
    return this.exclusive(async () => {
      this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      return backupJsonOf(meta, await this.db.getAll('secrets'));
    });
  }

  /**
   * Restores a backup into this profile (replacing any vault here) after checking `password` opens it;
   * the password goes through the back-off. A vault already here is replaced only while it is unlocked
   * (the person proved presence with its password): locked or in a trading session, `VaultLockedError`
   * before anything is read or counted. Throws `BackupInvalidError`, `WrongPasswordError`,
   * `UnlockBackoffError`, `KdfParamsError`. Leaves the vault unlocked.
   */
  async restoreBackup(json: string, password: string): Promise<void> {
    // before the held keys end: the session's orders go on
    if (this.state === 'session') throw new VaultLockedError({ inSession: true });
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    this.keyEnds.proxies++; // before queuing: a proxy key read before this call signs nothing after it
    const { meta, secrets } = this.parseBackup(json);
    return this.exclusive(async () => {
      if (this.state !== 'unlocked' && (await this.meta()))
        throw new VaultLockedError({ inSession: this.state === 'session' });
      await this.replaceWith(meta, secrets, password);
    });
  }

  /** The vault metadata and sealed records of a backup (JSON text). Throws `BackupInvalidError`, `KdfParamsError`. */
  private parseBackup(json: string): { meta: VaultMeta; secrets: SecretRecord[] } {
    try {
      const b = v.parse(backupSchema, JSON.parse(json));
      const meta: VaultMeta = {
        id: 'vault',
        kdf: checkKdfParams(b.meta.kdf, this.bounds),
        salt: unb64(b.meta.salt),
        wrapped: unsealed(b.meta.wrapped),
        verifier: unsealed(b.meta.verifier),
        createdAt: b.meta.createdAt,
      };
      const secrets: SecretRecord[] = b.secrets.map((r) => ({
        id: r.id,
        kind: r.kind,
        account: r.account,
        meta: r.meta,
        sealed: unsealed(r.sealed),
        createdAt: r.createdAt,
      }));
      return { meta, secrets };
    } catch (err) {
      if (err instanceof KdfParamsError) throw err;
      throw new BackupInvalidError();
    }
  }

  /**
   * Replaces this profile's vault with `meta` and `secrets` once `password` opens them (every record
   * too: `BackupInvalidError`), in one transaction (`generation`, when given, is stored with it), then the
   * second copy; leaves the vault unlocked. Call inside `exclusive`. Throws `WrongPasswordError`,
   * `UnlockBackoffError`, `BackupInvalidError`, `VaultWriteError`, `VaultCopyError`.
   */
  private async replaceWith(
    meta: VaultMeta,
    secrets: readonly SecretRecord[],
    password: string,
    o: { generation?: number; settings?: unknown } = {},
  ): Promise<void> {
    const unwrapped = await this.checkPassword(meta, password);
    try {
      for (const r of secrets) {
        await open(unwrapped.mk, r.sealed, recordAad('secrets', r.id, r.account)).catch(() => {
          throw new BackupInvalidError();
        });
      }
      this.keyWrites++; // the owners and proxies held in memory end here (and again once written)
      if (o.generation === undefined) await this.bumpGeneration?.();
      await vaultWrite(async () => {
        const tx = this.db.transaction(['meta', 'secrets', 'settings'], 'readwrite');
        await tx.objectStore('secrets').clear();
        await tx.objectStore('meta').put(meta);
        await tx.objectStore('meta').put({ id: 'backoff', failures: 0, nextAllowedAt: 0 });
        // The restored records are trusted (the person restored them): the index is rebuilt from them.
        await tx.objectStore('meta').delete('index');
        await tx.objectStore('meta').delete('session');
        if (o.generation !== undefined) await tx.objectStore('meta').put({ id: 'generation', n: o.generation });
        // A copy's settings fill a profile that lost its own (a vault that was only rolled back keeps them).
        if (o.settings !== undefined && (await tx.objectStore('settings').get('prefs')) === undefined)
          await tx.objectStore('settings').put(o.settings, 'prefs');
        for (const r of secrets) await tx.objectStore('secrets').put(r);
        await tx.done;
      });
      this.keyWrites++;
      this.index = undefined;
      this.reset();
      // The vault is replaced: whatever the copy does, the live key is the restored one from here on.
      const copyFailed =
        o.generation === undefined
          ? await this.afterKeyWriteSettled(() => this.metaOpensWith(unwrapped.mk))
          : undefined;
      await this.setUnlocked(unwrapped.mk, meta.salt);
      if (copyFailed) throw copyFailed;
    } finally {
      unwrapped.raw.fill(0);
    }
  }

  /** The vault metadata of `copy` (its backup parsed), or undefined when it does not parse (a damaged copy). */
  protected override copyMeta(copy: VaultCopy): VaultMeta | undefined {
    try {
      return this.parseBackup(copy.backup).meta;
    } catch {
      return undefined;
    }
  }

  /**
   * Restores the vault from its second copy with `password` (`VaultSession.unlock`, while the vault is
   * missing or older than the copy; inside `exclusive`): the copy's records, generation and, where this
   * profile has none, settings. Throws as `replaceWith`.
   */
  protected override async restoreFromCopy(copy: VaultCopy, password: string): Promise<void> {
    this.heldKeys.clear();
    this.keyEnds.proxies++;
    const { meta, secrets } = this.parseBackup(copy.backup);
    await this.replaceWith(meta, secrets, password, { generation: copy.generation, settings: copy.settings });
  }
}
