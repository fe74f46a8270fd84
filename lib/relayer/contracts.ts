/**
 * The venue's contracts for deposit wallets and the relayer, per chain (PROTOCOL.md §4.1, read in
 * `@polymarket/builder-relayer-client` 0.0.10 and `@polymarket/clob-client-v2` 1.1.0). Token approvals a
 * deposit-wallet batch may set go only to the exchanges listed here.
 */
import type { Address } from 'viem';
import { InvalidFieldError } from '../validation';

/** The contracts of one chain (137 or 80002). Addresses checksummed as PROTOCOL.md §4.1 prints them. */
export type VenueContracts = {
  chainId: number;
  depositWalletFactory: Address;
  /** UUPS implementation the factory clones (PROTOCOL.md §4.2). */
  depositWalletImplementation: Address;
  /** Exchange V2 (domain version "2"), standard markets. */
  exchangeV2: Address;
  /** Exchange V2 for negative-risk markets (domain version "2"). */
  negRiskExchangeV2: Address;
  /** Exchange V3 (domain version "3"; no negative-risk variant). */
  exchangeV3: Address;
  /** Collateral ERC-20 (6 decimals). */
  collateral: Address;
  /** ConditionalTokens (ERC-1155 outcome tokens; `redeemPositions`). */
  conditionalTokens: Address;
};

const FACTORY: Address = '0x00000000000Fb5C9ADea0298D729A0CB3823Cc07';
const SHARED = {
  depositWalletFactory: FACTORY,
  exchangeV2: '0xE111180000d2663C0091e4f400237545B87B996B',
  negRiskExchangeV2: '0xe2222d279d744050d28e00520010520000310F59',
  collateral: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
} as const;

const CONTRACTS: readonly VenueContracts[] = [
  {
    chainId: 137,
    ...SHARED,
    depositWalletImplementation: '0x58CA52ebe0DadfdF531Cde7062e76746de4Db1eB',
    exchangeV3: '0xe3333700cA9d93003F00f0F71f8515005F6c00Aa',
    conditionalTokens: '0x4D97DCd97eC945f40cF65F87097ACe5EA0476045',
  },
  {
    chainId: 80002,
    ...SHARED,
    depositWalletImplementation: '0x50a88fE9a441cB4c9c2aD6A2207CE2795C7D7Fbd',
    exchangeV3: '0x9fE6e61422AdB6F610d8597F9684b16912D50C3D',
    conditionalTokens: '0x69308FB512518e39F9b16112fA8d994F4e2Bf8bB',
  },
];

/** The venue's contracts on `chainId`. Throws `InvalidFieldError` (`chainId`) for a chain without deposit wallets. */
export function venueContracts(chainId: number): VenueContracts {
  const c = CONTRACTS.find((x) => x.chainId === chainId);
  if (!c) throw new InvalidFieldError({ field: 'chainId', reason: 'has no deposit-wallet contracts (137 or 80002)' });
  return c;
}

/** A spender / operator a deposit-wallet approval may name: the venue's exchanges on that chain, by name. */
export type ExchangeName = 'exchangeV2' | 'negRiskExchangeV2' | 'exchangeV3';

/** The exchange named by `address` on `chainId`, or undefined when it is not one of the venue's (PROTOCOL.md §4.1). */
export function exchangeNameOf(chainId: number, address: string): ExchangeName | undefined {
  const c = venueContracts(chainId);
  const a = address.toLowerCase();
  const names: readonly ExchangeName[] = ['exchangeV2', 'negRiskExchangeV2', 'exchangeV3'];
  return names.find((n) => c[n].toLowerCase() === a);
}
