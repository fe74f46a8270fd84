/**
 * Order-book exchange authentication (seed "Authentication"; PROTOCOL.md §2.1–§2.2).
 *
 * L1: an EIP-712 `ClobAuth(address address,string timestamp,uint256 nonce,string message)` signature on
 * `{ name: "ClobAuthDomain", version: "1", chainId }`, sent as four headers; used to create or derive
 * API credentials.
 * L2: an HMAC-SHA256 of `timestamp + method + requestPath + body` keyed with the base64 API secret,
 * url-safe base64 output with padding, sent as five headers on every trading request.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { type Address, type Hex, type LocalAccount } from 'viem';
import { addressWord, concatWords, keccak, keccakString, signDigest, typedDataDigest, uintWord } from '../eip712';
import { InvalidFieldError } from '../validation';

/** The fixed attestation sentence of ClobAuth (PROTOCOL.md §2.1). */
export const CLOB_AUTH_MESSAGE = 'This message attests that I control the given wallet';

/** ClobAuth EIP-712 types. */
export const clobAuthTypes = {
  ClobAuth: [
    { name: 'address', type: 'address' },
    { name: 'timestamp', type: 'string' },
    { name: 'nonce', type: 'uint256' },
    { name: 'message', type: 'string' },
  ],
} as const;

const CLOB_AUTH_TYPEHASH = keccakString('ClobAuth(address address,string timestamp,uint256 nonce,string message)');
const CLOB_AUTH_MESSAGE_HASH = keccakString(CLOB_AUTH_MESSAGE);

/** ClobAuth domain for `chainId` (137 in production, 80002 on the test chain). */
export function clobAuthDomain(chainId: number) {
  return { name: 'ClobAuthDomain', version: '1', chainId } as const;
}

/** Inputs of an L1 signature: `timestamp` Unix **seconds** (the server's clock), `nonce` ≥ 0 (default 0). */
export type ClobAuthInput = { chainId: number; timestamp: number; nonce: number };

function checkAuthInput({ chainId, timestamp, nonce }: ClobAuthInput): void {
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new InvalidFieldError({ field: 'chainId', reason: 'must be a positive integer' });
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new InvalidFieldError({ field: 'timestamp', reason: 'must be Unix seconds as a non-negative integer' });
  if (!Number.isSafeInteger(nonce) || nonce < 0) throw new InvalidFieldError({ field: 'nonce', reason: 'must be a non-negative integer' });
}

/** EIP-712 digest of a ClobAuth for `address`. */
export function clobAuthDigest(address: Address, input: ClobAuthInput): Hex {
  checkAuthInput(input);
  const structHash = keccak(
    concatWords([
      CLOB_AUTH_TYPEHASH,
      addressWord(address),
      keccakString(String(input.timestamp)),
      uintWord(input.nonce),
      CLOB_AUTH_MESSAGE_HASH,
    ]),
  );
  return typedDataDigest(clobAuthDomain(input.chainId), structHash);
}

/** viem typed data of a ClobAuth (for recovery / `signTypedData`). */
export function clobAuthTypedData(address: Address, { chainId, timestamp, nonce }: ClobAuthInput) {
  return {
    domain: clobAuthDomain(chainId),
    types: clobAuthTypes,
    primaryType: 'ClobAuth' as const,
    message: { address, timestamp: String(timestamp), nonce: BigInt(nonce), message: CLOB_AUTH_MESSAGE },
  };
}

/**
 * Signs a ClobAuth with `account` (the wallet key). Returns a 65-byte hex signature.
 * Source: PROTOCOL.md §2.1 (reference value pinned in `auth.test.ts`).
 * Throws `InvalidFieldError` for a bad chainId / timestamp / nonce.
 */
export async function signClobAuth(account: LocalAccount, input: ClobAuthInput): Promise<Hex> {
  return signDigest(account, clobAuthDigest(account.address, input), () => clobAuthTypedData(account.address, input));
}

/** The four L1 headers (PROTOCOL.md §2.1). */
export type L1Headers = {
  SVC_ADDRESS: Address;
  SVC_SIGNATURE: Hex;
  SVC_TIMESTAMP: string;
  SVC_NONCE: string;
};

/** Signs and returns the L1 headers for `POST /auth/api-key` or `GET /auth/derive-api-key`. */
export async function buildL1Headers(account: LocalAccount, input: ClobAuthInput): Promise<L1Headers> {
  const sig = await signClobAuth(account, input);
  return {
    SVC_ADDRESS: account.address,
    SVC_SIGNATURE: sig,
    SVC_TIMESTAMP: String(input.timestamp),
    SVC_NONCE: String(input.nonce),
  };
}

// ------------------------------------------------------------------------------------------------
// L2

/** API credentials (seed "API credentials"). `secret` is base64 (standard or url-safe, padding optional). */
export type ApiCredentials = { apiKey: string; secret: string; passphrase: string };

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
 * `auth.test.ts`). Throws `InvalidFieldError` for a secret that is not base64 or a bad timestamp.
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

/** The five L2 headers (seed "Authentication"). */
export type L2Headers = {
  SVC_ADDRESS: Address;
  SVC_SIGNATURE: string;
  SVC_TIMESTAMP: string;
  SVC_API_KEY: string;
  SVC_PASSPHRASE: string;
};

/**
 * Builds the five L2 headers for a request. `address` is the signer address the API key belongs to;
 * `timestamp` Unix seconds; `body` the exact JSON text that will be sent.
 */
export function buildL2Headers(input: {
  address: Address;
  credentials: ApiCredentials;
  timestamp: number;
  method: string;
  requestPath: string;
  body?: string;
}): L2Headers {
  const sig = buildL2SignatureSync({
    secret: input.credentials.secret,
    timestamp: input.timestamp,
    method: input.method,
    requestPath: input.requestPath,
    ...(input.body === undefined ? {} : { body: input.body }),
  });
  return {
    SVC_ADDRESS: input.address,
    SVC_SIGNATURE: sig,
    SVC_TIMESTAMP: String(input.timestamp),
    SVC_API_KEY: input.credentials.apiKey,
    SVC_PASSPHRASE: input.credentials.passphrase,
  };
}

/** Constant-time comparison of two L2 signatures (for verifiers). */
export function l2SignaturesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

