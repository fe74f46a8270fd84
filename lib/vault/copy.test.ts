/**
 * The vault's second copy (`./copy.ts`), as the other side would break it: a browser that discards the
 * vault's database, a disk that rolls writes back, a full disk under a write, a copy that cannot be
 * written. Each asserts that exactly one password opens the vault, every key the person was told was
 * saved is there, and nothing is half-written. Vaults on fake IndexedDB, the copy in memory.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { KdfParams } from './crypto';
import { openVaultDb, type VaultDb } from './db';
import { WrongPasswordError } from './errors';
import { memoryCopy } from '../../test/kits/vault-copy';
import { memorySessionStore, Vault } from './vault';
import { readVaultCopy, type VaultCopy, type VaultCopyStore } from './copy';
import { VaultCopyError, VaultCopyExistsError, VaultWriteError } from './errors';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const PASSWORD = 'correct horse battery';
let n = 0;

/** The vaults' clock (Unix ms): a test moves it past a password back-off. */
const clock = { now: 1_800_000_000_000 };

/** A vault on database `name` with `copy` (a new worker on the same profile). */
async function vaultOn(name: string, copy: VaultCopyStore): Promise<{ db: VaultDb; vault: Vault }> {
  const db = await openVaultDb(name);
  return {
    db,
    vault: new Vault({ db, session: memorySessionStore(), now: () => clock.now, kdf: FAST, bounds: BOUNDS, copy }),
  };
}

/**
 * What the browser does to a database it finds damaged: gone (every connection to it closed), and a new empty one
 * opened in its place.
 */
async function discard(dbs: VaultDb[], name: string): Promise<void> {
  for (const db of dbs) db.close();
  await new Promise<void>((resolve, reject) => {
    const r = indexedDB.deleteDatabase(name);
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
  });
}

/** A person's vault: an owner key, its proxy key and order-book credentials, locked; what they were told was saved. */
async function personsVault() {
  const name = `vault-copy-${n++}`;
  const copy = memoryCopy();
  const { db, vault } = await vaultOn(name, copy);
  await vault.create(PASSWORD);
  const owner = await vault.importOwnerKey(generatePrivateKey(), 'main');
  const proxyKey = generatePrivateKey();
  await vault.putProxy({
    account: owner.address,
    privateKey: proxyKey,
    secret: 'proxy-secret',
    expiry: clock.now + 30 * 86_400_000,
  });
  await vault.putClobCredentials({
    account: owner.address,
    apiKey: 'api-key',
    secret: 'c2VjcmV0',
    passphrase: 'pass',
    nonce: 0,
  });
  return { name, copy, db, vault, owner, proxy: privateKeyToAccount(proxyKey).address };
}

describe("the vault's second copy", () => {
  it(
    'a vault whose database the browser discarded is restored ' +
      'from its copy with the password; no new vault is made over it',
    async () => {
      const p = await personsVault();
      await p.vault.lock();
      await discard([p.db], p.name);
      const { vault } = await vaultOn(p.name, p.copy);
      expect(await vault.status()).toMatchObject({ initialized: true, recoverable: true, unlocked: false });
      await expect(vault.create('another password')).rejects.toBeInstanceOf(VaultCopyExistsError);
      await expect(vault.unlock('not the password')).rejects.toBeInstanceOf(WrongPasswordError);
      expect((await vault.status()).recoverable).toBe(true);
      clock.now += 60_000; // past the back-off
      await vault.unlock(PASSWORD);
      expect(await vault.status()).toMatchObject({ initialized: true, recoverable: false, unlocked: true });
      expect((await vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
      expect((await vault.proxyFor(p.owner.address)).info.proxy.toLowerCase()).toBe(p.proxy.toLowerCase());
      expect(await vault.clobCredentials(p.owner.address)).toMatchObject({ apiKey: 'api-key', passphrase: 'pass' });
      // The restored vault locks and opens like any other.
      await vault.lock();
      await vault.unlock(PASSWORD);
      expect((await vault.listOwners()).length).toBe(1);
    },
  );

  it('after a password change exactly the new password opens the copy', async () => {
    const p = await personsVault();
    await p.vault.changePassword(PASSWORD, 'a new long password');
    await p.vault.lock();
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(WrongPasswordError);
    clock.now += 60_000; // past the back-off
    await vault.unlock('a new long password');
    expect((await vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
  });

  it('a vault older than its copy (writes the disk rolled back) is restored from the copy at unlock', async () => {
    const p = await personsVault();
    const before = { meta: await p.db.getAll('meta'), secrets: await p.db.getAll('secrets') };
    const second = await p.vault.importOwnerKey(generatePrivateKey(), 'second');
    await p.vault.lock();
    // The disk gives back the state before the second key.
    const tx = p.db.transaction(['meta', 'secrets'], 'readwrite');
    await tx.objectStore('meta').clear();
    await tx.objectStore('secrets').clear();
    for (const m of before.meta) await tx.objectStore('meta').put(m);
    for (const r of before.secrets) await tx.objectStore('secrets').put(r);
    await tx.done;
    const { vault } = await vaultOn(p.name, p.copy);
    expect((await vault.status()).recoverable).toBe(true);
    await vault.unlock(PASSWORD);
    expect((await vault.listOwners()).map((o) => o.address).sort()).toEqual([p.owner.address, second.address].sort());
  });

  it(
    'a write the browser refuses (a full disk) stores nothing, ' + 'keeps the vault and its copy, and says so in words',
    async () => {
      const p = await personsVault();
      const copyBefore = p.copy.value;
      const realTransaction = p.db.transaction.bind(p.db);
      (p.db as unknown as { transaction: unknown }).transaction = ((stores: never, mode: never) => {
        if (mode === 'readwrite') throw new DOMException('The disk is full', 'QuotaExceededError');
        return realTransaction(stores, mode);
      }) as unknown;
      const err = await p.vault.importOwnerKey(generatePrivateKey(), 'never saved').catch((e: unknown) => e);
      (p.db as unknown as { transaction: unknown }).transaction = realTransaction;
      expect(err).toBeInstanceOf(VaultWriteError);
      expect((err as VaultWriteError).shortMessage).toMatch(/Nothing was saved: the disk is full/);
      expect((await p.vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
      expect(p.copy.value).toEqual(copyBefore);
      await p.vault.lock();
      await p.vault.unlock(PASSWORD);
      expect((await p.vault.listOwners()).length).toBe(1);
    },
  );

  it(
    'a copy that cannot be written: the change holds, the ' + 'person is told, and the next start writes the copy',
    async () => {
      const p = await personsVault();
      p.copy.failNext = true;
      const key = generatePrivateKey();
      const err = await p.vault.importOwnerKey(key, 'second').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VaultCopyError);
      const second = privateKeyToAccount(key).address;
      expect((await p.vault.listOwners()).map((o) => o.address)).toContain(second);
      expect(
        JSON.parse((await readVaultCopy(p.copy))?.backup ?? '{}').secrets.some(
          (r: { meta: { address?: string } }) => r.meta.address === second,
        ),
      ).toBe(false);
      // The next start (a new worker) writes the copy from the vault, which is newer.
      const next = await vaultOn(p.name, p.copy);
      await next.vault.refreshCopy();
      await discard([p.db, next.db], p.name);
      const restored = await vaultOn(p.name, p.copy);
      await restored.vault.unlock(PASSWORD);
      expect((await restored.vault.listOwners()).map((o) => o.address)).toContain(second);
    },
  );

  it('a vault whose metadata the disk damaged is restored from its copy at unlock', async () => {
    const p = await personsVault();
    await p.vault.lock();
    const meta = await p.db.get('meta', 'vault');
    await p.db.put('meta', { ...(meta as object), wrapped: { iv: new Uint8Array(0), ct: 'garbage' } } as never);
    const { vault } = await vaultOn(p.name, p.copy);
    expect((await vault.status()).recoverable).toBe(true);
    await vault.unlock(PASSWORD);
    expect((await vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
  });
});
