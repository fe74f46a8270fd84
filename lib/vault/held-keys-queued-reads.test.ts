/**
 * A key read queued behind the vault's writer lock before a call that changes keys or the state, and
 * answered once that call was made (still queued behind another use write), returns what it read — it
 * ran first — but is not held: a read made after the call waits for it and returns what it left. Each
 * case: a use write holds the lock, a read queues (nothing held), a second use write queues, the change
 * is called; the first write ends, the queued read is answered; the next read must wait for the change.
 * Proxy key and API credential reads of one account queued together (a cold worker's first reads) open each once: the
 * later ones take what the first opened, as a read made after it would.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { KdfParams } from './crypto';
import { openVaultDb } from './db';
import { memorySessionStore, Vault } from './vault';

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const PASSWORD = 'correct horse battery';
const T0 = 1_800_000_000_000;
let n = 0;

/** Whether `p` settles within `ms` (its outcome then), or 'waiting'. */
const within = <T>(p: Promise<T>, ms = 50): Promise<{ v?: T; e?: unknown } | 'waiting'> =>
  Promise.race([
    p.then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    ),
    new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), ms)),
  ]);

/** An unlocked vault with an owner key, its proxy key and its API credentials, none of them read yet (nothing held). */
async function stored() {
  const db = await openVaultDb(`held-keys-queued-${n++}`);
  const vault = new Vault({ db, session: memorySessionStore(), now: () => T0, kdf: FAST, bounds: BOUNDS });
  await vault.create(PASSWORD);
  const owner = (await vault.importOwnerKey(generatePrivateKey())).address;
  const proxyKey = generatePrivateKey();
  await vault.putProxy({ account: owner, privateKey: proxyKey, secret: 'proxy-secret', expiry: T0 + 3_600_000 });
  await vault.putClobCredentials({
    account: owner,
    apiKey: 'api-key',
    secret: 'clob-secret',
    passphrase: 'pass',
    nonce: 0,
  });
  /** Holds the writer lock as a grant's use write does, until `release()`. */
  const hold = () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = vault.exclusive(() => gate);
    return { release: () => (release(), held) };
  };
  return { vault, db, owner, proxyKey, hold };
}

describe(
  'a key read queued before a change and answered after ' + 'the change was called is not held for the next read',
  () => {
    it('the proxy key deleted: the next read waits for the delete and finds no proxy key', async () => {
      const { vault, owner, proxyKey, hold } = await stored();
      const first = hold();
      const queued = vault.proxyFor(owner);
      const second = hold();
      const deleting = vault.deleteProxy(privateKeyToAccount(proxyKey).address);
      await first.release();
      expect((await queued).secret).toBe('proxy-secret'); // queued before the delete: it ran first
      const next = vault.proxyFor(owner);
      expect(await within(next), 'a read made after the delete call is not answered with the deleted key').toBe(
        'waiting',
      );
      await second.release();
      await deleting;
      await expect(next).rejects.toMatchObject({ name: 'Vault.KeyNotFoundError' });
    });

    it('the API credentials replaced: the next read waits and returns the new ones', async () => {
      const { vault, owner, hold } = await stored();
      const first = hold();
      const queued = vault.clobCredentials(owner);
      const second = hold();
      const replacing = vault.putClobCredentials({
        account: owner,
        apiKey: 'api-key-2',
        secret: 'clob-secret-2',
        passphrase: 'pass-2',
        nonce: 1,
      });
      await first.release();
      expect((await queued).apiKey).toBe('api-key');
      const next = vault.clobCredentials(owner);
      expect(await within(next), 'a read made after the replace call is not answered with the old credentials').toBe(
        'waiting',
      );
      await second.release();
      await replacing;
      expect((await next).apiKey).toBe('api-key-2');
    });

    it('lock (unlocked): the next owner key read waits for the lock and is refused', async () => {
      const { vault, owner, hold } = await stored();
      const first = hold();
      const queued = vault.ownerAccount(owner);
      const second = hold();
      const locking = vault.lock();
      await first.release();
      await queued;
      const next = vault.ownerAccount(owner);
      expect(await within(next), 'a read made after the lock call is not answered from memory').toBe('waiting');
      await second.release();
      await locking;
      await expect(next).rejects.toMatchObject({ name: 'Vault.LockedError' });
    });

    it(
      'a trading session entered, then lock called while a use write ' +
        'queued between them holds the lock: the kept keys are not answered',
      async () => {
        const { vault, owner, hold } = await stored();
        const first = hold();
        const entering = vault.enterTradingSession({ accounts: [owner] });
        const second = hold();
        const locking = vault.lock();
        await first.release();
        await entering;
        const reads: Promise<unknown>[] = [vault.proxyFor(owner), vault.clobCredentials(owner)];
        for (const r of reads)
          expect(await within(r), "a read made after the lock call is not answered with the session's kept keys").toBe(
            'waiting',
          );
        await second.release();
        await locking;
        for (const r of reads) await expect(r).rejects.toMatchObject({ name: 'Vault.LockedError' });
      },
    );
  },
);

describe(
  'a trading session restored by a new worker holds its ' + 'kept keys however many requests restore it at once',
  () => {
    it(
      'three page requests restore the session side by side: the kept proxy ' +
        'key and API credentials are answered while the writer lock is held',
      async () => {
        const { vault, db, owner } = await stored();
        await vault.enterTradingSession({ accounts: [owner] });
        const session = (vault as unknown as { session: ReturnType<typeof memorySessionStore> }).session;
        const next = new Vault({ db, session, now: () => T0, kdf: FAST, bounds: BOUNDS });
        expect(await Promise.all([next.restoreSession(), next.restoreSession(), next.restoreSession()])).toEqual([
          true,
          true,
          true,
        ]);
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        const held = next.exclusive(() => gate);
        expect(await within(next.proxyFor(owner))).toMatchObject({ v: { secret: 'proxy-secret' } });
        expect(await within(next.clobCredentials(owner))).toMatchObject({ v: { secret: 'clob-secret' } });
        release();
        await held;
      },
    );

    it(
      'a session restore called, then lock called before it ' +
        'ran: the kept keys are not answered after the lock call',
      async () => {
        const { vault, db, owner } = await stored();
        await vault.enterTradingSession({ accounts: [owner] });
        const session = (vault as unknown as { session: ReturnType<typeof memorySessionStore> }).session;
        const next = new Vault({ db, session, now: () => T0, kdf: FAST, bounds: BOUNDS });
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        const first = next.exclusive(() => gate);
        const restoring = next.restoreSession();
        let release2!: () => void;
        const gate2 = new Promise<void>((r) => (release2 = r));
        const second = next.exclusive(() => gate2);
        const locking = next.lock();
        release();
        await first;
        expect(await restoring).toBe(true);
        const reads: Promise<unknown>[] = [next.proxyFor(owner), next.clobCredentials(owner)];
        for (const r of reads)
          expect(await within(r), "a read made after the lock call is not answered with the session's kept keys").toBe(
            'waiting',
          );
        release2();
        await second;
        await locking;
        for (const r of reads) await expect(r).rejects.toMatchObject({ name: 'Vault.LockedError' });
      },
    );
  },
);

describe('key reads of one account queued together', () => {
  it('open each key once: the reads queued behind the first answer from what it opened', async () => {
    const { vault, owner, hold } = await stored();
    const opened: string[] = [];
    const v = vault as unknown as { read: (id: string) => Promise<unknown> };
    const read = v.read.bind(vault);
    v.read = (id: string) => (opened.push(id.split(':')[0] ?? id), read(id));
    const first = hold(); // a cold worker's start work holds the lock
    const proxies = [vault.proxyFor(owner), vault.proxyFor(owner)];
    const clob = [vault.clobCredentials(owner)];
    proxies.push(vault.proxyFor(owner));
    clob.push(vault.clobCredentials(owner));
    await first.release();
    expect((await Promise.all(proxies)).map((p) => p.secret)).toEqual(['proxy-secret', 'proxy-secret', 'proxy-secret']);
    expect((await Promise.all(clob)).map((c) => c.apiKey)).toEqual(['api-key', 'api-key']);
    expect(opened.sort(), 'one decryption per key').toEqual(['clob', 'proxy']);
  });
});
