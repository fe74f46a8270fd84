import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Hex } from 'viem';
import * as accounts from 'viem/accounts';
import { generatePrivateKey } from 'viem/accounts';
import type { KdfParams } from './crypto';
import { openVaultDb } from './db';
import { KeyNotFoundError, ProxyKeyMismatchError, VaultLockedError } from './errors';
import { deferredAccount } from './deferred-signer';
import { memorySessionStore, Vault } from './vault';

// Counts the vault's key derivations (the curve work a key read must not do); each still derives for real.
vi.mock('viem/accounts', async (importOriginal) => {
  const real = await importOriginal<typeof import('viem/accounts')>();
  return { ...real, privateKeyToAccount: vi.fn(real.privateKeyToAccount) };
});
const derivations = vi.mocked(accounts.privateKeyToAccount);
const { privateKeyToAccount: realAccount } = await vi.importActual<typeof import('viem/accounts')>('viem/accounts');

const FAST: KdfParams = { name: 'scrypt', N: 2 ** 10, r: 8, p: 1, dkLen: 32 };
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };
const PASSWORD = 'correct horse battery';
const DIGEST = `0x${'ab'.repeat(32)}` as Hex;
let n = 0;

/**
 * A vault with an owner and an unexpired proxy key, then a new worker's vault restored from the session store (nothing
 * derived yet).
 */
async function restartedWithProxy() {
  const db = await openVaultDb(`deferred-signer-${n++}`);
  const now = () => 1_800_000_000_000;
  const session = memorySessionStore();
  const first = new Vault({ db, session, now, kdf: FAST, bounds: BOUNDS });
  await first.create(PASSWORD);
  const owner = await first.generateOwnerKey();
  const proxyKey = generatePrivateKey();
  const proxy = await first.putProxy({
    account: owner.address,
    privateKey: proxyKey,
    secret: 'proxy-secret',
    expiry: now() + 3_600_000,
  });
  const vault = new Vault({ db, session, now, kdf: FAST, bounds: BOUNDS });
  expect(await vault.restoreSession()).toBe(true);
  return { vault, owner, proxyKey, proxy };
}

describe('proxy key reads and the curve work of signing', () => {
  beforeEach(() => {
    derivations.mockClear();
  });

  it(
    'a proxy key read gives its secret and address without deriving the ' +
      'key; the first signature derives it once and signs what the key signs',
    async () => {
      const { vault, owner, proxyKey, proxy } = await restartedWithProxy();
      derivations.mockClear();
      const read = await vault.proxyFor(owner.address);
      expect(read.secret).toBe('proxy-secret');
      expect(read.signer.address.toLowerCase()).toBe(proxy.proxy.toLowerCase());
      expect(derivations).not.toHaveBeenCalled();
      const sig = await read.signer.sign!({ hash: DIGEST });
      expect(derivations).toHaveBeenCalledTimes(1);
      const again = await vault.proxyFor(owner.address);
      expect(await again.signer.sign!({ hash: DIGEST })).toBe(sig);
      expect(derivations).toHaveBeenCalledTimes(1);
      expect(sig).toBe(await realAccount(proxyKey).sign!({ hash: DIGEST }));
    },
  );

  it('a proxy key read in a trading session derives nothing either', async () => {
    const { vault, owner, proxy } = await restartedWithProxy();
    await vault.enterTradingSession({ accounts: [owner.address] });
    derivations.mockClear();
    const read = await vault.proxyFor(owner.address);
    expect(read.signer.address.toLowerCase()).toBe(proxy.proxy.toLowerCase());
    expect(derivations).not.toHaveBeenCalled();
    await expect(read.signer.signMessage({ message: 'order' })).resolves.toMatch(/^0x/);
    expect(derivations).toHaveBeenCalledTimes(1);
  });

  it('a key stored under an address that is not its own signs nothing', async () => {
    const key = generatePrivateKey();
    const elsewhere = realAccount(generatePrivateKey()).address;
    const account = deferredAccount(elsewhere, () => realAccount(key));
    await expect(account.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(ProxyKeyMismatchError);
    await expect(
      account.signTypedData({ types: {}, primaryType: 'EIP712Domain', domain: { name: 'x' } }),
    ).rejects.toBeInstanceOf(ProxyKeyMismatchError);
    await expect(account.signMessage({ message: 'order' })).rejects.toBeInstanceOf(ProxyKeyMismatchError);
    expect(() => account.publicKey).toThrow(ProxyKeyMismatchError);
  });
});

describe('a proxy key read before a lock', () => {
  it(
    'signs nothing after the lock, whether or not it had ' + 'signed before, nor after the vault is unlocked again',
    async () => {
      const { vault, owner } = await restartedWithProxy();
      const fresh = (await vault.proxyFor(owner.address)).signer;
      const used = (await vault.proxyFor(owner.address)).signer;
      await used.sign!({ hash: DIGEST });
      const cached = (await vault.proxyFor(owner.address)).signer;
      await vault.lock();
      for (const signer of [fresh, used, cached]) {
        await expect(signer.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(VaultLockedError);
        await expect(signer.signMessage({ message: 'order' })).rejects.toBeInstanceOf(VaultLockedError);
        await expect(
          signer.signTypedData({ types: {}, primaryType: 'EIP712Domain', domain: { name: 'x' } }),
        ).rejects.toBeInstanceOf(VaultLockedError);
      }
      await vault.unlock(PASSWORD);
      for (const signer of [fresh, used, cached])
        await expect(signer.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(VaultLockedError);
      const after = (await vault.proxyFor(owner.address)).signer;
      await expect(after.sign!({ hash: DIGEST })).resolves.toMatch(/^0x/);
    },
  );

  it("a trading session's proxy key read signs nothing after the session ends in a lock", async () => {
    const { vault, owner } = await restartedWithProxy();
    await vault.enterTradingSession({ accounts: [owner.address] });
    const signer = (await vault.proxyFor(owner.address)).signer;
    await vault.lock();
    await expect(signer.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(VaultLockedError);
  });
});

describe('an owner key read before a lock', () => {
  it('signs nothing after the lock, nor after the vault is unlocked again; a read after the unlock signs', async () => {
    const { vault, owner } = await restartedWithProxy();
    const before = await vault.ownerAccount(owner.address);
    const expected = await before.sign!({ hash: DIGEST });
    await vault.lock();
    await expect(before.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(VaultLockedError);
    await expect(
      before.signTypedData({ types: {}, primaryType: 'EIP712Domain', domain: { name: 'x' } }),
    ).rejects.toBeInstanceOf(VaultLockedError);
    await vault.unlock(PASSWORD);
    await expect(before.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(VaultLockedError);
    const after = await vault.ownerAccount(owner.address);
    expect(after.address).toBe(before.address);
    await expect(after.sign!({ hash: DIGEST })).resolves.toBe(expected);
  });
});

describe('a proxy key read before its key is deleted or replaced', () => {
  it('signs nothing once the delete was called', async () => {
    const { vault, owner, proxy } = await restartedWithProxy();
    await vault.unlock(PASSWORD);
    const fresh = (await vault.proxyFor(owner.address)).signer;
    const used = (await vault.proxyFor(owner.address)).signer;
    await used.sign!({ hash: DIGEST });
    await vault.deleteProxy(proxy.proxy);
    for (const signer of [fresh, used])
      await expect(signer.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(KeyNotFoundError);
  });

  it(
    'signs nothing once another proxy key of the account ' + 'was stored; a read after it signs with the new key',
    async () => {
      const { vault, owner } = await restartedWithProxy();
      await vault.unlock(PASSWORD);
      const before = (await vault.proxyFor(owner.address)).signer;
      const next = generatePrivateKey();
      await vault.putProxy({
        account: owner.address,
        privateKey: next,
        secret: 'next-secret',
        expiry: 1_800_000_000_000 + 7_200_000,
      });
      await expect(before.sign!({ hash: DIGEST })).rejects.toBeInstanceOf(KeyNotFoundError);
      const after = (await vault.proxyFor(owner.address)).signer;
      expect(await after.sign!({ hash: DIGEST })).toBe(await realAccount(next).sign!({ hash: DIGEST }));
    },
  );
});
