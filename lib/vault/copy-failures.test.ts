/**
 * The vault's second copy (`./copy.ts`) under attack: deletes the copy must follow, copies that are
 * damaged or of another vault, a copy or generation write failing in
 * the middle of create / unlock / change password / restore, grants, and what `status()` reads. Each
 * holds a claim of `README.md` "Your keys on a crash or a full disk". Vaults on fake IndexedDB, the copy in memory.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { KdfParams } from './crypto';
import { openVaultDb, type VaultDb } from './db';
import { memoryCopy } from '../../test/kits/vault-copy';
import { memorySessionStore, Vault, type SessionStore } from './vault';
import { readVaultCopy, type VaultCopy, type VaultCopyStore } from './copy';
import { VaultCopyError, VaultWriteError } from './errors';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const STRONGER: KdfParams = { ...FAST, N: 2 ** 11 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const PASSWORD = 'correct horse battery';
let n = 0;

const clock = { now: 1_800_000_000_000 };

async function vaultOn(
  name: string,
  copy: VaultCopyStore,
  o: { session?: SessionStore; kdf?: KdfParams } = {},
): Promise<{ db: VaultDb; vault: Vault }> {
  const db = await openVaultDb(name);
  return {
    db,
    vault: new Vault({
      db,
      session: o.session ?? memorySessionStore(),
      now: () => clock.now,
      kdf: o.kdf ?? FAST,
      bounds: BOUNDS,
      copy,
    }),
  };
}

async function discard(dbs: VaultDb[], name: string): Promise<void> {
  for (const db of dbs) db.close();
  await new Promise<void>((resolve, reject) => {
    const r = indexedDB.deleteDatabase(name);
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
  });
}

async function personsVault(o: { session?: SessionStore } = {}) {
  const name = `vault-copy-attack-${n++}`;
  const copy = memoryCopy();
  const session = o.session ?? memorySessionStore();
  const { db, vault } = await vaultOn(name, copy, { session });
  await vault.create(PASSWORD);
  const owner = await vault.importOwnerKey(generatePrivateKey(), 'main');
  const proxyKey = generatePrivateKey();
  await vault.putProxy({
    account: owner.address,
    privateKey: proxyKey,
    secret: 'proxy-secret',
    expiry: clock.now + 30 * 86_400_000,
  });
  return { name, copy, session, db, vault, owner, proxy: privateKeyToAccount(proxyKey).address };
}

const copiedIds = (c: VaultCopy | undefined): string[] =>
  (JSON.parse(c?.backup ?? '{"secrets":[]}') as { secrets: { id: string }[] }).secrets.map((r) => r.id);

describe('the second copy follows deletes', () => {
  it('a proxy key deleted while unlocked does not come back from the copy', async () => {
    const p = await personsVault();
    await p.vault.deleteProxy(p.proxy);
    expect(copiedIds(p.copy.value)).not.toContain(`proxy:${p.proxy.toLowerCase()}`);
    await p.vault.lock();
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    await vault.unlock(PASSWORD);
    expect(await vault.listProxies()).toEqual([]);
  });

  it('a proxy key deleted while locked does not come back from the copy', async () => {
    const p = await personsVault();
    await p.vault.lock();
    await p.vault.deleteProxy(p.proxy);
    expect(await p.vault.listProxies()).toEqual([]);
    // The browser discards the database before any later start rewrites the copy.
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    await vault.unlock(PASSWORD);
    expect((await vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
    expect(await vault.listProxies()).toEqual([]);
  });
});

describe('a copy that is damaged, of another vault, or replayed', () => {
  it('a copy whose backup is truncated is ignored while the vault is there: the password unlocks it', async () => {
    const p = await personsVault();
    await p.vault.lock();
    const c = p.copy.value!;
    p.copy.value = { ...c, generation: c.generation + 1, backup: c.backup.slice(0, 200) };
    await p.vault.unlock(PASSWORD);
    expect((await p.vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
  });

  it('a damaged copy with no vault does not block onboarding forever', async () => {
    const p = await personsVault();
    await p.vault.lock();
    p.copy.value = { ...p.copy.value!, backup: '{"format":"countersign-backup"' };
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    expect(await vault.status()).toMatchObject({ initialized: false, recoverable: false });
    await vault.create('a brand new password');
    expect((await vault.status()).unlocked).toBe(true);
  });

  it("another vault's copy with a higher generation does not lock the person out of theirs", async () => {
    const p = await personsVault();
    const other = await personsVault();
    await p.vault.lock();
    p.copy.value = { ...other.copy.value!, generation: 1_000 };
    // Another vault, another password: the person’s password is refused by that copy.
    await p.vault.unlock(PASSWORD);
    expect((await p.vault.listOwners()).map((o) => o.address)).toEqual([p.owner.address]);
    expect((await p.vault.status()).recoverable).toBe(false);
  });

  it(
    "a damaged copy is replaced by the next start's refresh; " +
      "another vault's is left until the unlocked vault writes its keys",
    async () => {
      const p = await personsVault();
      const other = await personsVault();
      const damaged = { ...p.copy.value!, generation: 1_000, backup: '{' };
      p.copy.value = damaged;
      await p.vault.refreshCopy();
      expect(copiedIds(p.copy.value)).toContain(`proxy:${p.proxy.toLowerCase()}`);
      // Another vault's copy: what this vault holds cannot be proven while locked, so the start leaves it.
      const foreign = { ...other.copy.value!, generation: 1_000 };
      p.copy.value = foreign;
      await p.vault.refreshCopy();
      expect(p.copy.value.backup).toBe(foreign.backup);
      // The next key write of the unlocked vault replaces it with this vault's.
      await p.vault.importOwnerKey(generatePrivateKey(), 'another');
      expect(copiedIds(p.copy.value)).toContain(`proxy:${p.proxy.toLowerCase()}`);
      expect(p.copy.value.backup).not.toBe(foreign.backup);
    },
  );
});

describe('a failure in the middle of a key-material change', () => {
  it(
    'a backup restore whose copy write fails leaves the ' + 'vault opened with the restored key: later keys are saved',
    async () => {
      const src = await personsVault();
      const backup = await src.vault.exportBackup();
      const p = await personsVault();
      p.copy.failNext = true;
      await expect(p.vault.restoreBackup(backup, PASSWORD)).rejects.toBeInstanceOf(VaultCopyError);
      // The change holds; whatever the state, a key the person is told was saved must open after a lock.
      if ((await p.vault.status()).state !== 'unlocked') await p.vault.unlock(PASSWORD);
      const later = await p.vault.importOwnerKey(generatePrivateKey(), 'later');
      await p.vault.lock();
      await p.vault.unlock(PASSWORD);
      expect((await p.vault.listOwners()).map((o) => o.address).sort()).toEqual(
        [src.owner.address, later.address].sort(),
      );
      await expect(p.vault.ownerAccount(later.address)).resolves.toBeDefined();
    },
  );

  it('a new vault whose copy fails is created and unlocked; the next start writes the copy', async () => {
    const name = `vault-copy-attack-${n++}`;
    const copy = memoryCopy();
    const { db, vault } = await vaultOn(name, copy);
    copy.failNext = true;
    await expect(vault.create(PASSWORD)).rejects.toBeInstanceOf(VaultCopyError);
    expect((await vault.status()).unlocked).toBe(true);
    await vault.refreshCopy();
    await vault.lock();
    await discard([db], name);
    const again = await vaultOn(name, copy);
    await again.vault.unlock(PASSWORD);
    expect((await again.vault.status()).unlocked).toBe(true);
  });

  it('a password change whose copy fails keeps the live state restorable by the next worker', async () => {
    const session = memorySessionStore();
    const p = await personsVault({ session });
    p.copy.failNext = true;
    await expect(p.vault.changePassword(PASSWORD, 'a new long password')).rejects.toBeInstanceOf(VaultCopyError);
    const next = new Vault({ db: p.db, session, now: () => clock.now, kdf: FAST, bounds: BOUNDS, copy: p.copy });
    expect(await next.restoreSession()).toBe(true);
    await next.lock();
    await next.unlock('a new long password');
  });

  it('an unlock that re-wraps a weaker KDF and whose copy fails still unlocks', async () => {
    const p = await personsVault();
    await p.vault.lock();
    const { vault } = await vaultOn(p.name, p.copy, { kdf: STRONGER });
    p.copy.failNext = true;
    await vault.unlock(PASSWORD).catch(() => undefined);
    expect((await vault.status()).unlocked).toBe(true);
    // The copy follows at the next start, with the same one password.
    await vault.refreshCopy();
    expect(JSON.parse(p.copy.value!.backup).meta.kdf.N).toBe(STRONGER.N);
  });
});

describe('grants, states and reads', () => {
  it('grants are never copied; a restore from the copy leaves no grant and a working vault', async () => {
    const p = await personsVault();
    await p.vault.exclusive(() =>
      p.vault.writeHead({ grant: { id: 'g1', account: p.owner.address.toLowerCase() } }, [], []),
    );
    expect(copiedIds(p.copy.value).some((id) => id.startsWith('grant'))).toBe(false);
    await p.vault.enterTradingSession({ accounts: [p.owner.address] });
    await p.vault.lock();
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    await vault.unlock(PASSWORD);
    expect(await vault.exclusive(() => vault.listHeads())).toEqual([]);
    await vault.enterTradingSession({ accounts: [p.owner.address] });
    expect((await vault.proxyFor(p.owner.address)).info.proxy.toLowerCase()).toBe(p.proxy.toLowerCase());
  });

  it('status() while unlocked or in a trading session does not read the copy', async () => {
    const p = await personsVault();
    p.copy.reads = 0;
    await p.vault.status();
    await p.vault.enterTradingSession({ accounts: [p.owner.address] });
    await p.vault.status();
    expect(p.copy.reads).toBe(0);
  });

  it('a wrong password against the copy counts in the back-off, and a right one after it restores', async () => {
    const p = await personsVault();
    await p.vault.lock();
    await discard([p.db], p.name);
    const { vault } = await vaultOn(p.name, p.copy);
    await expect(vault.unlock('not the password')).rejects.toThrow();
    expect((await vault.status()).retryAfterMs).toBeGreaterThan(0);
    await expect(vault.unlock(PASSWORD)).rejects.toThrow(); // too soon
    clock.now += 60_000;
    await vault.unlock(PASSWORD);
    expect((await vault.status()).retryAfterMs).toBe(0);
  });

  it('refreshCopy racing key writes leaves a copy with every key', async () => {
    const p = await personsVault();
    p.copy.failNext = true;
    const a = await p.vault.importOwnerKey(generatePrivateKey(), 'a').catch(() => undefined);
    const [, b] = await Promise.all([
      p.vault.refreshCopy(),
      p.vault.importOwnerKey(generatePrivateKey(), 'b'),
      p.vault.refreshCopy(),
    ]);
    const ids = copiedIds(p.copy.value);
    expect(a).toBeUndefined();
    expect(ids.filter((id) => id.startsWith('owner:')).length).toBe(3);
    expect(ids).toContain(`owner:${b.address.toLowerCase()}`);
    expect((await readVaultCopy(p.copy))!.generation).toBeGreaterThan(0);
  });
});
