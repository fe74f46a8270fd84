/**
 * Minimal EIP-712 hashing for the venue's fixed structs, with cached domain separators and type
 * hashes, so each signature costs one struct hash, one digest hash and one secp256k1 sign.
 *
 * Every function here must agree byte for byte with viem's `hashTypedData` for the same typed data; the
 * tests of each struct the project signs pin that: `lib/perps/signing.test.ts` (Op, CreateProxy, Withdraw),
 * `lib/clob/order.test.ts` (the exchange's Order) and `lib/clob/auth.test.ts` (ClobAuth). Deep generics stay
 * out: callers pass already-encoded 32-byte words.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { stringToBytes, hexToBytes, bytesToHex, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';

/** EIP-712 domain as the venue uses it: `verifyingContract` only for the withdraw and exchange domains. */
export type Eip712Domain = {
  name: string;
  version: string;
  chainId: number;
  verifyingContract?: Hex;
};

/** keccak256 of bytes, returning bytes (`@noble/hashes`, audited; faster here than going through viem's hex API). */
export function keccak(bytes: Uint8Array): Uint8Array {
  return keccak_256(bytes);
}

/** keccak256 of a UTF-8 string (EIP-712 `string` members and type strings). */
export function keccakString(s: string): Uint8Array {
  return keccak(stringToBytes(s));
}

/**
 * The keccak256 of a type string (or another fixed string), computed at its first use and kept: a module's type hashes
 * cost nothing when the worker starts, only at the first signature that needs them.
 */
export function lazyKeccakString(s: string): () => Uint8Array {
  let hash: Uint8Array | undefined;
  return () => (hash ??= keccakString(s));
}

/** 32-byte big-endian word of an unsigned integer (uint8 … uint256). Throws `RangeError` if negative or ≥ 2^256. */
export function uintWord(value: bigint | number): Uint8Array {
  let n = BigInt(value);
  if (n < 0n || n >= 1n << 256n) throw new RangeError('uint out of range');
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0 && n > 0n; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

/** 32-byte word of an address (left-padded 20 bytes). */
export function addressWord(address: Hex): Uint8Array {
  const out = new Uint8Array(32);
  out.set(hexToBytes(address), 12);
  return out;
}

/** A `bytes32` value as a word (checked length). */
export function bytes32Word(value: Hex): Uint8Array {
  const b = hexToBytes(value);
  if (b.length !== 32) throw new RangeError('bytes32 must be 32 bytes');
  return b;
}

/** Concatenates words into one buffer. */
export function concatWords(words: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(words.reduce((n, w) => n + w.length, 0));
  let offset = 0;
  for (const w of words) {
    out.set(w, offset);
    offset += w.length;
  }
  return out;
}

const DOMAIN_TYPE = 'EIP712Domain(string name,string version,uint256 chainId)';
const DOMAIN_TYPE_VC = 'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)';
const domainTypeHash = lazyKeccakString(DOMAIN_TYPE);
const domainTypeHashVc = lazyKeccakString(DOMAIN_TYPE_VC);
const domainCache = new Map<string, Uint8Array>();

/**
 * The domain separator of `domain`, cached per (name, version, chainId, verifyingContract).
 * Only the fields the venue uses are supported (no `salt`).
 */
export function domainSeparator(domain: Eip712Domain): Uint8Array {
  const key = [domain.name, domain.version, domain.chainId, domain.verifyingContract?.toLowerCase() ?? '']
    .map(String)
    .join('\u0000');
  let sep = domainCache.get(key);
  if (!sep) {
    const words = [
      domain.verifyingContract ? domainTypeHashVc() : domainTypeHash(),
      keccakString(domain.name),
      keccakString(domain.version),
      uintWord(domain.chainId),
    ];
    if (domain.verifyingContract) words.push(addressWord(domain.verifyingContract));
    sep = keccak(concatWords(words));
    if (domainCache.size > 64) domainCache.clear();
    domainCache.set(key, sep);
  }
  return sep;
}

/** The viem domain object for `domain` (for `signTypedData` / `recoverTypedDataAddress`). */
export function viemDomain(domain: Eip712Domain) {
  return {
    name: domain.name,
    version: domain.version,
    chainId: domain.chainId,
    ...(domain.verifyingContract ? { verifyingContract: domain.verifyingContract } : {}),
  };
}

/** EIP-712 digest `keccak256(0x1901 ‖ domainSeparator ‖ structHash)` as 0x-hex. */
export function typedDataDigest(domain: Eip712Domain, structHash: Uint8Array): Hex {
  const buf = new Uint8Array(66);
  buf[0] = 0x19;
  buf[1] = 0x01;
  buf.set(domainSeparator(domain), 2);
  buf.set(structHash, 34);
  return bytesToHex(keccak(buf));
}

/**
 * Signs an EIP-712 digest with `account` (65-byte `r‖s‖v` hex, v ∈ {27, 28}). Uses the account's raw
 * `sign({ hash })` when it has one (local private-key accounts); otherwise falls back to
 * `signTypedData(typedData())`, which yields the same signature.
 */
export async function signDigest(
  account: LocalAccount,
  digest: Hex,
  typedData: () => TypedDataDefinition,
): Promise<Hex> {
  if (account.sign) return account.sign({ hash: digest });
  return account.signTypedData(typedData() as Parameters<LocalAccount['signTypedData']>[0]);
}
