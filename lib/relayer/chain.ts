/**
 * Which deposit wallet an owner has, read from a chain JSON-RPC the way
 * `RelayClient.deriveDepositWalletAddress()` does (PROTOCOL.md §4.2 "How … chooses", §4.3): the UUPS
 * address; the factory's `BEACON()` (`eth_call`, a revert or a short answer counts as no beacon); and,
 * when there is a beacon, `eth_getCode` of the UUPS address (code → UUPS, none → the beacon wallet).
 * One JSON-RPC 2.0 POST per call. Before that, `eth_chainId` must equal the order book's chain id — a
 * mismatch is refused, since the wrong chain could give a wrong address. The RPC URL is a setting
 * (`rpcUrl`, default the sandbox's `/rpc` stand-in). An RPC that cannot be reached, or answers anything
 * but the expected shapes, throws `ChainRpcUnavailableError`: no address is derived from it, and nothing
 * is shown as a place to send funds.
 */
import * as v from 'valibot';
import { zeroAddress, type Address, type Hex } from 'viem';
import { BaseError } from '../errors/base';
import { gatewayOf, requestJson } from '../http/json';
import { venueContracts } from './contracts';
import { beaconDepositWallet, FACTORY_BEACON_SELECTOR, uupsDepositWallet } from './wallet';

const hexSchema = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]*$/), v.maxLength(200_000));
const answerSchema = v.union([
  v.object({ result: hexSchema }),
  v.object({ error: v.object({ code: v.number(), message: v.optional(v.string()) }) }),
]);

/**
 * The deposit wallet the chain names for an owner: its address and whether it is the UUPS or the beacon one (with the
 * beacon).
 */
export type ChainDepositWallet = { address: Address; kind: 'uups' | 'beacon'; beacon: Address };

/**
 * Reads the deposit wallet of `owner` on `chainId` through the JSON-RPC at `rpcUrl` (see the module
 * docstring). Throws `ChainRpcUnavailableError` (unreachable, an error answer, a malformed answer, or
 * another chain id) and `InvalidFieldError` (`owner`, `chainId`).
 */
export async function readDepositWallet(
  rpcUrl: string,
  owner: Address,
  chainId: number,
  fetchFn: typeof fetch = fetch,
): Promise<ChainDepositWallet> {
  const uups = uupsDepositWallet(owner, chainId);
  const rpc = rpcOf(rpcUrl, fetchFn);
  await requireChain(rpc, rpcUrl, chainId);
  const factory = venueContracts(chainId).depositWalletFactory;
  const b = await rpc('eth_call', [{ to: factory, data: FACTORY_BEACON_SELECTOR }, 'latest']);
  // A revert (JSON-RPC error code 3) counts as no beacon, as in the official client; any other error is thrown.
  if ('error' in b && b.error.code !== 3)
    throw new ChainRpcUnavailableError(rpcUrl, 'it answered the factory read with an error');
  const beacon: Address = 'result' in b && b.result.length >= 66 ? `0x${b.result.slice(-40)}` : zeroAddress;
  if (beacon.toLowerCase() === zeroAddress) return { address: uups, kind: 'uups', beacon: zeroAddress };
  const code = await rpc('eth_getCode', [uups, 'latest']);
  if (!('result' in code)) throw new ChainRpcUnavailableError(rpcUrl, 'it answered eth_getCode with an error');
  if (code.result !== '0x') return { address: uups, kind: 'uups', beacon };
  return { address: beaconDepositWallet(owner, chainId, beacon), kind: 'beacon', beacon };
}

/**
 * One JSON-RPC 2.0 caller on `rpcUrl`: `{ result }` or `{ error }`; no answer or another shape throws
 * `ChainRpcUnavailableError`.
 */
function rpcOf(rpcUrl: string, fetchFn: typeof fetch) {
  let id = 0;
  return async (method: string, params: unknown[]): Promise<{ result: Hex } | { error: { code: number } }> => {
    let answer;
    try {
      answer = await requestJson(
        rpcUrl,
        { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) },
        fetchFn,
      );
    } catch (cause) {
      throw new ChainRpcUnavailableError(rpcUrl, 'it did not answer', cause);
    }
    const p = v.safeParse(answerSchema, answer.body);
    if (answer.status !== 200 || !p.success)
      throw new ChainRpcUnavailableError(rpcUrl, `it answered ${method} in an unexpected shape`);
    return 'result' in p.output ? { result: `0x${p.output.result.slice(2)}` } : p.output;
  };
}

/** `eth_chainId` must be `chainId` (another chain could give a wrong address or a wrong answer). */
async function requireChain(rpc: ReturnType<typeof rpcOf>, rpcUrl: string, chainId: number): Promise<void> {
  const chain = await rpc('eth_chainId', []);
  if (!('result' in chain) || BigInt(chain.result === '0x' ? 0 : chain.result) !== BigInt(chainId))
    throw new ChainRpcUnavailableError(rpcUrl, `it is not chain ${chainId}`);
}

/**
 * Whether the chain has code at `wallet` (`eth_getCode`, on `chainId`): a deposit wallet counts as
 * deployed only when the chain says so too, never on the relayer's `/deployed` alone.
 * Throws `ChainRpcUnavailableError` when the RPC cannot say.
 */
export async function walletHasCode(
  rpcUrl: string,
  wallet: Address,
  chainId: number,
  fetchFn: typeof fetch = fetch,
): Promise<boolean> {
  const rpc = rpcOf(rpcUrl, fetchFn);
  await requireChain(rpc, rpcUrl, chainId);
  const code = await rpc('eth_getCode', [wallet, 'latest']);
  if (!('result' in code)) throw new ChainRpcUnavailableError(rpcUrl, 'it answered eth_getCode with an error');
  return code.result !== '0x';
}

/**
 * The chain RPC (setting `rpcUrl`) could not give the deposit wallet: no answer, an error or malformed
 * answer, or another chain. No address is derived or shown; the person checks the RPC URL in Settings.
 */
export class ChainRpcUnavailableError extends BaseError {
  override name = 'Relayer.ChainRpcUnavailableError';
  static override readonly code = -32002;
  constructor(rpcUrl: string, reason: string, cause?: unknown) {
    super(
      `The chain RPC ${gatewayOf(rpcUrl)} could not tell the deposit ` +
        `wallet: ${reason}. No address is shown; check the RPC URL in Settings.`,
      { cause, data: { rpc: gatewayOf(rpcUrl) } },
    );
  }
}
