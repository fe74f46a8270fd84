/**
 * Shared setup of the background's unit suites (test-only; nothing in the extension imports it): cheap
 * KDF parameters and their bounds, and the parts of the WebExtension API the background uses, on WXT's
 * fake browser (`fakeBrowser.reset()` between tests). Windows open as id 1; the badge is not recorded.
 */
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { BackgroundBrowser } from './index';

/** scrypt N = 2^10 (tests only: the extension uses `DEFAULT_KDF`). */
export const KDF = { name: 'scrypt' as const, N: 2 ** 10, r: 8, p: 1, dkLen: 32 as const };
/** Bounds that accept `KDF`. */
export const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 20, maxR: 16, maxP: 4 };

/** The background's browser API on the fake browser: runtime, session storage, alarms, windows, badge. */
export const browser: BackgroundBrowser = {
  runtime: {
    get id() {
      return fakeBrowser.runtime.id;
    },
    getURL: (p: string) => fakeBrowser.runtime.getURL(p as '/'),
    onMessage: fakeBrowser.runtime.onMessage as unknown as BackgroundBrowser['runtime']['onMessage'],
    onStartup: fakeBrowser.runtime.onStartup,
    onConnect: { addListener: () => undefined },
  },
  storage: { session: fakeBrowser.storage.session as unknown as BackgroundBrowser['storage']['session'] },
  alarms: fakeBrowser.alarms as unknown as BackgroundBrowser['alarms'],
  windows: { create: async () => ({ id: 1 }), update: async () => undefined, onRemoved: { addListener: () => undefined } },
  action: { setBadgeText: () => undefined },
};
