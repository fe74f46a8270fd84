import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { openDB } from 'idb';
import { KdfParamsError, DecryptError, type KdfParams } from './crypto';
import { MIGRATIONS, openVaultDb, V1, type Migration, type VaultMeta } from './db';
import {
  TamperedRecordError,
  BackupInvalidError,
  ProxyKeyMismatchError,
  UnlockBackoffError,
  VaultLockedError,
  WeakPasswordError,
  WrongPasswordError,
} from './errors';
import { memorySessionStore, Vault } from './vault';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
let n = 0;
const PASSWORD = 'correct horse battery';

async function fresh(opts: { kdf?: KdfParams } = {}) {
  const name = `vault-test-${n++}`;
  const db = await openVaultDb(name);
  const clock = { now: 1_800_000_000_000 };
  const session = memorySessionStore();
  const make = (kdf = opts.kdf ?? FAST) => new Vault({ db, session, now: () => clock.now, kdf, bounds: BOUNDS });
  return { name, db, clock, session, vault: make(), make };
}

describe('Vault lifecycle', () => {
  it('creates, locks, refuses the wrong password, and unlocks with the right one', async () => {
    const { vault } = await fresh();
    await expect(vault.create('short')).rejects.toBeInstanceOf(WeakPasswordError);
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey('main');
    await vault.lock();
    expect(vault.unlocked).toBe(false);
    await expect(vault.ownerAccount(owner.address)).rejects.toBeInstanceOf(VaultLockedError);
    await expect(vault.unlock('wrong password!')).rejects.toBeInstanceOf(WrongPasswordError);
    expect((await vault.status()).unlocked).toBe(false);
  });

  it('backs off 1 s, 2 s, 4 s after wrong passwords, and the delay survives a worker restart', async () => {
    const { vault, clock, make } = await fresh();
    await vault.create(PASSWORD);
    await vault.lock();
    await expect(vault.unlock('nope nope nope')).rejects.toMatchObject({ retryAfterMs: 1000 });
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    clock.now += 1000;
    await expect(vault.unlock('nope nope nope')).rejects.toMatchObject({ retryAfterMs: 2000 });
    const restarted = make();
    await expect(restarted.unlock(PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    expect((await restarted.status()).retryAfterMs).toBe(2000);
    clock.now += 2000;
    await expect(restarted.unlock('nope nope nope')).rejects.toMatchObject({ retryAfterMs: 4000 });
    clock.now += 4000;
    await restarted.unlock(PASSWORD);
    expect(restarted.unlocked).toBe(true);
    expect((await restarted.status()).retryAfterMs).toBe(0);
  });

  it('restores the unlocked state after a worker restart from the session store, not after lock', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect((await restarted.ownerAccount(owner.address)).address).toBe(owner.address);
    await restarted.lock();
    expect(await make().restoreSession()).toBe(false);
  });

  it('refuses a session whose salt no longer matches the vault', async () => {
    const { vault, session, make } = await fresh();
    await vault.create(PASSWORD);
    const s = (await session.get())!;
    await session.set({ ...s, salt: btoa('another salt....') });
    expect(await make().restoreSession()).toBe(false);
    expect(await session.get()).toBeUndefined();
  });
});

describe('Vault.changePassword', () => {
  it('re-wraps only the master key; records stay readable under the new password', async () => {
    const { vault, db, clock } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const recordBefore = await db.get('secrets', `owner:${owner.address.toLowerCase()}`);
    await vault.changePassword(PASSWORD, 'a brand new password');
    expect(await db.get('secrets', `owner:${owner.address.toLowerCase()}`)).toEqual(recordBefore);
    await vault.lock();
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(WrongPasswordError);
    clock.now += 1000;
    await vault.unlock('a brand new password');
    expect((await vault.ownerAccount(owner.address)).address).toBe(owner.address);
  });

  it('leaves the old password working when it crashes before commit', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await expect(
      vault.changePassword(PASSWORD, 'a brand new password', {
        beforeCommit: () => {
          throw new Error('simulated crash');
        },
      }),
    ).rejects.toThrow('simulated crash');
    const restarted = make();
    await restarted.unlock(PASSWORD);
    expect((await restarted.ownerAccount(owner.address)).address).toBe(owner.address);
  });

  it('refuses a wrong old password and changes nothing', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    await expect(vault.changePassword('not the password', 'a brand new password')).rejects.toBeInstanceOf(WrongPasswordError);
    await make().unlock(PASSWORD);
  });
});

describe('Vault records', () => {
  it('detects a tampered record, a swapped record, a moved record and a rolled-back record', async () => {
    const { vault, db } = await fresh();
    await vault.create(PASSWORD);
    const a = await vault.generateOwnerKey();
    const b = await vault.generateOwnerKey();
    const ra = (await db.get('secrets', `owner:${a.address.toLowerCase()}`))!;
    const rb = (await db.get('secrets', `owner:${b.address.toLowerCase()}`))!;
    // Tamper: flip one ciphertext bit.
    const ct = ra.sealed.ct.slice();
    ct[0] = ct[0]! ^ 1;
    await db.put('secrets', { ...ra, sealed: { ...ra.sealed, ct } });
    await expect(vault.ownerAccount(a.address)).rejects.toBeInstanceOf(TamperedRecordError);
    // Swap: b's sealed secret under a's id.
    await db.put('secrets', { ...ra, sealed: rb.sealed });
    await expect(vault.ownerAccount(a.address)).rejects.toBeInstanceOf(TamperedRecordError);
    // Put a's record back as it was: it reads again.
    await db.put('secrets', ra);
    expect((await vault.ownerAccount(a.address)).address).toBe(a.address);
    // Move: a's record re-assigned to another account.
    await db.put('secrets', { ...rb, account: a.address.toLowerCase() });
    await expect(vault.ownerAccount(b.address)).rejects.toBeInstanceOf(DecryptError);
    // Roll back: a proxy record replaced by its older copy (an older secret) is refused, also after a restart.
    const owner = a.address;
    const proxyKey = generatePrivateKey();
    await vault.putProxy({ account: owner, privateKey: proxyKey, secret: 'old-secret', expiry: 9_000_000_000_000 });
    const id = `proxy:${privateKeyToAccount(proxyKey).address.toLowerCase()}`;
    const old = (await db.get('secrets', id))!;
    await vault.putProxy({ account: owner, privateKey: proxyKey, secret: 'new-secret', expiry: 9_000_000_000_001 });
    await db.put('secrets', old);
    await expect(vault.proxyFor(owner)).rejects.toBeInstanceOf(TamperedRecordError);
    await vault.lock();
    await vault.unlock(PASSWORD);
    await expect(vault.proxyFor(owner)).rejects.toMatchObject({ name: 'Vault.TamperedRecordError', shortMessage: expect.stringContaining('Nothing was signed') });
  });

  it('never stores a private key, proxy secret or API secret in clear', async () => {
    const { vault, db } = await fresh();
    await vault.create(PASSWORD);
    const pk = generatePrivateKey();
    const owner = await vault.importOwnerKey(pk);
    const proxyKey = generatePrivateKey();
    await vault.putProxy({ account: owner.address, privateKey: proxyKey, secret: 'proxy-secret-XYZ', expiry: 1_900_000_000_000 });
    await vault.putClobCredentials({ account: owner.address, apiKey: 'api-key-ABC', secret: 'clob-secret-QRS', passphrase: 'pass-LMN', nonce: 0 });
    const dump = JSON.stringify(await db.getAll('secrets'), (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    for (const secret of [pk.slice(2), proxyKey.slice(2), 'proxy-secret-XYZ', 'clob-secret-QRS', 'pass-LMN', 'api-key-ABC']) {
      expect(dump).not.toContain(secret);
    }
    expect((await vault.proxyFor(owner.address)).secret).toBe('proxy-secret-XYZ');
    expect((await vault.clobCredentials(owner.address)).secret).toBe('clob-secret-QRS');
  });

  it('refuses a proxy key that does not match its proxy address', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await expect(
      vault.putProxy({ account: owner.address, privateKey: generatePrivateKey(), proxy: other, secret: 's', expiry: 1 }),
    ).rejects.toBeInstanceOf(ProxyKeyMismatchError);
    expect(await vault.listProxies(owner.address)).toEqual([]);
  });

  it('picks the unexpired proxy with the latest expiry', async () => {
    const { vault, clock } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.putProxy({ account: owner.address, privateKey: generatePrivateKey(), secret: 'old', expiry: clock.now - 1 });
    await vault.putProxy({ account: owner.address, privateKey: generatePrivateKey(), secret: 'new', expiry: clock.now + 1000 });
    expect((await vault.proxyFor(owner.address)).secret).toBe('new');
  });
});

describe('Vault KDF parameters', () => {
  it('refuses stored parameters outside their bounds without deriving anything', async () => {
    const { vault, db } = await fresh();
    await vault.create(PASSWORD);
    await vault.lock();
    const meta = (await db.get('meta', 'vault')) as VaultMeta;
    await db.put('meta', { ...meta, kdf: { ...meta.kdf, N: 2 ** 30 } });
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(KdfParamsError);
    await db.put('meta', { ...meta, kdf: { ...meta.kdf, name: 'pbkdf2' } as never });
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(KdfParamsError);
    expect((await vault.status()).retryAfterMs).toBe(0);
  });

  it('raises the KDF cost by re-wrapping on unlock when the defaults grow', async () => {
    const { vault, db, make } = await fresh();
    await vault.create(PASSWORD);
    await vault.lock();
    const stronger = make({ ...FAST, N: 2 ** 11 });
    await stronger.unlock(PASSWORD);
    expect(((await db.get('meta', 'vault')) as VaultMeta).kdf.N).toBe(2 ** 11);
    await stronger.lock();
    await stronger.unlock(PASSWORD);
  });
});

describe('Vault backup', () => {
  it('exports an encrypted backup that restores on a fresh profile with the password only', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const pk = generatePrivateKey();
    const owner = await vault.importOwnerKey(pk);
    const backup = await vault.exportBackup();
    expect(backup).not.toContain(pk.slice(2));
    const other = await fresh();
    await expect(other.vault.restoreBackup(backup, 'wrong password!!')).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(other.vault.restoreBackup('{"format":"nope"}', PASSWORD)).rejects.toBeInstanceOf(BackupInvalidError);
    await other.vault.restoreBackup(backup, PASSWORD);
    expect((await other.vault.ownerAccount(owner.address)).address).toBe(owner.address);
    await other.vault.lock();
    await other.vault.unlock(PASSWORD);
  });
});

describe('vault database migrations', () => {
  it('upgrades a v1 database to a v2 fixture, keeping its records', async () => {
    const name = `migrate-${n++}`;
    const v1 = await openVaultDb(name, [V1]);
    await v1.put('settings', { autoLockMinutes: 5 }, 'prefs');
    await v1.put('connections', { origin: 'https://a.example', accounts: [], connectedAt: 1 });
    v1.close();
    const V2_FIXTURE: Migration = {
      version: 2,
      migrate(_db, tx) {
        (tx.objectStore('connections') as unknown as IDBObjectStore).createIndex('byConnectedAt', 'connectedAt');
        void tx.objectStore('settings').put({ autoLockMinutes: 5, theme: 'system' }, 'prefs');
      },
    };
    const v2 = await openVaultDb(name, [...MIGRATIONS, V2_FIXTURE]);
    expect(v2.version).toBe(2);
    expect(await v2.get('settings', 'prefs')).toEqual({ autoLockMinutes: 5, theme: 'system' });
    const raw = await openDB(name);
    expect([...raw.transaction('connections').store.indexNames]).toContain('byConnectedAt');
    expect(await v2.get('connections', 'https://a.example')).toMatchObject({ connectedAt: 1 });
    raw.close();
    v2.close();
  });
});
