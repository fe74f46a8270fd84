/**
 * A new API user of the venue, as the official clients set one up against the sandbox:
 * an EOA, its order-book API key (`@polymarket/clob-client-v2` with `signatureType: 3`, `createOrDeriveApiKey`),
 * builder credentials from `POST /auth/builder-api-key`, and a `RelayClient` (`@polymarket/builder-relayer-client`)
 * whose chain RPC is the sandbox's `/rpc` stand-in. The clients send their own header names (`POLY_*`), which the
 * sandbox accepts: no shim.
 */
import {
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  maxUint256,
  parseAbi,
  type Address,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { polygonAmoy } from 'viem/chains';
import { ClobClient } from '@polymarket/clob-client-v2';
import { RelayClient } from '@polymarket/builder-relayer-client';
import { BuilderConfig } from '@polymarket/builder-signing-sdk';
import type { Harness } from '../kits/sandbox';
import { venueContracts } from '../../lib/relayer/contracts';

/** The chain id of the sandbox's order book and relayer. */
export const CHAIN = 80002;

/**
 * One new API user: EOA wallet client, L2 order-book client (the key's builder-key calls), builder creds, relayer
 * client.
 */
export type DepositUser = {
  wallet: WalletClient;
  eoa: Address;
  l2: ClobClient;
  builder: { key: string; secret: string; passphrase: string };
  relay: RelayClient;
};

/** Creates the user's API key and builder key, and a `RelayClient` on the sandbox relayer and RPC stand-in. */
export async function newDepositUser(h: Harness): Promise<DepositUser> {
  const account = privateKeyToAccount(generatePrivateKey());
  const wallet = createWalletClient({ account, transport: http('http://127.0.0.1:9') });
  // As a new API user sets up: a `signatureType: 3` client creates (or derives) its own API key, unmodified.
  const creds = await new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: wallet,
    signatureType: 3,
    useServerTime: true,
  }).createOrDeriveApiKey();
  if (!creds.key) throw new Error('createOrDeriveApiKey gave no key');
  const l2 = new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: wallet,
    creds,
    useServerTime: true,
    throwOnError: true,
  });
  const builder = await l2.createBuilderApiKey();
  const chain = defineChain({ ...polygonAmoy, rpcUrls: { default: { http: [`${h.url}/rpc`] } } });
  const relay = new RelayClient(
    `${h.url}/relayer`,
    CHAIN,
    wallet,
    new BuilderConfig({ localBuilderCreds: builder }),
    undefined,
    { chain },
  );
  return { wallet, eoa: account.address, l2, builder, relay };
}

const ABI = parseAbi([
  'function approve(address spender, uint256 amount)',
  'function setApprovalForAll(address operator, bool approved)',
  'function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] indexSets)',
]);
const c = venueContracts(CHAIN);

/**
 * A new user's setup batch (PROTOCOL.md §4.4): collateral approve(max) and CTF setApprovalForAll for both V2 exchanges.
 */
export function setupCalls(): { target: string; value: string; data: string }[] {
  return [c.exchangeV2, c.negRiskExchangeV2].flatMap((ex) => [
    {
      target: c.collateral,
      value: '0',
      data: encodeFunctionData({ abi: ABI, functionName: 'approve', args: [ex, maxUint256] }),
    },
    {
      target: c.conditionalTokens,
      value: '0',
      data: encodeFunctionData({ abi: ABI, functionName: 'setApprovalForAll', args: [ex, true] }),
    },
  ]);
}

/** A redeem call of both outcomes of `conditionId` (PROTOCOL.md §4.6). */
export function redeemCall(conditionId: `0x${string}`): { target: string; value: string; data: string } {
  return {
    target: c.conditionalTokens,
    value: '0',
    data: encodeFunctionData({
      abi: ABI,
      functionName: 'redeemPositions',
      args: [c.collateral, `0x${'0'.repeat(64)}`, conditionId, [1n, 2n]],
    }),
  };
}

/** A deadline one hour after the sandbox clock (Unix seconds, as the relayer client takes it). */
export function deadline(h: Harness): string {
  return String(Math.floor(h.clock.now / 1000) + 3600);
}
