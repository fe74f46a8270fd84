/**
 * The popup's start hint is good only for the unlock it was written in (popup open;
 * `lib/messaging/start-hint.ts`): every session change of the vault — lock, unlock, trading session —
 * renews the epoch and removes the hint, so a popup opened on a vault locked since never shows a ticket.
 */
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { START_HINT_KEY, usableHint, VAULT_EPOCH_KEY } from '../messaging/start-hint';
import { startBackground } from './index';
import { BOUNDS, browser, KDF } from '../../test/kits/background';

const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
const stored = () => fakeBrowser.storage.session.get([START_HINT_KEY, VAULT_EPOCH_KEY]);

beforeEach(() => fakeBrowser.reset());

describe('start hint epochs', () => {
  it(
    'a hint written while unlocked is usable until the vault locks; after ' +
      'the lock and after the next unlock it is gone and its epoch stale',
    async () => {
      const bg = startBackground({ browser, dbName: `start-hint-${Math.random()}`, kdf: KDF, bounds: BOUNDS });
      const call = async (type: string, payload: unknown = {}) =>
        (await bg.handle({ type, payload }, popup())) as { ok: boolean; result?: unknown };
      expect((await call('vault.create', { password: 'a good password' })).ok).toBe(true);
      // What the popup does: read the epoch, then the status, then store both.
      const epoch = (await stored())[VAULT_EPOCH_KEY];
      expect(typeof epoch).toBe('string');
      const status = (await call('vault.status')).result;
      await fakeBrowser.storage.session.set({ [START_HINT_KEY]: { epoch, status } });
      expect(usableHint(await stored())).toMatchObject({ unlocked: true });

      expect((await call('vault.lock')).ok).toBe(true);
      const afterLock = await stored();
      expect(afterLock[START_HINT_KEY]).toBeUndefined();
      expect(afterLock[VAULT_EPOCH_KEY]).not.toBe(epoch);
      // A popup that read the status just before the lock and writes its hint after it: still unusable.
      await fakeBrowser.storage.session.set({ [START_HINT_KEY]: { epoch, status } });
      expect(usableHint(await stored())).toBeUndefined();

      expect((await call('vault.unlock', { password: 'a good password' })).ok).toBe(true);
      const afterUnlock = await stored();
      expect(afterUnlock[START_HINT_KEY]).toBeUndefined();
      expect(afterUnlock[VAULT_EPOCH_KEY]).not.toBe(afterLock[VAULT_EPOCH_KEY]);
    },
  );
});
