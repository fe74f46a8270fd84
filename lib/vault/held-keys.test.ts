/**
 * The keys a granted order reads (proxy key, owner key, API credentials) are answered from memory while
 * the vault's writer lock is held by a grant's use write — unlocked and in a trading session — and never
 * once a call that changes them was made: a lock, the end of a trading session, a proxy key deleted or
 * replaced, API credentials replaced, an owner key imported, a backup restored, each called while the
 * write still holds the lock, makes the next read wait for it and return what it left.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { KdfParams } from './crypto';
import { openVaultDb } from './db';
import { memorySessionStore, Vault } from './vault';
import { grantUseRecords } from '../grants/use-records';
import type { Grant } from '../grants/evaluate';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const PASSWORD = 'correct horse battery';
const T0 = 1_800_000_000_000;
let n = 0;

/** Whether `p` settles within `ms` (its outcome then), or 'waiting'. */
const within = <T>(p: Promise<T>, ms = 150): Promise<{ v?: T; e?: unknown } | 'waiting'> =>
  Promise.race([
    p.then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    ),
    new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), ms)),
  ]);

const grantFor = (account: string): Grant =>
  ({
    id: 'g1',
    origin: 'https://trade.example',
    account,
    createdAt: T0,
    expiresAt: T0 + 3_600_000,
    limits: {
      venue: 'perps',
      instruments: [2],
      allow: { order: true },
      maxNotional: '1000',
      dailyNotional: '1000',
      priceBandPct: '2',
      slippagePct: '1',
    },
  }) as unknown as Grant;

/**
 * A vault with an owner key, its proxy key and its API credentials, each opened once (held); `session` enters a trading
 * session first.
 */
async function opened(o: { session?: boolean; read?: boolean } = {}) {
  const db = await openVaultDb(`held-keys-${n++}`);
  const clock = { now: T0 };
  const vault = new Vault({ db, session: memorySessionStore(), now: () => clock.now, kdf: FAST, bounds: BOUNDS });
  await vault.create(PASSWORD);
  const ownerKey = generatePrivateKey();
  const owner = (await vault.importOwnerKey(ownerKey)).address;
  const proxyKey = generatePrivateKey();
  await vault.putProxy({ account: owner, privateKey: proxyKey, secret: 'proxy-secret', expiry: T0 + 3_600_000 });
  await vault.putClobCredentials({
    account: owner,
    apiKey: 'api-key',
    secret: 'clob-secret',
    passphrase: 'pass',
    nonce: 0,
  });
  if (o.session) {
    await grantUseRecords(vault).putGrant(grantFor(owner), []);
    await vault.enterTradingSession({ accounts: [owner] });
  }
  if (o.read !== false) {
    await vault.proxyFor(owner);
    await vault.clobCredentials(owner);
    if (!o.session) await vault.ownerAccount(owner);
  }
  /** Holds the writer lock as a grant's use write does, until `release()`. */
  const hold = () => {
    let release!: () => void;
    const held = vault.exclusive(() => new Promise<void>((r) => (release = r)));
    return { release: () => (release(), held) };
  };
  return { vault, db, clock, owner, ownerKey, proxyKey, hold };
}

describe("a granted order's key reads do not wait behind a held use write", () => {
  it(
    'unlocked: the proxy key, the owner key and the API credentials ' +
      'opened before are answered while the writer lock is held',
    async () => {
      const { vault, owner, ownerKey, proxyKey, hold } = await opened();
      const h = hold();
      expect(await within(vault.proxyFor(owner))).toMatchObject({
        v: { secret: 'proxy-secret', signer: { address: privateKeyToAccount(proxyKey).address } },
      });
      expect(await within(vault.ownerAccount(owner))).toMatchObject({
        v: { address: privateKeyToAccount(ownerKey).address },
      });
      expect(await within(vault.clobCredentials(owner))).toMatchObject({
        v: { apiKey: 'api-key', secret: 'clob-secret' },
      });
      await h.release();
    },
  );

  it(
    'in a trading session: the kept proxy key and API credentials are answered ' +
      'while the writer lock is held; the owner key still needs the password',
    async () => {
      const { vault, owner, proxyKey, hold } = await opened({ session: true });
      const h = hold();
      expect(await within(vault.proxyFor(owner))).toMatchObject({
        v: { secret: 'proxy-secret', signer: { address: privateKeyToAccount(proxyKey).address } },
      });
      expect(await within(vault.clobCredentials(owner))).toMatchObject({ v: { apiKey: 'api-key' } });
      const ownerRead = vault.ownerAccount(owner);
      await h.release();
      await expect(ownerRead).rejects.toMatchObject({ name: 'Vault.LockedError' });
    },
  );

  it(
    'a trading session just entered, and the same session restored by a new worker: ' +
      'the kept keys are answered while the writer lock is held before anything read them',
    async () => {
      const { vault, db, owner, proxyKey, hold } = await opened({ session: true, read: false });
      const h = hold();
      expect(await within(vault.proxyFor(owner))).toMatchObject({
        v: { signer: { address: privateKeyToAccount(proxyKey).address } },
      });
      expect(await within(vault.clobCredentials(owner))).toMatchObject({ v: { apiKey: 'api-key' } });
      await h.release();
      const session = (vault as unknown as { session: ReturnType<typeof memorySessionStore> }).session;
      const next = new Vault({ db, session, now: () => T0, kdf: FAST, bounds: BOUNDS });
      expect(await next.restoreSession()).toBe(true);
      let release!: () => void;
      const held = next.exclusive(() => new Promise<void>((r) => (release = r)));
      expect(await within(next.proxyFor(owner))).toMatchObject({ v: { secret: 'proxy-secret' } });
      expect(await within(next.clobCredentials(owner))).toMatchObject({ v: { secret: 'clob-secret' } });
      release();
      await held;
    },
  );

  it('a caller changing what it got does not change what the next read returns', async () => {
    const { vault, owner } = await opened();
    const got = await vault.clobCredentials(owner);
    got.info.signatureType = 2;
    (await vault.proxyFor(owner)).info.expiry = 0;
    expect((await vault.clobCredentials(owner)).info.signatureType).toBe(0);
    expect((await vault.proxyFor(owner)).info.expiry).toBe(T0 + 3_600_000);
  });
});

describe(
  'a call that changes keys or the state, made while a ' + 'use write holds the lock, acts before the next key read',
  () => {
    it('unlocked: lock → every key read waits for it and is refused', async () => {
      const { vault, owner, hold } = await opened();
      const h = hold();
      const locking = vault.lock();
      const reads: Promise<unknown>[] = [
        vault.proxyFor(owner),
        vault.ownerAccount(owner),
        vault.clobCredentials(owner),
      ];
      for (const r of reads)
        expect(await within(r, 50), 'a read after the lock call is not answered from memory').toBe('waiting');
      await h.release();
      await locking;
      for (const r of reads) await expect(r).rejects.toMatchObject({ name: 'Vault.LockedError' });
    });

    it('an owner key opened while unlocked signs nothing once the vault enters a trading session', async () => {
      const { vault, owner } = await opened();
      const signer = await vault.ownerAccount(owner);
      await expect(signer.signMessage({ message: 'before' })).resolves.toMatch(/^0x/);
      await vault.enterTradingSession({ accounts: [owner] });
      await expect(signer.signMessage({ message: 'after' })).rejects.toMatchObject({ name: 'Vault.LockedError' });
    });

    it(
      'in a trading session: lock (the session ends) → ' + 'the kept proxy key and API credentials are refused',
      async () => {
        const { vault, owner, hold } = await opened({ session: true });
        const h = hold();
        const locking = vault.lock();
        const reads: Promise<unknown>[] = [vault.proxyFor(owner), vault.clobCredentials(owner)];
        for (const r of reads) expect(await within(r, 50)).toBe('waiting');
        await h.release();
        await locking;
        for (const r of reads) await expect(r).rejects.toMatchObject({ name: 'Vault.LockedError' });
      },
    );

    it(
      'in a trading session: unlock (the session ends, the vault ' +
        'is unlocked) → the keys are read afresh under the master key',
      async () => {
        const { vault, owner, hold } = await opened({ session: true });
        const h = hold();
        const unlocking = vault.unlock(PASSWORD);
        const read = vault.proxyFor(owner);
        expect(await within(read, 50)).toBe('waiting');
        await h.release();
        await unlocking;
        expect((await read).secret).toBe('proxy-secret');
        expect(vault.state).toBe('unlocked');
      },
    );

    it('the proxy key deleted → the next read finds no proxy key; replaced → the new one signs', async () => {
      const { vault, owner, proxyKey, hold } = await opened();
      let h = hold();
      const deleting = vault.deleteProxy(privateKeyToAccount(proxyKey).address);
      const afterDelete = vault.proxyFor(owner);
      expect(await within(afterDelete, 50)).toBe('waiting');
      await h.release();
      await deleting;
      await expect(afterDelete).rejects.toMatchObject({ name: 'Vault.KeyNotFoundError' });

      const next = generatePrivateKey();
      h = hold();
      const putting = vault.putProxy({
        account: owner,
        privateKey: next,
        secret: 'next-secret',
        expiry: T0 + 7_200_000,
      });
      const afterPut = vault.proxyFor(owner);
      expect(await within(afterPut, 50)).toBe('waiting');
      await h.release();
      await putting;
      expect((await afterPut).signer.address).toBe(privateKeyToAccount(next).address);
    });

    it('the API credentials replaced → the next read returns the new ones', async () => {
      const { vault, owner, hold } = await opened();
      await vault.clobCredentials(owner);
      const h = hold();
      const replacing = vault.putClobCredentials({
        account: owner,
        apiKey: 'api-key-2',
        secret: 'clob-secret-2',
        passphrase: 'pass-2',
        nonce: 1,
      });
      const read = vault.clobCredentials(owner);
      expect(await within(read, 50)).toBe('waiting');
      await h.release();
      await replacing;
      expect(await read).toMatchObject({ apiKey: 'api-key-2', secret: 'clob-secret-2', info: { nonce: 1 } });
    });

    it('a backup restored → the keys are those of the backup', async () => {
      const { vault, owner, hold } = await opened();
      const backup = await vault.exportBackup();
      await vault.putClobCredentials({
        account: owner,
        apiKey: 'api-key-after-backup',
        secret: 's',
        passphrase: 'p',
        nonce: 2,
      });
      expect((await vault.clobCredentials(owner)).apiKey).toBe('api-key-after-backup');
      const h = hold();
      const restoring = vault.restoreBackup(backup, PASSWORD);
      const read = vault.clobCredentials(owner);
      expect(await within(read, 50)).toBe('waiting');
      await h.release();
      await restoring;
      expect((await read).apiKey).toBe('api-key');
    });

    it('a held proxy key past its expiry is not served', async () => {
      const { vault, owner, clock, hold } = await opened();
      clock.now = T0 + 3_600_000;
      const h = hold();
      const read = vault.proxyFor(owner);
      expect(await within(read, 50)).toBe('waiting');
      await h.release();
      await expect(read).rejects.toMatchObject({ name: 'Vault.KeyNotFoundError' });
    });
  },
);

describe('the deposit wallet record read before every order-book signature', () => {
  it(
    'is answered from memory once read (absence too), and read ' +
      'afresh after a deposit wallet is stored or the vault locks',
    async () => {
      const { vault, db, owner } = await opened();
      const reads = { n: 0 };
      const get = db.get.bind(db);
      db.get = ((store: string, key: unknown) => {
        if (store === 'secrets' && String(key).startsWith('deposit:')) reads.n++;
        return get(store as never, key as never);
      }) as typeof db.get;
      expect(await vault.depositWallet(owner)).toBeUndefined();
      expect(await vault.depositWallet(owner)).toBeUndefined();
      expect(reads.n, 'the second read is held').toBe(1);
      const wallet = '0x' + '7'.repeat(40);
      await vault.putDepositWallet({
        account: owner,
        wallet,
        kind: 'uups',
        beacon: '0x' + '0'.repeat(40),
        builder: { key: 'k', secret: 's', passphrase: 'p' },
      });
      expect(await vault.depositWallet(owner)).toMatchObject({ wallet });
      expect(await vault.depositWallet(owner)).toMatchObject({ wallet });
      expect(reads.n, 'read once after the write, then held').toBe(2);
      await vault.lock();
      expect(await vault.depositWallet(owner), 'locked: read from the database (clear metadata)').toMatchObject({
        wallet,
      });
      expect(reads.n).toBe(3);
    },
  );
});
