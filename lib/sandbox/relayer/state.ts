/**
 * What the sandbox relayer's transactions change "on chain", kept in memory (the sandbox has no chain):
 * deposit wallets and their owners, the owners' relayer nonces, the approvals a batch set, market
 * resolutions, builder API keys, the bridge's withdrawal deposit addresses, and the relayer's transaction rows
 * (PROTOCOL.md §4.4). Effects of a transaction apply when it is mined (`settle`); states follow the clock: NEW, then
 * EXECUTED at half the mining time, MINED at `mineMs`, CONFIRMED at twice it — or FAILED at `mineMs` with a reason, or
 * INVALID at once (refused when submitted, with a reason).
 */
import { encodeAbiParameters, getAddress, keccak256, type Address, type Hex } from 'viem';
import type { ExchangeName } from '../../relayer/contracts';

/** One deposit wallet: its owner EOA and whether its creation is mined. Addresses lowercase. */
export type DepositWalletRec = { address: string; owner: string; deployed: boolean };

/** Builder API credentials, issued to an order-book API key's address (`owner`, lowercase); times Unix ms. */
export type BuilderKeyRec = {
  key: string;
  secret: string;
  passphrase: string;
  owner: string;
  createdAt: number;
  revokedAt: number | null;
};

/**
 * A bridge withdrawal route (the bridge's `POST /withdraw`): collateral sent to its deposit address is
 * forwarded to `recipient` on `toChainId` as `toToken`. `wallet` (the source) and addresses lowercase.
 */
export type BridgeRoute = { wallet: string; toChainId: number; toToken: string; recipient: string };

/** The relayer's transaction states (enum `RelayerTransactionState`). */
export type RelayerState =
  'STATE_NEW' | 'STATE_EXECUTED' | 'STATE_MINED' | 'STATE_CONFIRMED' | 'STATE_FAILED' | 'STATE_INVALID';

/**
 * One relayer transaction. `effect` runs once when mined and answers a failure reason (or undefined);
 * `error` holds the reason of a FAILED or INVALID one. `submitted` Unix ms.
 */
export type RelayerTxRec = {
  id: string;
  type: 'WALLET-CREATE' | 'WALLET';
  from: Address;
  to: Address;
  proxyAddress: Address;
  data: Hex;
  nonce: string;
  hash: Hex;
  builderKey: string;
  submitted: number;
  outcome: 'pending' | 'mined' | 'failed' | 'invalid';
  error?: string;
  effect: () => string | undefined;
};

/** The relayer's in-memory chain stand-in for one sandbox. */
export class RelayerChain {
  /** Deposit wallets by address (lowercase). */
  readonly wallets = new Map<string, DepositWalletRec>();
  /** Relayer nonce (`GET /nonce?type=WALLET`) per owner EOA (lowercase). */
  readonly nonces = new Map<string, bigint>();
  /** Collateral allowances per wallet (lowercase) and exchange, base units. */
  readonly allowances = new Map<string, Map<ExchangeName, bigint>>();
  /** Outcome-token operator approvals per wallet (lowercase). */
  readonly operators = new Map<string, Set<ExchangeName>>();
  /** Winning outcome index per resolved market's condition id (lowercase). */
  readonly resolutions = new Map<string, 0 | 1>();
  /** Builder API keys by key. */
  readonly builderKeys = new Map<string, BuilderKeyRec>();
  readonly txs: RelayerTxRec[] = [];
  /** Bridge withdrawal deposit addresses (lowercase) and where they forward to. */
  readonly bridgeRoutes = new Map<string, BridgeRoute>();

  /** The bridge's deposit address for `route` (the same route always gets the same address), registered. */
  bridgeAddressFor(route: BridgeRoute): Address {
    const hash = keccak256(
      encodeAbiParameters(
        [{ type: 'string' }, { type: 'address' }, { type: 'uint256' }, { type: 'address' }, { type: 'address' }],
        [
          'sandbox-bridge',
          getAddress(route.wallet),
          BigInt(route.toChainId),
          getAddress(route.toToken),
          getAddress(route.recipient),
        ],
      ),
    );
    const address = getAddress(`0x${hash.slice(-40)}`);
    this.bridgeRoutes.set(address.toLowerCase(), route);
    return address;
  }

  /** The deposit wallet of `owner` (any address case), if one was created. */
  walletOf(owner: string): DepositWalletRec | undefined {
    const o = owner.toLowerCase();
    for (const w of this.wallets.values()) if (w.owner === o) return w;
    return undefined;
  }

  /** The owner's next relayer nonce (decimal string). */
  nonceOf(owner: string): string {
    return String(this.nonces.get(owner.toLowerCase()) ?? 0n);
  }

  /** Collateral allowance of `wallet` for the exchange `name` (base units). */
  allowance(wallet: string, name: ExchangeName): bigint {
    return this.allowances.get(wallet.toLowerCase())?.get(name) ?? 0n;
  }

  /** Whether `wallet` approved `name` as operator of its outcome tokens. */
  isOperator(wallet: string, name: ExchangeName): boolean {
    return this.operators.get(wallet.toLowerCase())?.has(name) ?? false;
  }

  /** Applies the effects of every transaction mined by `now` (once each, in submission order). */
  settle(now: number, mineMs: number): void {
    for (const tx of this.txs) {
      if (tx.outcome !== 'pending' || now - tx.submitted < mineMs) continue;
      const failure = tx.effect();
      tx.outcome = failure === undefined ? 'mined' : 'failed';
      if (failure !== undefined) tx.error = failure;
    }
  }

  /** The state of `tx` at `now` (call `settle` first). */
  stateOf(tx: RelayerTxRec, now: number, mineMs: number): RelayerState {
    if (tx.outcome === 'invalid') return 'STATE_INVALID';
    if (tx.outcome === 'failed') return 'STATE_FAILED';
    const age = now - tx.submitted;
    if (tx.outcome === 'pending') return age < mineMs / 2 ? 'STATE_NEW' : 'STATE_EXECUTED';
    return age < 2 * mineMs ? 'STATE_MINED' : 'STATE_CONFIRMED';
  }
}
