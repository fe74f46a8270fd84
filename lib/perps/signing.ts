/**
 * Perps gateway signatures (PROTOCOL.md §1.1–§1.3).
 *
 * - `Op(bytes32 data,uint64 salt,uint64 ts)` on the command domain `{ name, version, chainId }`, where
 *   `data = keccak256(msgpack(compact(tuple)))`;
 * - `CreateProxy(address addr,uint64 exp,uint64 salt,uint64 ts)` on the command domain;
 * - `Withdraw(address account,address token,uint256 amount,uint256 fee,address to,uint64 salt,uint64 ts)`
 *   on the withdraw domain (command domain + `verifyingContract`), `fee = 0`, `ts` in Unix seconds.
 *
 * Signatures are 65-byte `r‖s‖v` hex with v ∈ {27, 28}. Domain separators and type hashes are cached
 * and the digest is signed directly (see `lib/eip712`), which matches viem's `signTypedData` byte for
 * byte (pinned in `signing.test.ts`).
 */
import { Encoder } from '@msgpack/msgpack';
import { bytesToHex, type Address, type Hex, type LocalAccount } from 'viem';
import {
  addressWord,
  concatWords,
  keccak,
  keccakString,
  lazyKeccakString,
  signDigest,
  typedDataDigest,
  uintWord,
  viemDomain,
  type Eip712Domain,
} from '../eip712';
import type { PerpsOpTuple } from './commands';

/** Command domain (every `Op` and `CreateProxy`): no `verifyingContract`. Source: PROTOCOL.md §1.1. */
export type PerpsCommandDomain = { name: string; version: string; chainId: number };
/** Withdraw domain: command domain plus the deposit contract. Source: PROTOCOL.md §1.1. */
export type PerpsWithdrawDomain = PerpsCommandDomain & { verifyingContract: Address };

/** EIP-712 `types` of the three perps structs (for viem signing / recovery). */
export const perpsTypes = {
  Op: [
    { name: 'data', type: 'bytes32' },
    { name: 'salt', type: 'uint64' },
    { name: 'ts', type: 'uint64' },
  ],
  CreateProxy: [
    { name: 'addr', type: 'address' },
    { name: 'exp', type: 'uint64' },
    { name: 'salt', type: 'uint64' },
    { name: 'ts', type: 'uint64' },
  ],
  Withdraw: [
    { name: 'account', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'fee', type: 'uint256' },
    { name: 'to', type: 'address' },
    { name: 'salt', type: 'uint64' },
    { name: 'ts', type: 'uint64' },
  ],
} as const;

const OP_TYPEHASH = lazyKeccakString('Op(bytes32 data,uint64 salt,uint64 ts)');
const CREATE_PROXY_TYPEHASH = lazyKeccakString('CreateProxy(address addr,uint64 exp,uint64 salt,uint64 ts)');
const WITHDRAW_TYPEHASH = lazyKeccakString(
  'Withdraw(address account,address token,uint256 amount,uint256 fee,address to,uint64 salt,uint64 ts)',
);
const ZERO_WORD = new Uint8Array(32);
const UINT64_MAX = (1n << 64n) - 1n;

function u64(value: number, field: string): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0 || BigInt(value) > UINT64_MAX) {
    throw new RangeError(`${field} must be a non-negative safe integer`);
  }
  return uintWord(value);
}

/**
 * Removes `undefined` and `null` entries from every array, recursively (never `false`, `0` or `""`).
 * Source: PROTOCOL.md §1.2.
 */
export function compact(value: unknown): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) if (item !== undefined && item !== null) out.push(compact(item));
    return out;
  }
  return value;
}

// One encoder with the default options (identical output to `encode()`), reused to avoid a buffer per call.
const encoder = new Encoder();

/** msgpack bytes of the compacted tuple (`@msgpack/msgpack` defaults). */
export function encodePerpsOp(op: PerpsOpTuple): Uint8Array {
  return encoder.encode(compact(op));
}

/**
 * `data` of an `Op`: `keccak256(msgpack(compact(op)))` as 0x-hex (32 bytes).
 * `op` is the positional tuple from `lib/perps/commands.ts`. Source: PROTOCOL.md §1.2, reference §1.5.
 */
export function hashPerpsOp(op: PerpsOpTuple): Hex {
  return bytesToHex(keccak(encodePerpsOp(op)));
}

/** Inputs of an `Op` signature: `salt` uint32 from a crypto RNG, `ts` Unix ms. */
export type PerpsOpSignInput = { domain: PerpsCommandDomain; op: PerpsOpTuple; salt: number; ts: number };

/** EIP-712 digest of an `Op` (what the key signs). Throws `RangeError` for a bad salt / ts. */
export function perpsOpDigest({ domain, op, salt, ts }: PerpsOpSignInput): Hex {
  const structHash = keccak(concatWords([OP_TYPEHASH(), keccak(encodePerpsOp(op)), u64(salt, 'salt'), u64(ts, 'ts')]));
  return typedDataDigest(domain, structHash);
}

/** viem typed data of an `Op` (for `recoverTypedDataAddress` / `signTypedData`). */
export function perpsOpTypedData({ domain, op, salt, ts }: PerpsOpSignInput) {
  return {
    domain: viemDomain(domain as Eip712Domain),
    types: { Op: perpsTypes.Op },
    primaryType: 'Op' as const,
    message: { data: hashPerpsOp(op), salt: BigInt(salt), ts: BigInt(ts) },
  };
}

/**
 * Signs a perps `Op` with `account` (a viem `LocalAccount`). Returns the 65-byte signature hex.
 * Source: PROTOCOL.md §1.2. Throws `RangeError` when `salt` / `ts` are not non-negative safe integers.
 */
export async function signPerpsOp(account: LocalAccount, input: PerpsOpSignInput): Promise<Hex> {
  return signDigest(account, perpsOpDigest(input), () => perpsOpTypedData(input));
}

/** Inputs of a `CreateProxy` signature: `proxy` address, `expiry` Unix ms, `salt`, `ts` Unix ms. */
export type CreateProxySignInput = {
  domain: PerpsCommandDomain;
  proxy: Address;
  expiry: number;
  salt: number;
  ts: number;
};

/** EIP-712 digest of a `CreateProxy`. */
export function createProxyDigest({ domain, proxy, expiry, salt, ts }: CreateProxySignInput): Hex {
  const structHash = keccak(
    concatWords([CREATE_PROXY_TYPEHASH(), addressWord(proxy), u64(expiry, 'expiry'), u64(salt, 'salt'), u64(ts, 'ts')]),
  );
  return typedDataDigest(domain, structHash);
}

/** viem typed data of a `CreateProxy`. */
export function createProxyTypedData({ domain, proxy, expiry, salt, ts }: CreateProxySignInput) {
  return {
    domain: viemDomain(domain as Eip712Domain),
    types: { CreateProxy: perpsTypes.CreateProxy },
    primaryType: 'CreateProxy' as const,
    message: { addr: proxy, exp: BigInt(expiry), salt: BigInt(salt), ts: BigInt(ts) },
  };
}

/** Signs a `CreateProxy` with the **owner** key (PROTOCOL.md §1.3). */
export async function signCreateProxy(account: LocalAccount, input: CreateProxySignInput): Promise<Hex> {
  return signDigest(account, createProxyDigest(input), () => createProxyTypedData(input));
}

/** Inputs of a `Withdraw` signature: `amount` in integer base units, `ts` in Unix **seconds**. */
export type WithdrawSignInput = {
  domain: PerpsWithdrawDomain;
  account: Address;
  token: Address;
  amount: bigint;
  to: Address;
  salt: number;
  ts: number;
};

/** EIP-712 digest of a `Withdraw` (`fee` is always 0). */
export function withdrawDigest({ domain, account, token, amount, to, salt, ts }: WithdrawSignInput): Hex {
  const structHash = keccak(
    concatWords([
      WITHDRAW_TYPEHASH(),
      addressWord(account),
      addressWord(token),
      uintWord(amount),
      ZERO_WORD,
      addressWord(to),
      u64(salt, 'salt'),
      u64(ts, 'ts'),
    ]),
  );
  return typedDataDigest(domain, structHash);
}

/** viem typed data of a `Withdraw`. */
export function withdrawTypedData({ domain, account, token, amount, to, salt, ts }: WithdrawSignInput) {
  return {
    domain: viemDomain(domain),
    types: { Withdraw: perpsTypes.Withdraw },
    primaryType: 'Withdraw' as const,
    message: { account, token, amount, fee: 0n, to, salt: BigInt(salt), ts: BigInt(ts) },
  };
}

/** Signs a `Withdraw` with the **owner** key (PROTOCOL.md §1.3). `ts` in Unix seconds. */
export async function signWithdraw(account: LocalAccount, input: WithdrawSignInput): Promise<Hex> {
  return signDigest(account, withdrawDigest(input), () => withdrawTypedData(input));
}
