import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { beginEarlyRead, beginEarlyWatch, takeEarlyRead, takeEarlyWatch } from './early-reads';
import { firstWatchTarget, START_HINT_KEY, VAULT_EPOCH_KEY } from './start-hint-keys';

const ACCOUNT = '0x00000000000000000000000000000000000000aa';
const NOW = 1_000_000;
/** A stored hint as the popup writes it (`lib/messaging/start-hint.ts`), of epoch `epoch`. */
const stored = (epoch: string, status: Record<string, unknown> = {}) => ({
  [START_HINT_KEY]: {
    epoch,
    status: {
      unlocked: true,
      state: 'unlocked',
      activeAccount: ACCOUNT,
      accounts: [{ address: ACCOUNT, proxies: [{ expiry: NOW + 60_000 }] }],
      ...status,
    },
  },
  [VAULT_EPOCH_KEY]: 'epoch-1',
});

describe('the popup boot script’s early start-hint read', () => {
  it('is taken by the first hint read only; a later read finds none and must ask storage.session again', async () => {
    await fakeBrowser.storage.session.set({ [START_HINT_KEY]: 'h', [VAULT_EPOCH_KEY]: 'epoch-1' });
    void beginEarlyRead();
    // A lock after the boot read: the epoch changes; the early read still holds what was read at boot…
    await fakeBrowser.storage.session.set({ [VAULT_EPOCH_KEY]: 'epoch-2' });
    expect(await takeEarlyRead()).toEqual({ [START_HINT_KEY]: 'h', [VAULT_EPOCH_KEY]: 'epoch-1' });
    // …and it serves only that first read, even if the boot script ran again.
    void beginEarlyRead();
    expect(takeEarlyRead()).toBeUndefined();
  });
});

describe('firstWatchTarget', () => {
  it(
    'names the hinted active account and the last instrument when ' +
      'the hint is of the current epoch, unlocked, with a live proxy key',
    () => {
      expect(firstWatchTarget(stored('epoch-1'), 2, NOW)).toEqual({ account: ACCOUNT, iid: 2 });
    },
  );

  it(
    'names nothing for a hint of another epoch, a locked status, ' +
      'an expired proxy, a malformed hint or no last instrument',
    () => {
      expect(firstWatchTarget(stored('epoch-0'), 2, NOW)).toBeUndefined();
      expect(firstWatchTarget(stored('epoch-1', { unlocked: false }), 2, NOW)).toBeUndefined();
      expect(
        firstWatchTarget(stored('epoch-1', { accounts: [{ address: ACCOUNT, proxies: [{ expiry: NOW }] }] }), 2, NOW),
      ).toBeUndefined();
      expect(firstWatchTarget(stored('epoch-1', { accounts: 'x' }), 2, NOW)).toBeUndefined();
      expect(firstWatchTarget({ [START_HINT_KEY]: 'h', [VAULT_EPOCH_KEY]: 'epoch-1' }, 2, NOW)).toBeUndefined();
      expect(firstWatchTarget({}, 2, NOW)).toBeUndefined();
      expect(firstWatchTarget(stored('epoch-1'), 0, NOW)).toBeUndefined();
      expect(firstWatchTarget(stored('epoch-1'), Number.NaN, NOW)).toBeUndefined();
    },
  );
});

describe('beginEarlyWatch', () => {
  beforeEach(() => {
    vi.restoreAllMocks();
    void takeEarlyWatch();
  });

  it(
    'sends one streams.watch for the hinted account and ' + 'instrument and leaves the raw reply for the popup, once',
    async () => {
      const answer = { ok: true, result: { perpsBook: null, perpsAccount: null } };
      // The fake's sendMessage is typed as answering nothing; the background answers a reply.
      const send = vi
        .spyOn(fakeBrowser.runtime, 'sendMessage')
        // eslint-disable-next-line @typescript-eslint/no-misused-promises -- typed void; the browser answers
        .mockImplementation(() => Promise.resolve(Reflect.get({ answer }, 'answer')));
      beginEarlyWatch(
        Promise.resolve(
          stored('epoch-1', { accounts: [{ address: ACCOUNT, proxies: [{ expiry: Date.now() + 60_000 }] }] }),
        ),
        3,
      );
      const early = await takeEarlyWatch();
      expect(early).toMatchObject({ account: ACCOUNT, iid: 3 });
      expect((await early?.reply)?.reply).toEqual({ ok: true, result: { perpsBook: null, perpsAccount: null } });
      expect(send.mock.calls).toEqual([[{ type: 'streams.watch', payload: { account: ACCOUNT, perpsIid: 3 } }]]);
      expect(takeEarlyWatch()).toBeUndefined();
    },
  );

  it('sends nothing without a target, and never rejects when the read fails', async () => {
    const send = vi.spyOn(fakeBrowser.runtime, 'sendMessage');
    beginEarlyWatch(Promise.resolve(stored('epoch-0')), 3);
    expect(await takeEarlyWatch()).toBeUndefined();
    beginEarlyWatch(Promise.reject(new Error('no storage')), 3);
    expect(await takeEarlyWatch()).toBeUndefined();
    expect(send).not.toHaveBeenCalled();
  });
});
