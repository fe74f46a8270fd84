/**
 * Vault cryptography: envelope encryption with WebCrypto AES-256-GCM.
 *
 * - A random 256-bit **master key** encrypts every secret record, with a fresh 12-byte IV per write
 *   and the record's store, id and owning account as additional data (records cannot be swapped or
 *   moved between slots).
 * - The master key is wrapped (AES-256-GCM) by a **key-encryption key** derived from the password with
 *   scrypt (`@noble/hashes` `scryptAsync`; default N = 2^17, r = 8, p = 1, 16-byte random salt).
 * - KDF name and parameters are stored with the vault and **bounded on read**: absurd values are
 *   refused before any work is done (a tampered vault cannot make unlock hang or allocate gigabytes).
 */
import { scryptAsync } from '@noble/hashes/scrypt.js';
import * as v from 'valibot';
import { BaseError } from '../errors/base';

/** scrypt parameters. `N` a power of two; memory ≈ 128 · N · r bytes. */
export type KdfParams = { name: 'scrypt'; N: number; r: number; p: number; dkLen: 32 };

/** Defaults for new vaults and for re-wrapping on unlock when a vault's cost is lower. */
export const DEFAULT_KDF: KdfParams = { name: 'scrypt', N: 2 ** 17, r: 8, p: 1, dkLen: 32 };

/** Accepted ranges of stored parameters (inclusive). */
export type KdfBounds = { minN: number; maxN: number; maxR: number; maxP: number };
/**
 * Bounds for stored KDF parameters: N in [2^14, 2^20], r ≤ 16, p ≤ 4 (memory ≈ 128 · N · r bytes, at most 2 GiB,
 * scrypt's `maxmem`).
 */
export const DEFAULT_KDF_BOUNDS: KdfBounds = { minN: 2 ** 14, maxN: 2 ** 20, maxR: 16, maxP: 4 };

/** Thrown when stored KDF parameters are missing, unknown or outside their bounds. Nothing is derived. */
export class KdfParamsError extends BaseError {
  override name = 'Vault.KdfParamsError';
}

/** Thrown when decryption fails: wrong password, or a record that was tampered with, swapped or moved. */
export class DecryptError extends BaseError {
  override name = 'Vault.DecryptError';
}

const isPow2 = (n: number) => n > 1 && (n & (n - 1)) === 0;
const boundedInt = (min: number, max: number) => v.pipe(v.number(), v.safeInteger(), v.minValue(min), v.maxValue(max));

/**
 * Stored KDF parameters within `bounds`: scrypt, `N` a power of two in `[minN, maxN]`, `r ≤ maxR`, `p ≤ maxP`, 32-byte
 * output.
 */
const kdfParamsSchema = (bounds: KdfBounds) =>
  v.object({
    name: v.literal('scrypt'),
    N: v.pipe(boundedInt(bounds.minN, bounds.maxN), v.check(isPow2)),
    r: boundedInt(1, bounds.maxR),
    p: boundedInt(1, bounds.maxP),
    dkLen: v.literal(32),
  });

/** Validates stored KDF parameters (any JSON value) against `bounds`; throws `KdfParamsError`. */
export function checkKdfParams(params: unknown, bounds: KdfBounds = DEFAULT_KDF_BOUNDS): KdfParams {
  const checked = v.safeParse(kdfParamsSchema(bounds), params);
  if (!checked.success)
    throw new KdfParamsError("The vault's key-derivation settings are outside safe bounds; refusing to unlock.");
  const { N, r, p } = checked.output;
  return { name: 'scrypt', N, r, p, dkLen: 32 };
}

/** True when `a` costs less than `b` (so the vault should be re-wrapped with `b`). */
export function kdfWeaker(a: KdfParams, b: KdfParams): boolean {
  return a.N * a.r * a.p < b.N * b.r * b.p;
}

/** Random bytes from the platform's crypto RNG. */
export function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(n));
}

/** Derives the key-encryption key (AES-256-GCM, non-extractable) from `password`. */
export async function deriveKek(password: string, salt: Uint8Array, params: KdfParams): Promise<CryptoKey> {
  const raw = await scryptAsync(new TextEncoder().encode(password.normalize('NFKC')), salt, {
    N: params.N,
    r: params.r,
    p: params.p,
    dkLen: params.dkLen,
    maxmem: 2 ** 31,
  });
  // A copy over a plain ArrayBuffer (what WebCrypto takes); both are wiped after the import.
  const bytes = new Uint8Array(raw);
  try {
    return await crypto.subtle.importKey('raw', bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
  } finally {
    raw.fill(0);
    bytes.fill(0);
  }
}

/** Imports raw master-key bytes as an extractable AES-256-GCM key (extractable so it can live in `storage.session`). */
export function importMasterKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', true, ['encrypt', 'decrypt']);
}

/** A sealed value: 12-byte IV and AES-GCM ciphertext (with tag). */
export type Sealed = { iv: Uint8Array<ArrayBuffer>; ct: Uint8Array<ArrayBuffer> };

/** AES-GCM encryption with a fresh IV and `aad` as additional data. */
export async function seal(key: CryptoKey, plaintext: Uint8Array<ArrayBuffer>, aad: string): Promise<Sealed> {
  const iv = randomBytes(12);
  const ct = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(aad) }, key, plaintext),
  );
  return { iv, ct };
}

/** AES-GCM decryption; throws `DecryptError` on any failure (wrong key, tampering, wrong `aad`). */
export async function open(key: CryptoKey, sealed: Sealed, aad: string): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: sealed.iv, additionalData: new TextEncoder().encode(aad) },
        key,
        sealed.ct,
      ),
    );
  } catch (err) {
    throw new DecryptError('The data could not be decrypted (wrong password or tampered data).', { cause: err });
  }
}

/** Additional data binding a secret record to its slot: store, id and owning account. */
export function recordAad(store: string, id: string, account: string): string {
  return `countersign/v1/${store}/${id}/${account.toLowerCase()}`;
}

/** Additional data of the wrapped master key. */
export const MASTER_KEY_AAD = 'countersign/v1/master-key';
