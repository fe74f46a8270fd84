/** Typed errors of the vault (names `Vault.*`; only `{ name, shortMessage, code? }` leaves the background). */
import { BaseError } from '../errors/base';

/**
 * The vault cannot do this in its current state: it is locked, or (`inSession`) a trading session keeps
 * only what the live standing permissions need, and this needs the password.
 */
export class VaultLockedError extends BaseError {
  override name = 'Vault.LockedError';
  static override readonly code = 4900;
  constructor(o: { inSession?: boolean } = {}) {
    super(
      o.inSession
        ? "A trading session is running: only the standing permissions' keys are open. Enter your password to do this."
        : 'The vault is locked. Unlock it to continue.',
    );
  }
}
/** No vault exists in this profile yet (create one first). */
export class VaultNotInitializedError extends BaseError {
  override name = 'Vault.NotInitializedError';
  /** EIP-1193 4900 "disconnected": no vault, nothing can be served until one is created. */
  static override readonly code: number | undefined = 4900;
  constructor() {
    super('No vault exists yet. Create one first.');
  }
}
/** `create` was called while a vault already exists in this profile. */
export class VaultExistsError extends BaseError {
  override name = 'Vault.ExistsError';
  constructor() {
    super('A vault already exists in this profile.');
  }
}
/**
 * A password check failed (unlock, reveal, change password, backup restore). `retryAfterMs`: the back-off before the
 * next try.
 */
export class WrongPasswordError extends BaseError {
  override name = 'Vault.WrongPasswordError';
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super(`Wrong password. Try again in ${Math.ceil(retryAfterMs / 1000)} s.`, { data: { retryAfterMs } });
    this.retryAfterMs = retryAfterMs;
  }
}
/** A password check came too soon after a wrong password; nothing was derived. `retryAfterMs`: time left. */
export class UnlockBackoffError extends BaseError {
  override name = 'Vault.UnlockBackoffError';
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super(`Too many wrong passwords. Try again in ${Math.ceil(retryAfterMs / 1000)} s.`, { data: { retryAfterMs } });
    this.retryAfterMs = retryAfterMs;
  }
}
/** A new password is shorter than `MIN_PASSWORD_LENGTH` (8) characters. */
export class WeakPasswordError extends BaseError {
  override name = 'Vault.WeakPasswordError';
  constructor() {
    super('The password must be at least 8 characters.');
  }
}
/** `putProxy`: the private key does not belong to the given proxy address. */
export class ProxyKeyMismatchError extends BaseError {
  override name = 'Vault.ProxyKeyMismatchError';
  constructor() {
    super('The proxy private key does not belong to the given proxy address.');
  }
}
/** No record of the asked kind (`what`: owner key, proxy key, API credentials…) is stored for the account. */
export class KeyNotFoundError extends BaseError {
  override name = 'Vault.KeyNotFoundError';
  // not authorised for this account: nothing to sign with (never a code a client retries)
  static override readonly code = 4100;
  constructor(what: string) {
    super(`No ${what} is stored for this account.`);
  }
}
/** `restoreBackup`: the file is not a Countersign backup (format, version, fields) or a record does not open. */
export class BackupInvalidError extends BaseError {
  override name = 'Vault.BackupInvalidError';
  constructor() {
    super('This file is not a Countersign backup, or it is damaged.');
  }
}

/** A stored record does not match the vault's sealed index: changed, replaced by an older copy, or injected. */
export class TamperedRecordError extends BaseError {
  override name = 'Vault.TamperedRecordError';
  static override readonly code = -32003; // refused, nothing signed (never -32603, which clients retry)
  constructor() {
    super('A stored key record was changed or rolled back. Nothing was signed; restore from your backup.');
  }
}

// The second copy and storage failures (`./copy.ts`).

/**
 * Thrown when the browser refused a vault write (a full disk, the storage quota, an IndexedDB error):
 * nothing of that change was stored and the vault is as it was. `data.cause`: the browser's error name.
 */
export class VaultWriteError extends BaseError {
  override name = 'Vault.VaultWriteError';
  constructor(cause: unknown) {
    const name = errorName(cause);
    const full = name === 'QuotaExceededError';
    super(
      `Nothing was saved: ` +
        (full
          ? 'the disk is full or the browser’s storage quota is reached. '
          : 'the browser refused to write the vault. ') +
        `Your vault is as it was; free some disk space and try again.`,
      { cause, data: { cause: name } },
    );
  }
}

/**
 * Thrown when a change was stored in the vault but its second copy could not be written (`data.cause`:
 * the browser's error name). The change holds; the copy is written again at the next change or start.
 */
export class VaultCopyError extends BaseError {
  override name = 'Vault.VaultCopyError';
  constructor(cause: unknown) {
    const name = errorName(cause);
    super(
      'Saved in the vault, but its second copy (kept in case the browser loses the vault) could not ' +
        'be written. Free some disk space: Countersign writes it again at the next change or start.',
      { cause, data: { cause: name } },
    );
  }
}

/**
 * Thrown when a key-material change was written but does not read back as written (a record missing,
 * different or not opening with its key): the browser's storage may be damaged. The second copy is not
 * updated from it.
 */
export class VaultReadBackError extends BaseError {
  override name = 'Vault.VaultReadBackError';
  constructor() {
    super(
      'The change was written but did not read back as written: the browser’s storage may ' +
        'be damaged. Its copy was left as it was; export a backup and restart the browser.',
    );
  }
}

/**
 * Thrown by `Vault.create` while a copy of an earlier vault exists: unlock it with its password instead (nothing
 * replaces a vault with an empty one).
 */
export class VaultCopyExistsError extends BaseError {
  override name = 'Vault.VaultCopyExistsError';
  constructor() {
    super('A copy of your vault was found: unlock with your password to restore it. A new vault would replace it.');
  }
}

/**
 * Thrown when the browser closed the vault's database under Countersign (Chromium does after a write
 * fails on a full disk, and may discard the database at its next start): nothing can be read or saved
 * until the browser restarts. `data.cause`: the browser's error name.
 */
export class VaultStorageClosedError extends BaseError {
  override name = 'Vault.VaultStorageClosedError';
  constructor(cause: unknown) {
    super(
      'Nothing was saved: the browser closed Countersign’s storage after a ' +
        'write failed (is the disk full?). Free some disk space and restart the browser; ' +
        'if the browser lost the vault, unlocking restores it from its copy.',
      { cause, data: { cause: errorName(cause) } },
    );
  }
}

/** The name of a thrown value (`DOMException` or `Error`), else `Error`. */
export function errorName(err: unknown): string {
  return typeof err === 'object' && err !== null && 'name' in err && typeof err.name === 'string' ? err.name : 'Error';
}
