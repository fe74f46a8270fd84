/**
 * A signing account whose curve work waits for its first signature. Deriving an account from a private
 * key (viem `privateKeyToAccount`: the secp256k1 public key, and on a worker's first use the curve's
 * precomputed tables — tens of ms cold) is not needed to read a key's secret or its address: the proxy
 * key's address is stored beside it (`ProxyInfo.proxy`). A read that only authenticates (the proxy
 * headers of a venue read, PROTOCOL.md §1.4) or builds an artifact (`signerAddress`) never pays it, and the
 * vault's one-writer section is never held while it runs. Background only.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { ProxyKeyMismatchError } from './errors';

/**
 * An account at `address` that derives its key with `derive` (the vault's cached `privateKeyToAccount`) on
 * its first signature or `publicKey` read, then signs exactly as the derived account does. Every
 * signature first runs `usable` (the vault's check that the key may still sign: it throws — e.g.
 * `VaultLockedError` once a lock was called after the read — and nothing is signed or derived), then checks
 * that the derived account's address is `address`: a stored address that is not the key's refuses to sign
 * (`ProxyKeyMismatchError`). Both are thrown synchronously by `publicKey` and rejected by every signing
 * method, so nothing is ever signed for an address other than the one this account shows.
 */
export function deferredAccount(
  address: Address,
  derive: () => LocalAccount,
  usable: () => void = () => undefined,
): LocalAccount {
  let derived: LocalAccount | undefined;
  const key = (): LocalAccount => {
    usable();
    const a = (derived ??= derive());
    if (a.address.toLowerCase() !== address.toLowerCase()) throw new ProxyKeyMismatchError();
    return a;
  };
  const account: LocalAccount = {
    address,
    type: 'local',
    source: 'privateKey',
    get publicKey(): Hex {
      return key().publicKey;
    },
    sign: async (p) => {
      const a = key();
      if (!a.sign) throw new ProxyKeyMismatchError();
      return a.sign(p);
    },
    signAuthorization: async (p) => {
      const a = key();
      if (!a.signAuthorization) throw new ProxyKeyMismatchError();
      return a.signAuthorization(p);
    },
    signMessage: async (p) => key().signMessage(p),
    signTransaction: async (tx, o) => key().signTransaction(tx, o),
    signTypedData: async (td) => key().signTypedData(td),
  };
  return account;
}
