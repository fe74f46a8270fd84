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
        ? 'A trading session is running: only the standing permissions\' keys are open. Enter your password to do this.'
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
/** A password check failed (unlock, reveal, change password, backup restore). `retryAfterMs`: the back-off before the next try. */
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
  static override readonly code = 4100; // not authorised for this account: nothing to sign with (never a code a client retries)
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
