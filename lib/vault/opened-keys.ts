/**
 * Keys opened from the vault and kept in memory, in the vault's class chain (`VaultRecords` →
 * `VaultCopied` → `VaultOpenedKeys` → `VaultSession` → `VaultBackup` → `Vault`): the ones held so that a
 * granted order's key read does not queue behind its own use write (`heldKeys`, `heldStamp`, `holdKept`;
 * when one may be served: `./held-keys.ts`), and signing accounts that refuse once a lock, or a proxy key
 * change, called after their read ends them (`keyEnds`, `lockChecked`, `proxySignerOf`).
 */
import type { Address, Hex, LocalAccount } from 'viem';
import { VaultCopied } from './copied';
import { deferredAccount } from './deferred-signer';
import { KeyNotFoundError, VaultLockedError } from './errors';
import { HeldKeys, stampOf, type HeldStamp } from './held-keys';
import { liveProxyOf } from './trading-session';

/** A vault's sealed records and second copy with the keys opened from them (see the module docstring). */
export class VaultOpenedKeys extends VaultCopied {
  /**
   * The keys opened last (proxy keys, owner keys, API credentials), so that a granted order's key read
   * does not queue behind its own use write: `lib/vault/held-keys.ts` says when one may be served. Every
   * call that changes keys, the master key or the state empties it before it queues.
   */
  protected heldKeys = new HeldKeys();
  /**
   * Calls made to `lock` and to delete, store or restore proxy keys: a proxy key read before one signs nothing after it
   * (`proxySignerOf`).
   */
  protected keyEnds = { locks: 0, proxies: 0 };

  /** No key is live (the state 'locked'): neither the master key nor a trading session's key. */
  private noKeyLive(): boolean {
    return !this.mk && !this.sk;
  }

  /**
   * An owner key's `signer`, refusing every signature (`VaultLockedError`) once a lock was called after this read, or
   * while the master key is not open — locked, or in a trading session (which keeps no owner key): an owner key read
   * before a lock or an auto-lock into a session signs nothing after it, even after an unlock.
   */
  protected lockChecked(signer: LocalAccount): LocalAccount {
    const { locks } = this.keyEnds;
    return deferredAccount(
      signer.address,
      () => signer,
      () => {
        if (this.keyEnds.locks !== locks || !this.masterKeyOpen()) throw new VaultLockedError();
      },
    );
  }

  /** Whether the master key is open (the vault unlocked; a trading session keeps only its bundle's keys). */
  private masterKeyOpen(): boolean {
    return !!this.mk;
  }

  /**
   * The signing account of a proxy key stored at `address` (`./deferred-signer.ts`): derived at its first signature,
   * outside the one-writer section; refuses when the key is not `address`'s (`ProxyKeyMismatchError`), once the vault
   * is locked or a lock was called after this read (`VaultLockedError`), and once a proxy key was deleted, stored or
   * restored after it (`KeyNotFoundError`); `ends`: the counts when the read was asked for (a read queued before a
   * delete call signs nothing after it), else now.
   */
  protected proxySignerOf(privateKey: Hex, address: Address, ends?: { locks: number; proxies: number }): LocalAccount {
    const { locks, proxies } = ends ?? this.keyEnds;
    const usable = () => {
      if (this.keyEnds.locks !== locks || this.noKeyLive()) throw new VaultLockedError();
      if (this.keyEnds.proxies !== proxies)
        throw new KeyNotFoundError('proxy key (deleted or replaced since it was read)');
    };
    return deferredAccount(address, () => this.signerOf(privateKey), usable);
  }

  /** The session bundle's part for `account`; `VaultLockedError` when no live grant names it. */
  protected keptAccount(account: string): void {
    if (!this.bundle?.accounts.includes(account.toLowerCase())) throw new VaultLockedError({ inSession: true });
  }

  /**
   * Holds the kept proxy keys and API credentials of the trading session just opened (call inside
   * `exclusive`, once `sk` and `bundle` are set): the session's first granted order then does not queue
   * behind its own use write either. What is held is what `Vault.proxyFor` / `Vault.clobCredentials` return in
   * 'session'. `since`: the holder's clear count once the calling transition cleared it (nothing is held when a change
   * such as a lock was called since: it is queued behind this transition).
   */
  protected holdKept(since: number): void {
    const b = this.bundle;
    const stamp = this.heldStamp();
    if (!b || !stamp) return;
    const now = this.now();
    for (const account of b.accounts) {
      const live = liveProxyOf(b, account, now);
      if (live)
        this.heldKeys.set(
          `proxy:${account}`,
          since,
          stamp,
          stamp,
          { info: { ...live.info }, signer: this.proxySignerOf(live.privateKey, live.info.proxy), secret: live.secret },
          live.info.expiry,
        );
      const clob = b.clob.find((c) => c.info.account.toLowerCase() === account);
      if (clob) this.heldKeys.set(`clob:${account}`, since, stamp, stamp, { ...clob, info: { ...clob.info } });
    }
  }

  /** The live state's stamp for held keys (`lib/vault/held-keys.ts`); undefined when locked. */
  protected heldStamp(): HeldStamp | undefined {
    return stampOf(this.mk ?? this.sk, this.keyWrites, this.mk ? undefined : this.bundle);
  }
}
