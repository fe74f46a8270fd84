/**
 * Order-book exchange authentication (seed "Authentication"; PROTOCOL.md §2.1–§2.2).
 *
 * L1: an EIP-712 `ClobAuth(address address,string timestamp,uint256 nonce,string message)` signature on
 * `{ name: "ClobAuthDomain", version: "1", chainId }`, sent as four headers; used to create or derive
 * API credentials.
 * L2: an HMAC-SHA256 of `timestamp + method + requestPath + body` keyed with the base64 API secret,
 * url-safe base64 output with padding (`lib/hmac`, shared with the relayer's builder headers), sent as
 * five headers on every trading request.
 */
import { type Address, type Hex, type LocalAccount } from 'viem';
import {
  addressWord,
  concatWords,
  keccak,
  keccakString,
  lazyKeccakString,
  signDigest,
  typedDataDigest,
  uintWord,
} from '../eip712';
import { InvalidFieldError } from '../validation';
import { buildL2SignatureSync } from '../hmac';

export {
  buildL2Signature,
  buildL2SignatureSync,
  decodeBase64Secret,
  l2Message,
  l2SignaturesEqual,
  toUrlSafeBase64,
  type L2SignatureInput,
} from '../hmac';

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

const CLOB_AUTH_TYPEHASH = lazyKeccakString('ClobAuth(address address,string timestamp,uint256 nonce,string message)');
const CLOB_AUTH_MESSAGE_HASH = lazyKeccakString(CLOB_AUTH_MESSAGE);

/** ClobAuth domain for `chainId` (137 in production, 80002 on the test chain). */
export function clobAuthDomain(chainId: number) {
  return { name: 'ClobAuthDomain', version: '1', chainId } as const;
}

/** Inputs of an L1 signature: `timestamp` Unix **seconds** (the server's clock), `nonce` ≥ 0 (default 0). */
export type ClobAuthInput = { chainId: number; timestamp: number; nonce: number };

function checkAuthInput({ chainId, timestamp, nonce }: ClobAuthInput): void {
  if (!Number.isSafeInteger(chainId) || chainId <= 0)
    throw new InvalidFieldError({ field: 'chainId', reason: 'must be a positive integer' });
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new InvalidFieldError({ field: 'timestamp', reason: 'must be Unix seconds as a non-negative integer' });
  if (!Number.isSafeInteger(nonce) || nonce < 0)
    throw new InvalidFieldError({ field: 'nonce', reason: 'must be a non-negative integer' });
}

/** EIP-712 digest of a ClobAuth for `address`. */
export function clobAuthDigest(address: Address, input: ClobAuthInput): Hex {
  checkAuthInput(input);
  const structHash = keccak(
    concatWords([
      CLOB_AUTH_TYPEHASH(),
      addressWord(address),
      keccakString(String(input.timestamp)),
      uintWord(input.nonce),
      CLOB_AUTH_MESSAGE_HASH(),
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
 * `timestamp` Unix seconds; `body` the exact JSON text that will be sent. The HMAC covers the bare path:
 * a query string in `requestPath` is left out (PROTOCOL.md §2.2). The official client's
 * `createL2Headers` signs whatever path it is given, and its own calls give the bare path and send the
 * query apart — the same signature (asserted by `test/conformance/clob-differential.test.ts`).
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
