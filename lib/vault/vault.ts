/**
 * The vault: the encrypted key records (owner keys, proxy keys with their secret, CLOB API credentials,
 * deposit-wallet builder credentials), on top of backup and restore (`lib/vault/backup.ts`), the vault's
 * states and password (`lib/vault/session.ts`: locked / trading session / unlocked, create, unlock, lock,
 * change password) and its sealed records (`lib/vault/records.ts`: the sealed index, one writer at a time;
 * the record kinds, `lib/vault/record-kinds.ts`). The master key's wrap and the password back-off:
 * `lib/vault/keys.ts`. A grant's stored uses are `lib/grants/use-records.ts` (on this vault's
 * `SealedRecords`). Background only.
 */
import * as v from 'valibot';
import { address, parseOrThrow } from '../validation';
import type { Hex, LocalAccount } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { KeyNotFoundError, ProxyKeyMismatchError, VaultLockedError, VaultNotInitializedError } from './errors';
import {
  clobInfoOf,
  depositMetaSchema,
  ownerMetaSchema,
  proxyInfoOf,
  type BuilderSecret,
  type ClobInfo,
  type ClobSecret,
  type DepositWalletInfo,
  type OwnerInfo,
  type ProxyInfo,
  type ProxySecret,
} from './record-kinds';
import { idsFrom } from './records';
import { VaultBackup } from './backup';
import { liveProxyOf } from './trading-session';

export type { ClobInfo, DepositWalletInfo, OwnerInfo, ProxyInfo } from './record-kinds';
export type { SealedRecords } from './records';
export { memorySessionStore, type SessionState, type SessionStore } from './session-store';
export { MIN_PASSWORD_LENGTH, type ChangePasswordHooks } from './keys';
export type { VaultOptions, VaultState } from './session';

/**
 * The vault (see the module docstring): states locked / session / unlocked (`VaultSession`), owner and
 * proxy keys, CLOB credentials and deposit wallets as sealed records, the sealed index, the audit key,
 * backup (`VaultBackup`). Every mutation runs through one writer lock. Errors: `lib/vault/errors.ts` and
 * `lib/vault/crypto.ts`.
 */
export class Vault extends VaultBackup {
  /**
   * The owner list as last read (every page request reads it, and the read waited behind the previous
   * order's grant writes in the same store): valid while `keyWrites` is unchanged — every write or
   * delete of a record other than a grant's bumps it before and after, so a list read across a write is
   * never kept.
   */
  private ownersHeld: { writes: number; list: OwnerInfo[] } | undefined;

  // ------------------------------------------------------------------------------------------
  // Owner keys

  /** Stores an owner private key (0x + 64 hex). Returns its address. Requires 'unlocked' (`VaultLockedError`). */
  async importOwnerKey(privateKey: Hex, label = ''): Promise<OwnerInfo> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    return this.exclusive(() => this.storeOwnerKey(privateKey, label));
  }

  /**
   * Generates and stores a new owner key (viem `generatePrivateKey`). Returns its address only. Requires 'unlocked'.
   */
  async generateOwnerKey(label = ''): Promise<OwnerInfo> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    return this.exclusive(() => this.storeOwnerKey(generatePrivateKey(), label));
  }

  private async storeOwnerKey(privateKey: Hex, label: string): Promise<OwnerInfo> {
    this.key();
    const account = privateKeyToAccount(privateKey);
    const info = { address: account.address, label, createdAt: this.now() };
    await this.put(
      'owner',
      `owner:${account.address.toLowerCase()}`,
      account.address,
      { address: account.address, label },
      { privateKey },
    );
    return info;
  }

  /**
   * Owner keys (metadata only; works in every state — in a trading session too, though only the password opens them).
   */
  async listOwners(): Promise<OwnerInfo[]> {
    const writes = this.keyWrites;
    const held = this.ownersHeld;
    if (held && held.writes === writes) return held.list.map((o) => ({ ...o }));
    const all = await this.db.getAll('secrets', idsFrom('owner:'));
    const list = all
      .filter((r) => r.kind === 'owner')
      .map((r) => {
        const m = parseOrThrow(ownerMetaSchema, r.meta, 'meta');
        return { address: m.address, label: m.label ?? '', createdAt: r.createdAt };
      });
    // Kept only when no key write began or ended during the read (each bumps `keyWrites` before and after).
    if (this.keyWrites === writes) this.ownersHeld = { writes, list: list.map((o) => ({ ...o })) };
    return list;
  }

  /**
   * The signing account of an owner key. Requires 'unlocked'. Background only — never send its key
   * anywhere. Once opened it is answered from memory while that is provably current (`lib/vault/held-keys.ts`).
   */
  async ownerAccount(address: string): Promise<LocalAccount> {
    const name = `owner:${address.toLowerCase()}`;
    const held = this.heldKeys.get<LocalAccount>(name, this.heldStamp(), this.now());
    if (held) return held;
    const since = this.heldKeys.since();
    return this.exclusive(async () => {
      const stamp = this.heldStamp();
      const { secret } = await this.read<{ privateKey: Hex }>(name);
      const signer = this.lockChecked(this.signerOf(secret.privateKey));
      this.heldKeys.set(name, since, stamp, this.heldStamp(), signer);
      return signer;
    });
  }

  /**
   * The owner private key, for a person who re-entered the password (reveal-after-reauth). Requires
   * 'unlocked' (`VaultLockedError` first, nothing counted); the password goes through the back-off
   * (`UnlockBackoffError`, `WrongPasswordError`).
   */
  async revealOwnerKey(address: string, password: string): Promise<Hex> {
    return this.exclusive(async () => {
      this.key();
      const meta = await this.meta();
      if (!meta) throw new VaultNotInitializedError();
      (await this.checkPassword(meta, password)).raw.fill(0);
      return (await this.read<{ privateKey: Hex }>(`owner:${address.toLowerCase()}`)).secret.privateKey;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Proxy keys

  /**
   * Stores a proxy key and its secret for `account`. When `proxy` is given, checks that `privateKey`
   * belongs to it (`ProxyKeyMismatchError`); a malformed `account` is an `InvalidFieldError`. `expiry` Unix ms.
   * Requires 'unlocked'.
   */
  async putProxy(input: {
    account: string;
    privateKey: Hex;
    secret: string;
    proxy?: string;
    expiry: number;
    label?: string;
  }): Promise<ProxyInfo> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    this.keyEnds.proxies++; // before queuing: a proxy key read before this call signs nothing after it
    return this.exclusive(async () => {
      this.key();
      const acct = privateKeyToAccount(input.privateKey);
      if (input.proxy && acct.address.toLowerCase() !== input.proxy.toLowerCase()) throw new ProxyKeyMismatchError();
      const id = `proxy:${acct.address.toLowerCase()}`;
      const info: ProxyInfo = {
        id,
        account: parseOrThrow(address, input.account, 'account'),
        proxy: acct.address,
        expiry: input.expiry,
        label: input.label ?? '',
      };
      await this.put(
        'proxy',
        id,
        input.account,
        { proxy: acct.address, expiry: input.expiry, label: info.label, account: input.account },
        {
          privateKey: input.privateKey,
          secret: input.secret,
        },
      );
      return info;
    });
  }

  /**
   * Proxy keys of `account` (or all), metadata only. In a trading session: only the kept ones (the
   * accounts of the live grants, unexpired when the session began) — the ones that can sign.
   */
  async listProxies(account?: string): Promise<ProxyInfo[]> {
    if (this.bundle)
      return this.bundle.proxies
        .map((p) => ({ ...p.info }))
        .filter((p) => !account || p.account.toLowerCase() === account.toLowerCase());
    const all = account
      ? await this.db.getAllFromIndex('secrets', 'byAccount', account.toLowerCase())
      : await this.db.getAll('secrets', idsFrom('proxy:'));
    return all.filter((r) => r.kind === 'proxy').map(proxyInfoOf);
  }

  /**
   * The unexpired proxy of `account` with the latest expiry: its signing account and secret. Background
   * only. Works in 'unlocked' and, for the kept accounts, in 'session'. Throws `KeyNotFoundError` (none
   * unexpired), `VaultLockedError` (locked, or an account the session did not keep), `TamperedRecordError`.
   * Once opened (or kept by a trading session) it is answered from memory while that is provably current
   * (`lib/vault/held-keys.ts`), so a granted order's read does not queue behind its own use write.
   */
  async proxyFor(account: string): Promise<{ info: ProxyInfo; signer: LocalAccount; secret: string }> {
    type Found = { info: ProxyInfo; signer: LocalAccount; secret: string };
    const name = `proxy:${account.toLowerCase()}`;
    const held = this.heldKeys.get<Found>(name, this.heldStamp(), this.now());
    if (held) return { ...held, info: { ...held.info } };
    const since = this.heldKeys.since();
    const ends = { ...this.keyEnds }; // as asked: a lock or a key change called while this read waits its turn ends it
    return this.exclusive(async () => {
      const now = this.now();
      const stamp = this.heldStamp();
      // A read of the same key queued before this one may have opened it meanwhile (a cold worker's first reads
      // come together); held only while nothing ended it since (`lib/vault/held-keys.ts`), as at the top.
      const opened = this.heldKeys.get<Found>(name, stamp, now);
      if (opened) return { ...opened, info: { ...opened.info } };
      let found: Found;
      if (this.bundle) {
        this.keptAccount(account);
        const live = liveProxyOf(this.bundle, account, now);
        if (!live) throw new KeyNotFoundError('unexpired proxy key');
        found = {
          info: { ...live.info },
          signer: this.proxySignerOf(live.privateKey, live.info.proxy, ends),
          secret: live.secret,
        };
      } else {
        this.key();
        const live = (await this.listProxies(account))
          .filter((p) => p.expiry > now)
          .sort((a, b) => b.expiry - a.expiry);
        if (!live[0]) throw new KeyNotFoundError('unexpired proxy key');
        const { secret } = await this.read<ProxySecret>(live[0].id);
        found = {
          info: live[0],
          signer: this.proxySignerOf(secret.privateKey, live[0].proxy, ends),
          secret: secret.secret,
        };
      }
      this.heldKeys.set(name, since, stamp, this.heldStamp(), { ...found, info: { ...found.info } }, found.info.expiry);
      return found;
    });
  }

  /**
   * Removes a proxy record. Requires 'unlocked' or 'locked' (a trading session needs the password: `VaultLockedError`).
   */
  async deleteProxy(proxy: string): Promise<void> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    this.keyEnds.proxies++; // before queuing: a proxy key read before this call signs nothing after it
    return this.exclusive(async () => {
      if (this.sk) throw new VaultLockedError({ inSession: true });
      await this.remove([`proxy:${proxy.toLowerCase()}`]);
    });
  }

  // ------------------------------------------------------------------------------------------
  // CLOB credentials

  /**
   * Stores CLOB API credentials of `account` (with nonce, signature type and funder). Requires 'unlocked';
   * `InvalidFieldError` (`account`, `funder`) for a malformed address.
   */
  async putClobCredentials(input: {
    account: string;
    apiKey: string;
    secret: string;
    passphrase: string;
    nonce: number;
    signatureType?: 0 | 1 | 2 | 3;
    funder?: string | null;
  }): Promise<ClobInfo> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    return this.exclusive(async () => {
      this.key();
      const id = `clob:${input.account.toLowerCase()}`;
      const info: ClobInfo = {
        id,
        account: parseOrThrow(address, input.account, 'account'),
        nonce: input.nonce,
        signatureType: input.signatureType ?? 0,
        funder: parseOrThrow(v.nullable(address), input.funder ?? null, 'funder'),
      };
      await this.put(
        'clob',
        id,
        input.account,
        { account: input.account, nonce: info.nonce, signatureType: info.signatureType, funder: info.funder },
        {
          apiKey: input.apiKey,
          secret: input.secret,
          passphrase: input.passphrase,
        },
      );
      return info;
    });
  }

  /**
   * CLOB credentials of `account`. Background only. Works in 'unlocked' and, for the kept accounts, in
   * 'session'. Throws `KeyNotFoundError`, `VaultLockedError`, `TamperedRecordError`. Once opened (or kept by
   * a trading session) they are answered from memory while that is provably current (`lib/vault/held-keys.ts`).
   */
  async clobCredentials(
    account: string,
  ): Promise<{ info: ClobInfo; apiKey: string; secret: string; passphrase: string }> {
    type Found = { info: ClobInfo; apiKey: string; secret: string; passphrase: string };
    const name = `clob:${account.toLowerCase()}`;
    const held = this.heldKeys.get<Found>(name, this.heldStamp(), this.now());
    if (held) return { ...held, info: { ...held.info } };
    const since = this.heldKeys.since();
    return this.exclusive(async () => {
      const stamp = this.heldStamp();
      const opened = this.heldKeys.get<Found>(name, stamp, this.now()); // opened by a read before it, as in proxyFor
      if (opened) return { ...opened, info: { ...opened.info } };
      let found: Found;
      if (this.bundle) {
        this.keptAccount(account);
        const kept = this.bundle.clob.find((c) => c.info.account.toLowerCase() === account.toLowerCase());
        if (!kept) throw new KeyNotFoundError('CLOB API credential');
        found = { ...kept, info: { ...kept.info } };
      } else {
        const { rec, secret } = await this.read<ClobSecret>(name);
        found = { info: clobInfoOf(rec), ...secret };
      }
      this.heldKeys.set(name, since, stamp, this.heldStamp(), { ...found, info: { ...found.info } });
      return found;
    });
  }

  /**
   * The signature type of `account`'s stored CLOB credentials (0 EOA, 1 proxy, 2 Safe, 3 deposit wallet;
   * clear metadata, works while locked; in a trading session: kept ones only), or undefined when none.
   */
  async clobSignatureType(account: string): Promise<0 | 1 | 2 | 3 | undefined> {
    if (this.bundle)
      return this.bundle.clob.find((c) => c.info.account.toLowerCase() === account.toLowerCase())?.info.signatureType;
    const rec = await this.db.get('secrets', `clob:${account.toLowerCase()}`);
    return rec?.kind === 'clob' ? clobInfoOf(rec).signatureType : undefined;
  }

  /**
   * Which keys `account` has stored, in every state (clear metadata only, nothing opened): an unexpired
   * proxy key (`proxy`), only expired ones (`expiredProxy`), order-book credentials. What panic names for
   * an account whose keys a trading session or the lock keeps sealed, or whose proxy key expired.
   */
  async storedKeys(account: string): Promise<{ proxy: boolean; expiredProxy: boolean; clob: boolean }> {
    const recs = await this.db.getAllFromIndex('secrets', 'byAccount', account.toLowerCase());
    const now = this.now();
    const proxies = recs.filter((r) => r.kind === 'proxy').map((r) => proxyInfoOf(r).expiry);
    const proxy = proxies.some((e) => e > now);
    return { proxy, expiredProxy: !proxy && proxies.length > 0, clob: recs.some((r) => r.kind === 'clob') };
  }

  /** Whether CLOB credentials are stored for `account` (works while locked; in a trading session: kept ones only). */
  async hasClobCredentials(account: string): Promise<boolean> {
    if (this.bundle) return this.bundle.clob.some((c) => c.info.account.toLowerCase() === account.toLowerCase());
    return !!(await this.db.get('secrets', `clob:${account.toLowerCase()}`));
  }

  // ------------------------------------------------------------------------------------------
  // Deposit wallets: the owner key's deposit wallet (clear metadata) and the builder API
  // credentials that authorise its relayer requests (sealed like API credentials). Record `deposit:<owner>`.

  /**
   * Stores `account`'s deposit wallet and builder credentials (replacing any). Requires 'unlocked'; `InvalidFieldError`
   * (`account`, `wallet`, `beacon`).
   */
  async putDepositWallet(input: {
    account: string;
    wallet: string;
    kind: 'uups' | 'beacon';
    beacon: string;
    builder: { key: string; secret: string; passphrase: string };
  }): Promise<DepositWalletInfo> {
    this.heldKeys.clear(); // before queuing: a key read from memory never passes this call
    return this.exclusive(async () => {
      this.key();
      const meta = parseOrThrow(depositMetaSchema, {
        account: input.account,
        wallet: input.wallet,
        kind: input.kind,
        beacon: input.beacon,
      });
      await this.put('deposit', `deposit:${meta.account.toLowerCase()}`, meta.account, meta, {
        key: input.builder.key,
        secret: input.builder.secret,
        passphrase: input.builder.passphrase,
      });
      return meta;
    });
  }

  /**
   * `account`'s deposit wallet (clear metadata; works while locked), or undefined. Read before every
   * order-book signature, so it is held in memory like the keys beside it (`HeldKeys`: while unlocked or
   * in a trading session, until a key record is written or deleted, or the state changes), absence included.
   */
  async depositWallet(account: string): Promise<DepositWalletInfo | undefined> {
    const name = `deposit:${account.toLowerCase()}`;
    const held = this.heldKeys.get<{ info: DepositWalletInfo | undefined }>(name, this.heldStamp(), this.now());
    if (held) return held.info && { ...held.info };
    const since = this.heldKeys.since();
    const stamp = this.heldStamp();
    const rec = await this.db.get('secrets', name);
    const info = rec?.kind === 'deposit' ? parseOrThrow(depositMetaSchema, rec.meta, 'meta') : undefined;
    this.heldKeys.set(name, since, stamp, this.heldStamp(), { info: info && { ...info } });
    return info;
  }

  /**
   * The builder credentials of `account`'s deposit wallet. Background only. Works in 'unlocked' and, for
   * the kept accounts, in 'session' (carried in the bundle like API credentials). Throws
   * `KeyNotFoundError`, `VaultLockedError`, `TamperedRecordError`.
   */
  async builderCredentials(account: string): Promise<BuilderSecret> {
    return this.exclusive(async () => {
      if (this.bundle) {
        this.keptAccount(account);
        const found = this.bundle.deposit?.find((d) => d.account === account.toLowerCase());
        if (!found) throw new KeyNotFoundError('builder credential');
        return { key: found.key, secret: found.secret, passphrase: found.passphrase };
      }
      return (await this.read<BuilderSecret>(`deposit:${account.toLowerCase()}`)).secret;
    });
  }
}
