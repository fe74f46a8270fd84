/**
 * Signing accounts of keys opened since the last lock, by private key: deriving an account's public key
 * costs about a millisecond per signature, so a key already opened keeps its account (at most 64; the
 * vault empties the cache at lock and when entering a trading session).
 */
import type { Hex, LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** The cache (see the module docstring). */
export class SignerCache {
  private readonly accounts = new Map<Hex, LocalAccount>();

  /** The signing account of `privateKey`, derived at its first use. */
  accountOf(privateKey: Hex): LocalAccount {
    let a = this.accounts.get(privateKey);
    if (!a) {
      a = privateKeyToAccount(privateKey);
      if (this.accounts.size >= 64) this.accounts.clear();
      this.accounts.set(privateKey, a);
    }
    return a;
  }

  /** Forgets every account. */
  clear(): void {
    this.accounts.clear();
  }
}
