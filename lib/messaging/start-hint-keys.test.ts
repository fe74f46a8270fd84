import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { beginEarlyRead, START_HINT_KEY, takeEarlyRead, VAULT_EPOCH_KEY } from './start-hint-keys';

describe('the popup boot script’s early start-hint read (issue #19)', () => {
  it('is taken by the first hint read only; a later read finds none and must ask storage.session again', async () => {
    await fakeBrowser.storage.session.set({ [START_HINT_KEY]: 'h', [VAULT_EPOCH_KEY]: 'epoch-1' });
    beginEarlyRead();
    // A lock after the boot read: the epoch changes; the early read still holds what was read at boot…
    await fakeBrowser.storage.session.set({ [VAULT_EPOCH_KEY]: 'epoch-2' });
    expect(await takeEarlyRead()).toEqual({ [START_HINT_KEY]: 'h', [VAULT_EPOCH_KEY]: 'epoch-1' });
    // …and it serves only that first read, even if the boot script ran again.
    beginEarlyRead();
    expect(takeEarlyRead()).toBeUndefined();
  });
});
