/**
 * Deposit-wallet batch calls in plain words: each call is decoded against the
 * few functions a deposit-wallet user needs — collateral `approve`, outcome-token `setApprovalForAll`,
 * ConditionalTokens `redeemPositions`, and token transfers — and anything else is refused, never signed
 * blind. Approvals go only to the venue's exchanges of PROTOCOL.md §4.1; a call that moves tokens to
 * another address (ERC-20 `transfer` / `transferFrom`, ERC-1155 `safeTransferFrom` /
 * `safeBatchTransferFrom`) is a **withdrawal**: it always asks and is never grantable.
 * `redeemPositions` pays the caller (the wallet itself), so it is not a withdrawal.
 */
import { decodeFunctionData, encodeFunctionData, parseAbi, zeroHash, type Address, type Hex } from 'viem';
import { fromUnits } from '../decimal';
import { BaseError } from '../errors/base';
import { shortAddress } from '../format';
import { exchangeNameOf, venueContracts, type ExchangeName, type VenueContracts } from './contracts';
import type { WalletCall } from './batch';

/** The contract functions these calls use; parsed at the first use, not when the worker starts. */
const SIGNATURES = [
  'function approve(address spender, uint256 amount)',
  'function transfer(address to, uint256 amount)',
  'function transferFrom(address from, address to, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes data)',
  'function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] amounts, bytes data)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
] as const;
let abi: ReturnType<typeof parseAbi<typeof SIGNATURES>> | undefined;
const ABI = () => (abi ??= parseAbi(SIGNATURES));

const MAX_UINT256 = (1n << 256n) - 1n;
const EXCHANGE_LABEL: Record<ExchangeName, string> = {
  exchangeV2: 'the exchange (V2)',
  negRiskExchangeV2: 'the negative-risk exchange (V2)',
  exchangeV3: 'the exchange (V3)',
};

/**
 * One decoded call. Amounts are base units (collateral and outcome tokens have 6 decimals); `words` is
 * the sentence the approval window shows.
 */
export type DescribedCall =
  | { kind: 'approve'; token: Address; spender: Address; spenderName: ExchangeName; amount: bigint; words: string }
  | { kind: 'setApprovalForAll'; token: Address; operator: Address; approved: boolean; words: string }
  | { kind: 'redeem'; conditionId: Hex; indexSets: bigint[]; words: string }
  | { kind: 'transfer'; token: Address; to: Address; ids: bigint[]; amounts: bigint[]; words: string };

/** A decoded batch: its calls and whether it moves tokens out of the wallet (a withdrawal: never grantable). */
export type DescribedBatch = { calls: DescribedCall[]; withdrawal: boolean };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const usdc = (units: bigint) => (units === MAX_UINT256 ? 'an unlimited amount of' : `${fromUnits(units, 6)}`);

/**
 * Decodes each call of a deposit-wallet batch on `chainId` for `wallet`. Throws
 * `UndecodableCallError` for a call it cannot decode (unknown function, unknown contract, native value)
 * and `ForbiddenSpenderError` for an approval to anything but the venue's exchanges.
 */
export function describeWalletCalls(chainId: number, wallet: Address, calls: readonly WalletCall[]): DescribedBatch {
  const c = venueContracts(chainId);
  const out = calls.map((call, i) => describeCall(c, wallet, call, i));
  return { calls: out, withdrawal: out.some((x) => x.kind === 'transfer') };
}

/**
 * Decodes `call` against the functions a deposit wallet needs; the calldata must be exactly the
 * re-encoding of what was decoded (trailing or non-canonical bytes would be signed without being shown).
 */
function decode(call: WalletCall, index: number) {
  let d;
  try {
    d = decodeFunctionData({ abi: ABI(), data: call.data });
  } catch (cause) {
    throw new UndecodableCallError({ index, reason: 'its function is not one a deposit wallet needs', cause });
  }
  if (
    encodeFunctionData({ abi: ABI(), functionName: d.functionName, args: d.args }).toLowerCase() !==
    call.data.toLowerCase()
  ) {
    throw new UndecodableCallError({ index, reason: 'its calldata carries bytes beyond the call it names' });
  }
  return d;
}

function describeCall(c: VenueContracts, wallet: Address, call: WalletCall, index: number): DescribedCall {
  if (call.value !== '0') throw new UndecodableCallError({ index, reason: 'it sends native currency' });
  const d = decode(call, index);
  const isCollateral = same(call.target, c.collateral);
  const isCtf = same(call.target, c.conditionalTokens);
  const tokenName = isCollateral ? 'collateral (USDC)' : 'outcome tokens';
  if (!isCollateral && !isCtf)
    throw new UndecodableCallError({
      index,
      reason: `its contract ${call.target} is not the venue's collateral or outcome token`,
    });
  switch (d.functionName) {
    case 'approve': {
      const [spender, amount] = d.args;
      const name = exchangeNameOf(c.chainId, spender);
      if (!isCollateral)
        throw new UndecodableCallError({ index, reason: 'approve is expected on the collateral token only' });
      if (!name) throw new ForbiddenSpenderError({ index, spender });
      return {
        kind: 'approve',
        token: call.target,
        spender,
        spenderName: name,
        amount,
        words:
          `Allow ${EXCHANGE_LABEL[name]} (${spender}) to spend ` +
          `${usdc(amount)} collateral (USDC) of the deposit wallet`,
      };
    }
    case 'setApprovalForAll': {
      const [operator, approved] = d.args;
      const name = exchangeNameOf(c.chainId, operator);
      if (!isCtf)
        throw new UndecodableCallError({
          index,
          reason: 'setApprovalForAll is expected on the outcome-token contract only',
        });
      if (approved && !name) throw new ForbiddenSpenderError({ index, spender: operator });
      const who = name ? `${EXCHANGE_LABEL[name]} (${operator})` : operator;
      return {
        kind: 'setApprovalForAll',
        token: call.target,
        operator,
        approved,
        words: approved
          ? `Allow ${who} to move all outcome tokens of the deposit wallet`
          : `Revoke ${who}'s approval for the outcome tokens`,
      };
    }
    case 'redeemPositions': {
      const [collateral, parent, conditionId, indexSets] = d.args;
      if (!isCtf || !same(collateral, c.collateral) || parent !== zeroHash)
        throw new UndecodableCallError({ index, reason: 'the redeem is not of the venue collateral at the top level' });
      return {
        kind: 'redeem',
        conditionId,
        indexSets: [...indexSets],
        words: `Redeem the resolved positions of market ${shortAddress(conditionId)} into the deposit wallet`,
      };
    }
    case 'transfer':
    case 'transferFrom': {
      const [to, amount] = d.functionName === 'transfer' ? d.args : [d.args[1], d.args[2]];
      if (!isCollateral)
        throw new UndecodableCallError({ index, reason: `${d.functionName} is expected on the collateral token only` });
      return {
        kind: 'transfer',
        token: call.target,
        to,
        ids: [],
        amounts: [amount],
        words: `Withdraw ${fromUnits(amount, 6)} ${tokenName} to ${to}`,
      };
    }
    case 'safeTransferFrom':
    case 'safeBatchTransferFrom': {
      if (!isCtf)
        throw new UndecodableCallError({
          index,
          reason: `${d.functionName} is expected on the outcome-token contract only`,
        });
      const [, to, ids, amounts] =
        d.functionName === 'safeTransferFrom' ? [d.args[0], d.args[1], [d.args[2]], [d.args[3]]] : d.args;
      const total = amounts.reduce((a, b) => a + b, 0n);
      const self = same(to, wallet) ? ' (the wallet itself)' : '';
      return {
        kind: 'transfer',
        token: call.target,
        to,
        ids: [...ids],
        amounts: [...amounts],
        words: `Withdraw ${fromUnits(total, 6)} ${tokenName} to ${to}${self}`,
      };
    }
  }
}

/** A batch call could not be decoded; nothing is signed (never sign blind). */
export class UndecodableCallError extends BaseError {
  override name = 'UndecodableCallError';
  static override readonly code = -32602;
  /** Index of the call in the batch. */
  readonly index: number;
  constructor({ index, reason, cause }: { index: number; reason: string; cause?: unknown }) {
    super(`Call ${index + 1} of the batch cannot be shown in plain words, so it is refused: ${reason}.`, {
      cause,
      data: { index },
    });
    this.index = index;
  }
}

/** An approval names a spender that is not one of the venue's exchanges (PROTOCOL.md §4.1); refused. */
export class ForbiddenSpenderError extends BaseError {
  override name = 'ForbiddenSpenderError';
  static override readonly code = -32602;
  /** Index of the call in the batch. */
  readonly index: number;
  constructor({ index, spender }: { index: number; spender: Address }) {
    super(
      `Call ${index + 1} of the batch approves ${spender}, which ` +
        `is not one of the venue's exchanges, so it is refused.`,
      { data: { index, spender } },
    );
    this.index = index;
  }
}
