/**
 * The deposit-wallet batches Countersign builds itself (PROTOCOL.md §4.4 "a new user's setup batch",
 * §4.6 redeem): calls on the venue's own contracts of §4.1 only, so `describeWalletCalls` always decodes them.
 */
import { encodeFunctionData, maxUint256, parseAbi, zeroHash, type Hex } from 'viem';
import type { WalletCall } from './batch';
import { venueContracts } from './contracts';

/** The contract functions these calls use; parsed at the first use, not when the worker starts. */
const SIGNATURES = [
  'function approve(address spender, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
] as const;
let abi: ReturnType<typeof parseAbi<typeof SIGNATURES>> | undefined;
const ABI = () => (abi ??= parseAbi(SIGNATURES));

/**
 * A new user's setup on `chainId`: collateral `approve(exchange, max)` and outcome-token
 * `setApprovalForAll(exchange, true)` for exchange V2 and negative-risk exchange V2 (four calls).
 * Throws `InvalidFieldError` (`chainId`).
 */
export function setupCalls(chainId: number): WalletCall[] {
  const c = venueContracts(chainId);
  return [c.exchangeV2, c.negRiskExchangeV2].flatMap((ex) => [
    {
      target: c.collateral,
      value: '0',
      data: encodeFunctionData({ abi: ABI(), functionName: 'approve', args: [ex, maxUint256] }),
    },
    {
      target: c.conditionalTokens,
      value: '0',
      data: encodeFunctionData({ abi: ABI(), functionName: 'setApprovalForAll', args: [ex, true] }),
    },
  ]);
}

/**
 * A redeem of both outcomes (index sets 1 and 2) of `conditionId` into the wallet, at the top level. Throws
 * `InvalidFieldError` (`chainId`).
 */
export function redeemCalls(chainId: number, conditionId: Hex): WalletCall[] {
  const c = venueContracts(chainId);
  return [
    {
      target: c.conditionalTokens,
      value: '0',
      data: encodeFunctionData({
        abi: ABI(),
        functionName: 'redeemPositions',
        args: [c.collateral, zeroHash, conditionId, [1n, 2n]],
      }),
    },
  ];
}
