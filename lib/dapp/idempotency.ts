/**
 * Keys that make a submission safe to repeat: a client order id on each perps order (`c`), and an
 * `idempotencyKey` on the request (a repeat with the same key within 24 h joins the first request, gets
 * its answer or its unknown outcome, never a second order). Both come from `crypto.getRandomValues`
 * (browsers, and Node 20+ as `globalThis.crypto`).
 */

/** `n` random bytes as lowercase hex (2n characters). */
function randomHex(n: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A new perps client order id: 32 lowercase hex characters (16 random bytes), the form `c` must have. */
export function newClientOrderId(): string {
  return randomHex(16);
}

/**
 * A new `idempotencyKey`: `prefix` (default `site`) and 32 random hex characters, joined by `-`. Throws
 * `RangeError` when `prefix` is not 1-31 printable ASCII characters (the key must stay 1-64 of them).
 */
export function newIdempotencyKey(prefix = 'site'): string {
  if (!/^[\x21-\x7e]{1,31}$/.test(prefix)) throw new RangeError('prefix must be 1 to 31 printable ASCII characters');
  return `${prefix}-${randomHex(16)}`;
}
