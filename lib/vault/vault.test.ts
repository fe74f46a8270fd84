import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { openDB } from 'idb';
import { KdfParamsError, DecryptError, type KdfParams } from './crypto';
import { MIGRATIONS, openVaultDb, V1, type Migration, type VaultMeta } from './db';
import type { Grant, GrantUse } from '../grants/evaluate';
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
import { grantUseRecords } from '../grants/use-records';

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
    const { vault, make, clock } = await fresh();
    await vault.create(PASSWORD);
    await expect(vault.changePassword('not the password', 'a brand new password')).rejects.toBeInstanceOf(
      WrongPasswordError,
    );
    clock.now += 1000; // the back-off of the wrong password
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
    await expect(vault.proxyFor(owner)).rejects.toMatchObject({
      name: 'Vault.TamperedRecordError',
      shortMessage: expect.stringContaining('Nothing was signed'),
    });
  });

  it('never stores a private key, proxy secret or API secret in clear', async () => {
    const { vault, db } = await fresh();
    await vault.create(PASSWORD);
    const pk = generatePrivateKey();
    const owner = await vault.importOwnerKey(pk);
    const proxyKey = generatePrivateKey();
    await vault.putProxy({
      account: owner.address,
      privateKey: proxyKey,
      secret: 'proxy-secret-XYZ',
      expiry: 1_900_000_000_000,
    });
    await vault.putClobCredentials({
      account: owner.address,
      apiKey: 'api-key-ABC',
      secret: 'clob-secret-QRS',
      passphrase: 'pass-LMN',
      nonce: 0,
    });
    const dump = JSON.stringify(await db.getAll('secrets'), (_k, v) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
    );
    for (const secret of [
      pk.slice(2),
      proxyKey.slice(2),
      'proxy-secret-XYZ',
      'clob-secret-QRS',
      'pass-LMN',
      'api-key-ABC',
    ]) {
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
      vault.putProxy({
        account: owner.address,
        privateKey: generatePrivateKey(),
        proxy: other,
        secret: 's',
        expiry: 1,
      }),
    ).rejects.toBeInstanceOf(ProxyKeyMismatchError);
    expect(await vault.listProxies(owner.address)).toEqual([]);
  });

  it('picks the unexpired proxy with the latest expiry', async () => {
    const { vault, clock } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.putProxy({
      account: owner.address,
      privateKey: generatePrivateKey(),
      secret: 'old',
      expiry: clock.now - 1,
    });
    await vault.putProxy({
      account: owner.address,
      privateKey: generatePrivateKey(),
      secret: 'new',
      expiry: clock.now + 1000,
    });
    expect((await vault.proxyFor(owner.address)).secret).toBe('new');
  });

  it(
    'a proxy opened once (kept in memory for the page ' + 'path) follows every key write, expiry, lock and restore',
    async () => {
      const { vault, clock } = await fresh();
      await vault.create(PASSWORD);
      const owner = (await vault.generateOwnerKey()).address;
      const a = generatePrivateKey();
      const b = generatePrivateKey();
      await vault.putProxy({ account: owner, privateKey: a, secret: 'a', expiry: clock.now + 60_000 });
      expect((await vault.proxyFor(owner)).secret).toBe('a');
      expect((await vault.proxyFor(owner)).secret).toBe('a');
      // A newer proxy is used at once; deleting it falls back to the older one.
      await vault.putProxy({ account: owner, privateKey: b, secret: 'b', expiry: clock.now + 120_000 });
      expect((await vault.proxyFor(owner)).secret).toBe('b');
      await vault.deleteProxy(privateKeyToAccount(b).address);
      expect((await vault.proxyFor(owner)).secret).toBe('a');
      // The same proxy stored again with another secret (a re-import): the new secret.
      await vault.putProxy({ account: owner, privateKey: a, secret: 'a2', expiry: clock.now + 60_000 });
      expect((await vault.proxyFor(owner)).secret).toBe('a2');
      // Expired while held: refused.
      clock.now += 60_001;
      await expect(vault.proxyFor(owner)).rejects.toMatchObject({ name: 'Vault.KeyNotFoundError' });
      clock.now -= 60_001;
      expect((await vault.proxyFor(owner)).secret).toBe('a2');
      // Locked: refused; unlocked again: read afresh.
      await vault.lock();
      await expect(vault.proxyFor(owner)).rejects.toBeInstanceOf(VaultLockedError);
      await vault.unlock(PASSWORD);
      expect((await vault.proxyFor(owner)).secret).toBe('a2');
      // A lock asked while a write is still queued: a read asked after it is refused, not served from memory.
      const write = vault.putClobCredentials({ account: owner, apiKey: 'k', secret: 's', passphrase: 'p', nonce: 0 });
      const locking = vault.lock();
      await expect(vault.proxyFor(owner)).rejects.toBeInstanceOf(VaultLockedError);
      await Promise.all([write, locking]);
    },
  );
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

  it('stays unlocked across a worker restart after unlock re-wrapped the vault', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.lock();
    await make({ ...FAST, N: 2 ** 11 }).unlock(PASSWORD);
    const restarted = make({ ...FAST, N: 2 ** 11 });
    expect(await restarted.restoreSession()).toBe(true);
    expect((await restarted.ownerAccount(owner.address)).address).toBe(owner.address);
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
    other.clock.now += 1000; // the back-off of the wrong password
    await other.vault.restoreBackup(backup, PASSWORD);
    expect((await other.vault.ownerAccount(owner.address)).address).toBe(owner.address);
    await other.vault.lock();
    await other.vault.unlock(PASSWORD);
  });
});

describe('the owner list held in memory (page path)', () => {
  it('follows every key write: an import, a restore over it, and a write that overlaps a read', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const first = await vault.importOwnerKey(generatePrivateKey(), 'first');
    expect((await vault.listOwners()).map((o) => o.address)).toEqual([first.address]);
    // Held now: a second import must show at once.
    const second = await vault.importOwnerKey(generatePrivateKey(), 'second');
    expect((await vault.listOwners()).map((o) => o.address).sort()).toEqual([first.address, second.address].sort());
    // A list read while an import is being written is not kept past that write.
    const third = vault.importOwnerKey(generatePrivateKey(), 'third');
    const during = vault.listOwners();
    const added = await third;
    await during;
    expect((await vault.listOwners()).map((o) => o.address)).toContain(added.address);
    // A restore replaces the owners: the held list goes with them.
    const other = await fresh();
    await other.vault.create(PASSWORD);
    const only = await other.vault.importOwnerKey(generatePrivateKey(), 'only');
    const backup = await other.vault.exportBackup();
    await vault.restoreBackup(backup, PASSWORD);
    expect((await vault.listOwners()).map((o) => o.address)).toEqual([only.address]);
    // A caller changing the list it got does not change the held one.
    (await vault.listOwners())[0]!.label = 'changed';
    expect((await vault.listOwners())[0]!.label).toBe('only');
  });
});

describe('vault database migrations', () => {
  it('upgrades a v1 database through every shipped migration to a later fixture, keeping its records', async () => {
    const name = `migrate-${n++}`;
    const v1 = await openVaultDb(name, [V1]);
    await v1.put('settings', { autoLockMinutes: 5 }, 'prefs');
    await v1.put('connections', { origin: 'https://a.example', accounts: [], connectedAt: 1 });
    v1.close();
    const V2_FIXTURE: Migration = {
      version: MIGRATIONS[MIGRATIONS.length - 1]!.version + 1,
      migrate(_db, tx) {
        (tx.objectStore('connections') as unknown as IDBObjectStore).createIndex('byConnectedAt', 'connectedAt');
        void tx.objectStore('settings').put({ autoLockMinutes: 5, theme: 'system' }, 'prefs');
      },
    };
    const v2 = await openVaultDb(name, [...MIGRATIONS, V2_FIXTURE]);
    expect(v2.version).toBe(V2_FIXTURE.version);
    expect(await v2.get('settings', 'prefs')).toEqual({ autoLockMinutes: 5, theme: 'system' });
    const raw = await openDB(name);
    expect([...raw.transaction('connections').store.indexNames]).toContain('byConnectedAt');
    expect(await v2.get('connections', 'https://a.example')).toMatchObject({ connectedAt: 1 });
    raw.close();
    v2.close();
  });
});

/** Every value in the vault database, with bytes as latin1, for "not in clear" scans. */
async function profileDump(db: Awaited<ReturnType<typeof openVaultDb>>): Promise<string> {
  const stores = ['meta', 'secrets', 'settings', 'audit', 'connections'] as const;
  const all = await Promise.all(stores.map((s) => db.getAll(s)));
  return JSON.stringify(all, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
}

const GRANT_ORIGIN = 'https://dapp.example';
function grantFor(account: string, id: string, expiresAt = 9_000_000_000_000): Grant {
  return {
    id,
    origin: GRANT_ORIGIN,
    account,
    createdAt: 1_800_000_000_000,
    expiresAt,
    venue: 'perps',
    allow: { order: true, cancel: true, leverage: false, market: false, triggers: false },
    instruments: [1],
    maxNotional: '2000',
    dailyNotional: '20000',
    priceBandPct: '2',
    slippagePct: '1',
  };
}

describe('Vault one writer at a time', () => {
  it('keeps all six owner keys readable and signable after six concurrent imports, lock and unlock', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const keys = Array.from({ length: 6 }, () => generatePrivateKey());
    const owners = await Promise.all(keys.map((k, i) => vault.importOwnerKey(k, `k${i}`)));
    await vault.lock();
    await vault.unlock(PASSWORD);
    for (const o of owners) {
      const account = await vault.ownerAccount(o.address);
      expect(account.address).toBe(o.address);
      await expect(account.signMessage({ message: 'hi' })).resolves.toMatch(/^0x/);
    }
    expect((await vault.listOwners()).length).toBe(6);
  });

  it('keeps both keys when an import and a generate run at once', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const [imported, generated] = await Promise.all([
      vault.importOwnerKey(generatePrivateKey()),
      vault.generateOwnerKey(),
    ]);
    await vault.lock();
    await vault.unlock(PASSWORD);
    expect((await vault.ownerAccount(imported.address)).address).toBe(imported.address);
    expect((await vault.ownerAccount(generated.address)).address).toBe(generated.address);
  });

  it('keeps every grant use, owner key, proxy and credential when grant writes race popup writes', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const grant = grantFor(owner.address, 'g1');
    await grantUseRecords(vault).putGrant(grant, []);
    const uses: GrantUse[] = [];
    const writes: Promise<unknown>[] = [];
    const imported: string[] = [];
    for (let i = 0; i < 10; i++) {
      uses.push({ at: 1_800_000_000_000 + i, notional: String(i) });
      writes.push(grantUseRecords(vault).putGrant(grant, [...uses]));
      if (i % 3 === 0) writes.push(vault.generateOwnerKey(`bot ${i}`).then((o) => imported.push(o.address)));
    }
    writes.push(
      vault.putProxy({
        account: owner.address,
        privateKey: generatePrivateKey(),
        secret: 'proxy-secret',
        expiry: 9_000_000_000_000,
      }),
    );
    writes.push(
      vault.putClobCredentials({
        account: owner.address,
        apiKey: 'k',
        secret: 'clob-secret',
        passphrase: 'p',
        nonce: 0,
      }),
    );
    await Promise.all(writes);
    await vault.lock();
    await vault.unlock(PASSWORD);
    // lock ends every grant; what the popup wrote survives
    expect(await grantUseRecords(vault).listGrants()).toEqual([]);
    for (const a of imported) expect((await vault.ownerAccount(a)).address).toBe(a);
    expect((await vault.proxyFor(owner.address)).secret).toBe('proxy-secret');
    expect((await vault.clobCredentials(owner.address)).secret).toBe('clob-secret');
  });

  it('keeps the last grant write (with all its uses) readable when grant writes race popup writes', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const grant = grantFor(owner.address, 'g1');
    const uses: GrantUse[] = [];
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      uses.push({ at: 1_800_000_000_000 + i, notional: String(i) });
      writes.push(grantUseRecords(vault).putGrant(grant, [...uses]));
      writes.push(vault.generateOwnerKey(`bot ${i}`));
    }
    await Promise.all(writes);
    // a worker restart (new object, same db and session store) reads the sealed records afresh
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect(await grantUseRecords(restarted).listGrants()).toEqual([{ grant, uses }]);
    for (const o of await restarted.listOwners())
      expect((await restarted.ownerAccount(o.address)).address).toBe(o.address);
  });
});

describe('Vault password checks share the persisted back-off', () => {
  it('counts wrong passwords given to revealOwnerKey, and delays the next unlock', async () => {
    const { vault, clock, make } = await fresh();
    await vault.create(PASSWORD);
    const pk = generatePrivateKey();
    const owner = await vault.importOwnerKey(pk);
    await expect(vault.revealOwnerKey(owner.address, 'guess number 1')).rejects.toMatchObject({
      name: 'Vault.WrongPasswordError',
      retryAfterMs: 1000,
    });
    await expect(vault.revealOwnerKey(owner.address, PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    clock.now += 1000;
    await expect(vault.revealOwnerKey(owner.address, 'guess number 2')).rejects.toMatchObject({ retryAfterMs: 2000 });
    // the same counter after a worker restart, and for unlock
    const restarted = make();
    await restarted.lock();
    await expect(restarted.unlock(PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    clock.now += 2000;
    await restarted.unlock(PASSWORD);
    expect(await restarted.revealOwnerKey(owner.address, PASSWORD)).toBe(pk);
    expect((await restarted.status()).retryAfterMs).toBe(0);
  });

  it('gives concurrent guesses one try per back-off slot', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => vault.revealOwnerKey(owner.address, `wrong guess ${i}`)),
    );
    const names = results.map((r) => (r.status === 'rejected' ? (r.reason as Error).name : 'revealed'));
    expect(names.filter((x) => x === 'Vault.WrongPasswordError')).toHaveLength(1);
    expect(names.filter((x) => x === 'Vault.UnlockBackoffError')).toHaveLength(4);
  });

  it('counts wrong old passwords given to changePassword', async () => {
    const { vault, clock } = await fresh();
    await vault.create(PASSWORD);
    await expect(vault.changePassword('guess number 1', 'a brand new password')).rejects.toMatchObject({
      name: 'Vault.WrongPasswordError',
      retryAfterMs: 1000,
    });
    await expect(vault.changePassword(PASSWORD, 'a brand new password')).rejects.toBeInstanceOf(UnlockBackoffError);
    expect((await vault.status()).retryAfterMs).toBe(1000);
    clock.now += 1000;
    await expect(vault.changePassword('guess number 2', 'a brand new password')).rejects.toMatchObject({
      retryAfterMs: 2000,
    });
    clock.now += 2000;
    await vault.changePassword(PASSWORD, 'a brand new password');
    expect((await vault.status()).retryAfterMs).toBe(0);
  });

  it('counts wrong passwords given to restoreBackup', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    await vault.generateOwnerKey();
    const backup = await vault.exportBackup();
    const other = await fresh();
    await expect(other.vault.restoreBackup(backup, 'guess number 1')).rejects.toMatchObject({
      name: 'Vault.WrongPasswordError',
      retryAfterMs: 1000,
    });
    await expect(other.vault.restoreBackup(backup, PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    other.clock.now += 1000;
    await other.vault.restoreBackup(backup, PASSWORD);
    expect(other.vault.unlocked).toBe(true);
  });
});

describe('Vault.changePassword keeps the vault in its state', () => {
  it('leaves a locked vault locked, also after a worker restart', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.lock();
    await vault.changePassword(PASSWORD, 'a brand new password');
    expect(vault.unlocked).toBe(false);
    expect((await vault.status()).unlocked).toBe(false);
    await expect(vault.ownerAccount(owner.address)).rejects.toBeInstanceOf(VaultLockedError);
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(false);
    await restarted.unlock('a brand new password');
    expect((await restarted.ownerAccount(owner.address)).address).toBe(owner.address);
  });

  it('leaves an unlocked vault unlocked, also after a worker restart', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.changePassword(PASSWORD, 'a brand new password');
    expect(vault.state).toBe('unlocked');
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect((await restarted.ownerAccount(owner.address)).address).toBe(owner.address);
  });

  it('leaves a trading session a trading session', async () => {
    const { vault, make } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await vault.putProxy({
      account: owner.address,
      privateKey: generatePrivateKey(),
      secret: 'proxy-secret',
      expiry: 9_000_000_000_000,
    });
    await vault.enterTradingSession({ accounts: [owner.address] });
    await vault.changePassword(PASSWORD, 'a brand new password');
    expect(vault.state).toBe('session');
    await expect(vault.ownerAccount(owner.address)).rejects.toBeInstanceOf(VaultLockedError);
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect(restarted.state).toBe('session');
    expect((await restarted.proxyFor(owner.address)).secret).toBe('proxy-secret');
    await restarted.unlock('a brand new password');
    expect(restarted.state).toBe('unlocked');
  });
});

describe('Vault trading session', () => {
  async function withSession() {
    const f = await fresh();
    const { vault, clock } = f;
    await vault.create(PASSWORD);
    const kept = await vault.generateOwnerKey('kept');
    const other = await vault.generateOwnerKey('other');
    const proxyKey = generatePrivateKey();
    await vault.putProxy({
      account: kept.address,
      privateKey: proxyKey,
      secret: 'proxy-secret-KEPT',
      expiry: clock.now + 3_600_000,
    });
    const expiredProxy = generatePrivateKey();
    await vault.putProxy({
      account: kept.address,
      privateKey: expiredProxy,
      secret: 'proxy-secret-OLD',
      expiry: clock.now - 1,
    });
    const otherProxy = generatePrivateKey();
    await vault.putProxy({
      account: other.address,
      privateKey: otherProxy,
      secret: 'proxy-secret-OTHER',
      expiry: clock.now + 3_600_000,
    });
    await vault.putClobCredentials({
      account: kept.address,
      apiKey: 'api-key-KEPT',
      secret: 'clob-secret-KEPT',
      passphrase: 'pass-KEPT',
      nonce: 0,
    });
    await vault.putClobCredentials({
      account: other.address,
      apiKey: 'api-key-OTHER',
      secret: 'clob-secret-OTHER',
      passphrase: 'pass-OTHER',
      nonce: 0,
    });
    const grant = grantFor(kept.address, 'g1');
    const uses: GrantUse[] = [{ at: clock.now - 5, notional: '100' }];
    await grantUseRecords(vault).putGrant(grant, uses);
    await vault.enterTradingSession({ accounts: [kept.address] });
    return { ...f, kept, other, proxyKey, otherProxy, grant, uses };
  }

  it(
    'keeps proxy and order-book signing for the kept account ' + 'and refuses owner keys, reveal, backup and new keys',
    async () => {
      const { vault, kept, other, proxyKey } = await withSession();
      expect(vault.state).toBe('session');
      expect(vault.unlocked).toBe(false);
      expect(vault.sessionLive).toBe(true);
      expect((await vault.status()).state).toBe('session');
      const proxy = await vault.proxyFor(kept.address);
      expect(proxy.secret).toBe('proxy-secret-KEPT');
      expect(proxy.signer.address).toBe(privateKeyToAccount(proxyKey).address);
      await expect(proxy.signer.signMessage({ message: 'order' })).resolves.toMatch(/^0x/);
      expect((await vault.clobCredentials(kept.address)).secret).toBe('clob-secret-KEPT');
      expect(await vault.hasClobCredentials(kept.address)).toBe(true);
      expect((await vault.listProxies(kept.address)).map((p) => p.proxy)).toEqual([
        privateKeyToAccount(proxyKey).address,
      ]);
      expect((await vault.listOwners()).map((o) => o.address)).toContain(kept.address);
      // the other account's keys were not kept: they need the password
      await expect(vault.proxyFor(other.address)).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.clobCredentials(other.address)).rejects.toMatchObject({
        name: 'Vault.LockedError',
        shortMessage: expect.stringContaining('password'),
      });
      expect(await vault.hasClobCredentials(other.address)).toBe(false);
      // everything that needs the password
      await expect(vault.ownerAccount(kept.address)).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.revealOwnerKey(kept.address, PASSWORD)).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.exportBackup()).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.importOwnerKey(generatePrivateKey())).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.generateOwnerKey()).rejects.toBeInstanceOf(VaultLockedError);
      await expect(
        vault.putProxy({
          account: kept.address,
          privateKey: generatePrivateKey(),
          secret: 's',
          expiry: 9_000_000_000_000,
        }),
      ).rejects.toBeInstanceOf(VaultLockedError);
      await expect(
        vault.putClobCredentials({ account: kept.address, apiKey: 'a', secret: 'b', passphrase: 'c', nonce: 1 }),
      ).rejects.toBeInstanceOf(VaultLockedError);
      await expect(vault.enterTradingSession({ accounts: [kept.address] })).rejects.toBeInstanceOf(VaultLockedError);
      expect((await vault.listOwners()).length).toBe(2);
    },
  );

  it("carries the kept accounts' deposit-wallet builder credentials, sealed like their API credentials", async () => {
    const { vault, make, db } = await fresh();
    await vault.create(PASSWORD);
    const kept = await vault.generateOwnerKey('kept');
    const other = await vault.generateOwnerKey('other');
    const zero = '0x0000000000000000000000000000000000000000';
    await vault.putDepositWallet({
      account: kept.address,
      wallet: '0x12d77BcbDC3E67F5Da4Dc8e798623482D4a711db',
      kind: 'uups',
      beacon: zero,
      builder: { key: 'b-KEPT', secret: 'builder-secret-KEPT', passphrase: 'bp-KEPT' },
    });
    await vault.putDepositWallet({
      account: other.address,
      wallet: '0xdf8b9E8f9AB23f261F6e1B171B7454ae6E46Ba76',
      kind: 'uups',
      beacon: zero,
      builder: { key: 'b-OTHER', secret: 'builder-secret-OTHER', passphrase: 'bp-OTHER' },
    });
    await vault.enterTradingSession({ accounts: [kept.address] });
    expect(await vault.builderCredentials(kept.address.toLowerCase())).toEqual({
      key: 'b-KEPT',
      secret: 'builder-secret-KEPT',
      passphrase: 'bp-KEPT',
    });
    await expect(vault.builderCredentials(other.address)).rejects.toMatchObject({
      name: 'Vault.LockedError',
      shortMessage: expect.stringContaining('password'),
    });
    // Sealed in the bundle: after a worker restart the session still has them, and nothing is in clear.
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect((await restarted.builderCredentials(kept.address)).secret).toBe('builder-secret-KEPT');
    const raw = JSON.stringify([await db.getAll('meta'), await db.getAll('secrets')]);
    expect(raw).not.toContain('builder-secret-KEPT');
    await restarted.unlock(PASSWORD);
    expect((await restarted.builderCredentials(other.address)).secret).toBe('builder-secret-OTHER');
  });

  it('persists grant writes made in the session across a worker restart', async () => {
    const { vault, make, grant, uses, kept } = await withSession();
    expect(await grantUseRecords(vault).listGrants()).toEqual([{ grant, uses }]);
    const more = [...uses, { at: 1_800_000_000_001, notional: '250' }];
    await grantUseRecords(vault).putGrant(grant, more);
    const second = grantFor(kept.address, 'g2');
    await grantUseRecords(vault).putGrant(second, []);
    await grantUseRecords(vault).deleteGrant('g2');
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect(restarted.state).toBe('session');
    expect(await grantUseRecords(restarted).listGrants()).toEqual([{ grant, uses: more }]);
    expect((await restarted.proxyFor(kept.address)).secret).toBe('proxy-secret-KEPT');
    await expect(restarted.ownerAccount(kept.address)).rejects.toBeInstanceOf(VaultLockedError);
  });

  it('keeps all six grant writes made at once in the session', async () => {
    const { vault, make, kept } = await withSession();
    const grants = Array.from({ length: 6 }, (_, i) => grantFor(kept.address, `c${i}`));
    await Promise.all(
      grants.map((g, i) => grantUseRecords(vault).putGrant(g, [{ at: 1_800_000_000_000 + i, notional: String(i) }])),
    );
    const restarted = make();
    await restarted.restoreSession();
    const ids = (await grantUseRecords(restarted).listGrants()).map((g) => g.grant.id).sort();
    expect(ids).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'g1']);
  });

  it('stays in the session after a wrong password, and counts it in the back-off', async () => {
    const { vault, kept, clock } = await withSession();
    await expect(vault.unlock('not the password')).rejects.toMatchObject({
      name: 'Vault.WrongPasswordError',
      retryAfterMs: 1000,
    });
    expect(vault.state).toBe('session');
    expect((await vault.proxyFor(kept.address)).secret).toBe('proxy-secret-KEPT');
    await expect(vault.unlock(PASSWORD)).rejects.toBeInstanceOf(UnlockBackoffError);
    clock.now += 1000;
    await vault.unlock(PASSWORD);
    expect(vault.state).toBe('unlocked');
  });

  it('unlocks from the session into the full vault with the grants and their uses', async () => {
    const { vault, make, grant, uses, kept, other, clock } = await withSession();
    const more = [...uses, { at: clock.now, notional: '42' }];
    await grantUseRecords(vault).putGrant(grant, more);
    await vault.unlock(PASSWORD);
    expect(vault.state).toBe('unlocked');
    expect(await grantUseRecords(vault).listGrants()).toEqual([{ grant, uses: more }]);
    expect((await vault.ownerAccount(kept.address)).address).toBe(kept.address);
    expect((await vault.proxyFor(other.address)).secret).toBe('proxy-secret-OTHER');
    const restarted = make();
    expect(await restarted.restoreSession()).toBe(true);
    expect(restarted.state).toBe('unlocked');
    expect(await grantUseRecords(restarted).listGrants()).toEqual([{ grant, uses: more }]);
    await restarted.lock();
    await restarted.unlock(PASSWORD);
    expect(await grantUseRecords(restarted).listGrants()).toEqual([]);
  });

  it('leaves nothing after lock from the session: no keys, no grants, no secret in clear', async () => {
    const { vault, make, db, kept, proxyKey, otherProxy } = await withSession();
    expect(await vault.auditKey()).toBeDefined();
    await vault.lock();
    expect(vault.state).toBe('locked');
    expect(await vault.auditKey()).toBeUndefined();
    await expect(vault.proxyFor(kept.address)).rejects.toBeInstanceOf(VaultLockedError);
    await expect(vault.clobCredentials(kept.address)).rejects.toBeInstanceOf(VaultLockedError);
    await expect(grantUseRecords(vault).putGrant(grantFor(kept.address, 'g9'), [])).rejects.toBeInstanceOf(
      VaultLockedError,
    );
    expect(await make().restoreSession()).toBe(false);
    const dump = await profileDump(db);
    for (const secret of [
      proxyKey.slice(2),
      otherProxy.slice(2),
      'proxy-secret-KEPT',
      'clob-secret-KEPT',
      'pass-KEPT',
      'api-key-KEPT',
      GRANT_ORIGIN,
    ]) {
      expect(dump).not.toContain(secret);
    }
    expect(await db.get('meta', 'session')).toBeUndefined();
    await vault.unlock(PASSWORD);
    expect(await grantUseRecords(vault).listGrants()).toEqual([]);
  });

  it('stores no proxy key, API secret or grant in clear while the session is live', async () => {
    const { db, session, proxyKey } = await withSession();
    const dump = (await profileDump(db)) + JSON.stringify(await session.get());
    for (const secret of [
      proxyKey.slice(2),
      'proxy-secret-KEPT',
      'clob-secret-KEPT',
      'pass-KEPT',
      'api-key-KEPT',
      GRANT_ORIGIN,
    ]) {
      expect(dump).not.toContain(secret);
    }
    expect(await session.get()).not.toHaveProperty('mk');
  });

  it('hands out the same non-extractable audit key unlocked and in the session, none when locked', async () => {
    const { vault } = await fresh();
    expect(await vault.auditKey()).toBeUndefined();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const data = new TextEncoder().encode('audit entry');
    const k1 = (await vault.auditKey())!;
    expect(k1.extractable).toBe(false);
    expect(k1.algorithm).toMatchObject({ name: 'HMAC' });
    const mac = await crypto.subtle.sign('HMAC', k1, data);
    await vault.enterTradingSession({ accounts: [owner.address] });
    const k2 = (await vault.auditKey())!;
    expect(k2.extractable).toBe(false);
    expect(await crypto.subtle.verify('HMAC', k2, mac, data)).toBe(true);
    await vault.unlock(PASSWORD);
    expect(await crypto.subtle.verify('HMAC', (await vault.auditKey())!, mac, data)).toBe(true);
  });

  it('a browser restart (session store emptied) ends the session: locked, bundle gone', async () => {
    const { db, make } = await withSession();
    const restarted = new Vault({ db, session: memorySessionStore(), kdf: FAST, bounds: BOUNDS });
    expect(await restarted.restoreSession()).toBe(false);
    expect(restarted.state).toBe('locked');
    expect(await db.get('meta', 'session')).toBeUndefined();
    // the old worker's store still holds the session key, but the bundle it opened is gone
    expect(await make().restoreSession()).toBe(false);
  });
});

describe('Vault.deleteAllGrants', () => {
  it('revokes every grant even when the sealed index was damaged', async () => {
    const { vault, db } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    await grantUseRecords(vault).putGrant(grantFor(owner.address, 'g1'), []);
    const index = (await db.get('meta', 'index')) as {
      id: 'index';
      sealed: { iv: Uint8Array<ArrayBuffer>; ct: Uint8Array<ArrayBuffer> };
    };
    const ct = index.sealed.ct.slice();
    ct[0] = ct[0]! ^ 1;
    await db.put('meta', { ...index, sealed: { ...index.sealed, ct } });
    const restarted = new Vault({ db, session: memorySessionStore(), kdf: FAST, bounds: BOUNDS });
    await restarted.unlock(PASSWORD);
    expect(await grantUseRecords(restarted).deleteAllGrants()).toBe(1);
    expect((await db.getAll('secrets')).filter((r) => r.kind === 'grant')).toEqual([]);
  });
});

describe('Vault reads during writes', () => {
  it('never reports a signing key as tampered while it is being rewritten', async () => {
    const { vault } = await fresh();
    await vault.create(PASSWORD);
    const owner = await vault.generateOwnerKey();
    const proxyKey = generatePrivateKey();
    await vault.putProxy({ account: owner.address, privateKey: proxyKey, secret: 's0', expiry: 9_000_000_000_000 });
    const ops: Promise<unknown>[] = [];
    for (let i = 1; i <= 8; i++) {
      ops.push(
        vault.putProxy({ account: owner.address, privateKey: proxyKey, secret: `s${i}`, expiry: 9_000_000_000_000 }),
      );
      ops.push(vault.proxyFor(owner.address));
      ops.push(
        vault.putClobCredentials({ account: owner.address, apiKey: 'k', secret: `c${i}`, passphrase: 'p', nonce: i }),
      );
      ops.push(
        vault
          .clobCredentials(owner.address)
          .catch((e: Error) => (e.name === 'Vault.KeyNotFoundError' ? undefined : Promise.reject(e))),
      );
    }
    await Promise.all(ops);
    expect((await vault.proxyFor(owner.address)).secret).toBe('s8');
    expect((await vault.clobCredentials(owner.address)).secret).toBe('c8');
  });
});
