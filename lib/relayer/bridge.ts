/**
 * Bridge withdraw with the deposit wallet as the source. The venue's flow, as
 * `transferErc20` of `@polymarket/client` moves a deposit wallet's tokens: the bridge's
 * `POST /withdraw` `{ address: <deposit wallet>, toChainId, toTokenAddress, recipientAddr }` answers a
 * deposit address on the exchange chain (`{ address: { evm } }`); the wallet then sends collateral there
 * in a relayer `WALLET` batch with one ERC-20 `transfer` (a withdrawal: always asked, never grantable),
 * and the bridge forwards it to `recipientAddr` on `toChainId`. Pure over `fetch`; the answer is
 * validated before anything reads it.
 */
import * as v from 'valibot';
import { encodeFunctionData, getAddress, parseAbi, type Address } from 'viem';
import { BaseError } from '../errors/base';
import { requestJson } from '../http/json';
import { address } from '../validation';
import type { WalletCall } from './batch';
import { venueContracts } from './contracts';

const answerSchema = v.object({ address: v.object({ evm: address }) });
/** The contract functions these calls use; parsed at the first use, not when the worker starts. */
const SIGNATURES = ['function transfer(address to, uint256 amount)'] as const;
let abi: ReturnType<typeof parseAbi<typeof SIGNATURES>> | undefined;
const ABI = () => (abi ??= parseAbi(SIGNATURES));

/** Where a withdrawal goes: `toChainId` (EVM chain id), the token it arrives as there, and the recipient there. */
export type BridgeDestination = { toChainId: number; toTokenAddress: Address; recipient: Address };

/**
 * Asks the bridge at `bridgeUrl` for the deposit address that forwards `wallet`'s withdrawal to `to`.
 * Throws `BridgeRefusedError` (non-2xx or another shape, with the bridge's message), `NetworkError`.
 */
export async function bridgeDepositAddress(
  bridgeUrl: string,
  wallet: Address,
  to: BridgeDestination,
  fetchFn?: typeof fetch,
): Promise<Address> {
  const body = JSON.stringify({
    address: wallet,
    toChainId: to.toChainId,
    toTokenAddress: to.toTokenAddress,
    recipientAddr: to.recipient,
  });
  const answer = await requestJson(`${bridgeUrl}/withdraw`, { method: 'POST', body }, fetchFn);
  const p = v.safeParse(answerSchema, answer.body);
  if (answer.status < 200 || answer.status > 299 || !p.success) {
    const e = v.safeParse(v.object({ error: v.string() }), answer.body);
    throw new BridgeRefusedError(answer.status, e.success ? e.output.error.slice(0, 300) : '');
  }
  return getAddress(p.output.address.evm);
}

/**
 * The batch call that sends `units` of collateral (6 decimals) from the deposit wallet to `depositAddress` on
 * `chainId`.
 */
export function bridgeTransferCall(chainId: number, depositAddress: Address, units: bigint): WalletCall {
  return {
    target: venueContracts(chainId).collateral,
    value: '0',
    data: encodeFunctionData({ abi: ABI(), functionName: 'transfer', args: [depositAddress, units] }),
  };
}

/** The bridge refused the withdraw request or answered in another shape; nothing was signed. */
export class BridgeRefusedError extends BaseError {
  override name = 'Relayer.BridgeRefusedError';
  /** EIP-1474 -32003 "transaction rejected" (never -32603, which dapp libraries retry). */
  static override readonly code = -32003;
  constructor(status: number, message: string) {
    super(`The bridge refused the withdrawal (${status})${message ? `: ${message}` : ''}. Nothing was signed.`, {
      data: { status, message },
    });
  }
}
