/**
 * The venue's request HMAC (PROTOCOL.md §2.2 "L2", §4.4 "Builder headers"): HMAC-SHA256 of
 * `timestamp + method + path + body`, keyed with a base64 API secret, url-safe base64 output with `=`
 * padding kept. The order book's L2 headers (`lib/clob/auth.ts`) and the relayer's builder headers
 * (`lib/relayer/builder.ts`) both sign with it, so it sits below both.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { InvalidFieldError } from '../validation';

/** Decodes base64 in the standard or url-safe alphabet, with or without `=` padding. Throws `InvalidFieldError`. */
export function decodeBase64Secret(secret: string): Uint8Array {
  const std = secret.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(std) || std.replace(/=+$/, '').length % 4 === 1) {
    throw new InvalidFieldError({ field: 'secret', reason: 'must be base64 (standard or url-safe)' });
  }
  const padded = std.replace(/=+$/, '').padEnd(Math.ceil(std.replace(/=+$/, '').length / 4) * 4, '=');
  const bin = atob(padded);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Standard base64 of bytes, then `+`→`-`, `/`→`_`, keeping `=` padding (PROTOCOL.md §2.2). */
export function toUrlSafeBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Inputs of an L2 signature: `timestamp` Unix seconds; `requestPath` the path as sent (a query string,
 * if any, is not signed — PROTOCOL.md §2.2); `body` the exact JSON text sent.
 */
export type L2SignatureInput = {
  secret: string;
  timestamp: number;
  method: string;
  requestPath: string;
  body?: string;
};

/**
 * The HMAC message `String(timestamp) + method + path + (body ?? "")`, where `path` is `requestPath`
 * without its query string: the official client signs the path alone and sends the query separately
 * (PROTOCOL.md §2.2).
 */
export function l2Message({ timestamp, method, requestPath, body }: Omit<L2SignatureInput, 'secret'>): string {
  const q = requestPath.indexOf('?');
  return String(timestamp) + method + (q === -1 ? requestPath : requestPath.slice(0, q)) + (body ?? '');
}

/**
 * HMAC-SHA256 L2 signature, url-safe base64 with padding (PROTOCOL.md §2.2; reference value pinned in
 * `lib/clob/auth.test.ts`). Throws `InvalidFieldError` for a secret that is not base64 or a bad timestamp.
 */
export async function buildL2Signature(input: L2SignatureInput): Promise<string> {
  return buildL2SignatureSync(input);
}

/** Synchronous form of `buildL2Signature` (same output). */
export function buildL2SignatureSync(input: L2SignatureInput): string {
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) {
    throw new InvalidFieldError({ field: 'timestamp', reason: 'must be Unix seconds as a non-negative integer' });
  }
  const key = decodeBase64Secret(input.secret);
  const mac = hmac(sha256, key, new TextEncoder().encode(l2Message(input)));
  key.fill(0);
  return toUrlSafeBase64(mac);
}

/** Constant-time comparison of two L2 signatures (for verifiers). */
export function l2SignaturesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
