/**
 * Discovery takes only Countersign's own provider: an announcement with Countersign's `rdns` from another extension
 * or the page (EIP-6963 does not authenticate `rdns`) is passed over, whatever order the announcements come in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { discoverCountersign } from './discover';
import { NotInstalledError } from './errors';

const real = { isCountersign: true, request: () => Promise.resolve(null), on() {}, removeListener() {} };

/** A page: a `window` that answers `eip6963:requestProvider` with `announce`'s providers, in that order. */
function pageWith(announce: unknown[], countersign: unknown = real) {
  const w = new EventTarget();
  Object.assign(w, { countersign });
  w.addEventListener('eip6963:requestProvider', () => {
    for (const provider of announce)
      w.dispatchEvent(
        Object.assign(new Event('eip6963:announceProvider'), {
          detail: { info: { rdns: 'xyz.countersign', uuid: 'u', name: 'n', icon: 'i' }, provider },
        }),
      );
  });
  Object.assign(globalThis, { window: w });
}

afterEach(() => {
  Reflect.deleteProperty(globalThis, 'window');
});

describe('discovering Countersign', () => {
  it("passes over a look-alike announced first and takes the page's window.countersign", async () => {
    const lookAlike = { ...real, request: () => Promise.resolve('spoofed') };
    pageWith([lookAlike, real]);
    await expect(discoverCountersign({ timeoutMs: 200 })).resolves.toBe(real);
  });

  it('ignores a provider that is not Countersign (no isCountersign, or no request function)', async () => {
    pageWith([{ request: () => Promise.resolve(null) }, { isCountersign: true }], undefined);
    await expect(discoverCountersign({ timeoutMs: 100 })).rejects.toBeInstanceOf(NotInstalledError);
  });

  it('rejects with NotInstalledError where there is no window (server-side rendering)', async () => {
    await expect(discoverCountersign()).rejects.toBeInstanceOf(NotInstalledError);
  });
});
