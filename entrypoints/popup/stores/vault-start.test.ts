/** The popup's start (popup open): the start hint shown before the status, then replaced by it. */
import { describe, expect, it, vi } from 'vitest';
import { bootVault, createVaultStore } from './vault';
import { fakeCall } from './testkit';
import type { Status } from '../api';

const account = (address: string) => ({ address, label: address, proxies: [], hasClobCredentials: false });
const status = (active: string, unlocked = true): Status => ({
  initialized: true,
  unlocked,
  state: unlocked ? 'unlocked' : 'locked',
  retryAfterMs: 0,
  accounts: [account('0xA'), account('0xB')],
  activeAccount: active,
  pendingApprovals: 0,
  session: [],
  venueChosen: true,
  recoverable: false,
});

function deferred<T>() {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('vault store start', () => {
  it(
    'shows the hint at once, then the status when it answers, and ' +
      'stores that status with the epoch read before it was asked',
    async () => {
      const answer = deferred<Status>();
      const { call } = fakeCall({ 'vault.status': () => answer.promise });
      const write = vi.fn(async () => undefined);
      const hints = { read: async () => ({ status: status('0xA'), epoch: 'epoch-0001' }), write };
      const store = createVaultStore(call, hints);
      const started = store.start(bootVault(call, hints));
      await vi.waitFor(() => expect(store.account.value?.address).toBe('0xA'));
      answer.resolve(status('0xB'));
      await started;
      expect(store.account.value?.address).toBe('0xB');
      expect(write).toHaveBeenCalledWith({ epoch: 'epoch-0001', status: status('0xB') });
    },
  );

  it(
    'asks for the status only after the epoch was read (a lock in ' +
      'between changes the epoch, so the stored hint is never used)',
    async () => {
      const read = deferred<{ epoch?: string }>();
      const { call, calls } = fakeCall({ 'vault.status': () => status('0xA') });
      const hints = { read: () => read.promise, write: async () => undefined };
      const boot = bootVault(call, hints);
      await new Promise((r) => setTimeout(r, 20));
      expect(calls.filter((c) => c.type === 'vault.status')).toHaveLength(0);
      read.resolve({ epoch: 'epoch-0001' });
      await boot.first;
      expect(calls.filter((c) => c.type === 'vault.status')).toHaveLength(1);
    },
  );

  it('stores no hint from a locked status, and without a hint shows nothing until the status answers', async () => {
    const answer = deferred<Status>();
    const { call } = fakeCall({ 'vault.status': () => answer.promise });
    const write = vi.fn(async () => undefined);
    const hints = { read: async () => ({ epoch: 'epoch-0001' }), write };
    const store = createVaultStore(call, hints);
    const started = store.start(bootVault(call, hints));
    await new Promise((r) => setTimeout(r, 20));
    expect(store.status.value).toBeUndefined();
    answer.resolve(status('0xA', false));
    await started;
    expect(store.status.value?.unlocked).toBe(false);
    expect(write).not.toHaveBeenCalled();
  });
});
