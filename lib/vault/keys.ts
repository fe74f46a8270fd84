/**
 * The vault's master key and its password: a new master key wrapped by the password's key (KDF), the
 * verifier that proves an unwrapped master key is the right one, every password check through the
 * persisted back-off, the re-wrap (password change, a stronger KDF), the trading session key's import and
 * the audit chain's MAC key derivation. Pure functions over the vault database; `VaultSession`
 * (`lib/vault/session.ts`) calls them inside its writer lock.
 *
 * ## Password back-off
 * Every password check — `unlock`, `revealOwnerKey`, `changePassword`, `restoreBackup` — goes through one
 * persisted back-off: wrong passwords wait 1 s, 2 s, 4 s … capped at 5 min; the counter and the next
 * allowed time are in IndexedDB (`meta/backoff`), so a worker restart does not reset them. Too soon →
 * `UnlockBackoffError` before anything is derived; wrong → `WrongPasswordError` with the next delay;
 * right → the counter resets. Checks are serialised, so concurrent guesses get one try per delay.
 */
import {
  checkKdfParams,
  DecryptError,
  deriveKek,
  importMasterKey,
  MASTER_KEY_AAD,
  open,
  randomBytes,
  seal,
  type KdfBounds,
  type KdfParams,
} from './crypto';
import { readMeta, type BackoffRecord, type VaultDb, type VaultMeta } from './db';
import { UnlockBackoffError, WrongPasswordError } from './errors';

const VERIFIER = new TextEncoder().encode('countersign-vault-verifier-v1');
const BACKOFF_CAP_MS = 5 * 60_000;
/** Shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 8;
/** HKDF-SHA256 `info` of the audit chain's MAC key (derived from the master key). */
const AUDIT_INFO = 'countersign/audit/v1';

/** Hooks for tests (simulating a crash between steps). */
export type ChangePasswordHooks = { beforeCommit?: () => void };

/** A master key and its raw bytes (the caller zeroes `raw` once done). */
export type Unwrapped = { mk: CryptoKey; raw: Uint8Array<ArrayBuffer> };

/**
 * A new vault's metadata: a random master key wrapped by `password`'s key (`kdf`, a random salt) and the
 * verifier sealed by it. Returns the metadata, the master key and the salt.
 */
export async function newVaultMeta(
  password: string,
  kdf: KdfParams,
  createdAt: number,
): Promise<{ meta: VaultMeta; mk: CryptoKey; salt: Uint8Array<ArrayBuffer> }> {
  const mkRaw = randomBytes(32);
  const mk = await importMasterKey(mkRaw);
  const salt = randomBytes(16);
  const kek = await deriveKek(password, salt, kdf);
  const meta: VaultMeta = {
    id: 'vault',
    kdf,
    salt,
    wrapped: await seal(kek, mkRaw, MASTER_KEY_AAD),
    verifier: await seal(mk, VERIFIER, 'verifier'),
    createdAt,
  };
  mkRaw.fill(0);
  return { meta, mk, salt };
}

/** Opens the verifier with `mk`: throws `DecryptError` when `mk` is not this vault's master key. */
export async function checkVerifier(mk: CryptoKey, meta: VaultMeta): Promise<void> {
  await open(mk, meta.verifier, 'verifier');
}

/**
 * Unwraps the master key with `password` (no state change). Throws `DecryptError` on a wrong password,
 * `KdfParamsError`.
 */
async function unwrap(meta: VaultMeta, password: string, bounds: KdfBounds): Promise<Unwrapped> {
  const kdf = checkKdfParams(meta.kdf, bounds);
  const kek = await deriveKek(password, meta.salt, kdf);
  const raw = await open(kek, meta.wrapped, MASTER_KEY_AAD);
  const mk = await importMasterKey(raw);
  await checkVerifier(mk, meta);
  return { mk, raw };
}

/**
 * Every password check (unlock, reveal, change password, backup restore): the persisted back-off,
 * then the unwrap. Throws `UnlockBackoffError` (too soon; nothing derived), `WrongPasswordError` (with
 * the next delay, counted in `meta/backoff`), `KdfParamsError` (not counted). A right password resets
 * the counter. Call inside the vault's writer lock only (so concurrent guesses cannot share one slot).
 */
export async function checkPassword(
  db: VaultDb,
  now: () => number,
  bounds: KdfBounds,
  meta: VaultMeta,
  password: string,
): Promise<Unwrapped> {
  const backoff: BackoffRecord = (await readMeta(db, 'backoff')) ?? { id: 'backoff', failures: 0, nextAllowedAt: 0 };
  const wait = backoff.nextAllowedAt - now();
  if (wait > 0) throw new UnlockBackoffError(wait);
  let unwrapped;
  try {
    unwrapped = await unwrap(meta, password, bounds);
  } catch (err) {
    if (!(err instanceof DecryptError)) throw err;
    const failures = backoff.failures + 1;
    const delay = Math.min(1000 * 2 ** (failures - 1), BACKOFF_CAP_MS);
    await db.put('meta', { id: 'backoff', failures, nextAllowedAt: now() + delay });
    throw new WrongPasswordError(delay);
  }
  if (backoff.failures > 0 || backoff.nextAllowedAt > 0)
    await db.put('meta', { id: 'backoff', failures: 0, nextAllowedAt: 0 });
  return unwrapped;
}

/**
 * Wraps the master key `mkRaw` again under `password` with `kdf` and a new salt, in one transaction
 * (`hooks.beforeCommit` throwing aborts it: the old wrap stays). Returns the new salt.
 */
export async function rewrap(
  db: VaultDb,
  meta: VaultMeta,
  mkRaw: Uint8Array<ArrayBuffer>,
  password: string,
  kdf: KdfParams,
  hooks: ChangePasswordHooks = {},
): Promise<Uint8Array<ArrayBuffer>> {
  const salt = randomBytes(16);
  const kek = await deriveKek(password, salt, kdf);
  const next: VaultMeta = { ...meta, kdf, salt, wrapped: await seal(kek, mkRaw, MASTER_KEY_AAD) };
  const tx = db.transaction('meta', 'readwrite');
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

/** Imports a trading session key (AES-256-GCM, extractable so it can live in `storage.session`). */
export function importSessionKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', true, ['encrypt', 'decrypt']);
}

/** The audit MAC key's 32 raw bytes: HKDF-SHA256(master key, salt = empty, info = `countersign/audit/v1`). */
export async function deriveAuditRaw(mk: CryptoKey): Promise<Uint8Array<ArrayBuffer>> {
  const mkRaw = new Uint8Array(await crypto.subtle.exportKey('raw', mk));
  try {
    const ikm = await crypto.subtle.importKey('raw', mkRaw, 'HKDF', false, ['deriveBits']);
    const bits = await crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(AUDIT_INFO) },
      ikm,
      256,
    );
    return new Uint8Array(bits);
  } finally {
    mkRaw.fill(0);
  }
}
