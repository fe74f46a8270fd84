/**
 * Deposit-wallet relayer requests (PROTOCOL.md §4.4 "Deposit wallet requests"; `@polymarket/builder-relayer-client`
 * 0.0.10 `builder/deposit-wallet.js`): the unsigned `WALLET-CREATE` and the owner-signed `WALLET` batch, EIP-712
 * `Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)` / `Call(address target,uint256 value,bytes data)`
 * on `{ name: "DepositWallet", version: "1", chainId, verifyingContract: <wallet> }`. Request JSON keeps the client's
 * field order (its text is what the builder HMAC covers).
 */
import * as v from 'valibot';
import type { Address, Hex, LocalAccount } from 'viem';
import { address, InvalidFieldError, parseOrThrow, uint256String } from '../validation';
import { venueContracts } from './contracts';

/** One call of a batch: `value` wei as a decimal string, `data` the calldata. */
export type WalletCall = { target: Address; value: string; data: Hex };

/** EIP-712 types of a deposit-wallet batch. */
export const walletBatchTypes = {
  Call: [
    { name: 'target', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
  ],
  Batch: [
    { name: 'wallet', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'calls', type: 'Call[]' },
  ],
} as const;

/** Most calls one batch may carry (a choice of this project: a setup batch has four, a redeem a few). */
export const MAX_BATCH_CALLS = 16;

const callSchema = v.strictObject({
  target: address,
  value: uint256String,
  data: v.custom<Hex>(
    (s) => typeof s === 'string' && /^0x(?:[0-9a-fA-F]{2})*$/.test(s),
    'must be 0x-prefixed hex bytes',
  ),
});

const batchSchema = v.strictObject({
  chainId: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  wallet: address,
  nonce: uint256String,
  deadline: v.pipe(v.string(), v.regex(/^\d{1,12}$/, 'must be Unix seconds')),
  calls: v.pipe(
    v.array(callSchema),
    v.minLength(1, 'must hold at least one call'),
    v.maxLength(MAX_BATCH_CALLS, `must hold at most ${MAX_BATCH_CALLS} calls`),
  ),
});

/**
 * A deposit-wallet batch to sign: `nonce` from relayer `GET /nonce?type=WALLET` (of the owner), `deadline` Unix
 * **seconds**.
 */
export type WalletBatch = { chainId: number; wallet: Address; nonce: string; deadline: string; calls: WalletCall[] };

/** Validates a batch; throws `InvalidFieldError` (`batch.<field>`). */
function parseWalletBatch(batch: unknown): WalletBatch {
  return parseOrThrow(batchSchema, batch, 'batch');
}

/**
 * viem typed data of a batch (for `signTypedData` / `recoverTypedDataAddress`; digest reference value
 * PROTOCOL.md §4.4, pinned in `relayer.test.ts`). Validates first: throws `InvalidFieldError` (`batch.<field>`).
 */
export function walletBatchTypedData(input: WalletBatch) {
  const batch = parseWalletBatch(input);
  return {
    domain: { name: 'DepositWallet', version: '1', chainId: batch.chainId, verifyingContract: batch.wallet },
    types: walletBatchTypes,
    primaryType: 'Batch' as const,
    message: {
      wallet: batch.wallet,
      nonce: BigInt(batch.nonce),
      deadline: BigInt(batch.deadline),
      calls: batch.calls.map((c) => ({ target: c.target, value: BigInt(c.value), data: c.data })),
    },
  };
}

/** `POST /submit` body creating the deposit wallet of `from` (no signature; builder headers authorise it). */
export type WalletCreateRequest = { type: 'WALLET-CREATE'; from: Address; to: Address };

/**
 * The `WALLET-CREATE` request of owner `from` on `chainId` (`to` = the DepositWalletFactory). Throws
 * `InvalidFieldError`.
 */
export function walletCreateRequest(from: Address, chainId: number): WalletCreateRequest {
  return {
    type: 'WALLET-CREATE',
    from: parseOrThrow(address, from, 'from'),
    to: venueContracts(chainId).depositWalletFactory,
  };
}

/** `POST /submit` body of an owner-signed batch (field order as the official client sends it). */
export type WalletBatchRequest = {
  type: 'WALLET';
  from: Address;
  to: Address;
  nonce: string;
  signature: Hex;
  depositWalletParams: { depositWallet: Address; deadline: string; calls: WalletCall[] };
};

/**
 * Signs `batch` with its owner's key and returns the `WALLET` request (`from` = the owner, `to` = the
 * factory, not the wallet; PROTOCOL.md §4.4). The caller must have checked that `batch.wallet` is
 * `account`'s deposit wallet (PROTOCOL.md §4.2) and shown the decoded calls (`describeWalletCalls`).
 * Throws `InvalidFieldError` (`batch.<field>`, `signature`).
 */
export async function signWalletBatch(account: LocalAccount, batch: WalletBatch): Promise<WalletBatchRequest> {
  const b = parseWalletBatch(batch);
  const signature = await account.signTypedData(walletBatchTypedData(b));
  if (!/^0x[0-9a-f]{130}$/i.test(signature))
    throw new InvalidFieldError({ field: 'signature', reason: 'must be 65 bytes' });
  return {
    type: 'WALLET',
    from: account.address,
    to: venueContracts(b.chainId).depositWalletFactory,
    nonce: b.nonce,
    signature,
    depositWalletParams: { depositWallet: b.wallet, deadline: b.deadline, calls: b.calls },
  };
}
