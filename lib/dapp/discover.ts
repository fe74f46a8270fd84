/**
 * Finding Countersign in a page by EIP-6963: listen for `eip6963:announceProvider`, then dispatch
 * `eip6963:requestProvider`, and take the announcement whose `rdns` is `xyz.countersign`. EIP-6963 does not
 * authenticate `rdns` (another extension or the page may announce the same name), so an announcement counts only
 * when its provider says `isCountersign`, has a `request` function and — when the page has `window.countersign`,
 * which Countersign defines frozen and non-configurable before any page script runs — is that very object.
 * Importing this module touches no browser global, so server-side rendering can import the package; calling
 * `discoverCountersign` where there is no `window` rejects with a typed error.
 */
import { NotInstalledError } from './errors.js';

/** The provider as a site sees it (EIP-1193): `request`, and the `accountsChanged` / `connect` / … events. */
export type Eip1193Provider = {
  request(args: { method: string; params?: readonly unknown[] | object }): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): void;
  removeListener(event: string, listener: (...args: unknown[]) => void): void;
};

/** The reverse-DNS name Countersign announces itself with (EIP-6963 `info.rdns`). */
export const COUNTERSIGN_RDNS = 'xyz.countersign';

/** `discoverCountersign` options: how long to wait for the announcement (ms, default 3000). */
export type DiscoverOptions = { timeoutMs?: number };

type Announcement = { info?: { rdns?: unknown }; provider?: unknown };

/** Whether `provider` is Countersign's own: `isCountersign`, a `request` function, and `pinned` itself when given. */
function isCountersignProvider(provider: unknown, pinned: unknown): provider is Eip1193Provider {
  if (typeof provider !== 'object' || provider === null) return false;
  if (pinned !== undefined && provider !== pinned) return false;
  const p = provider as { isCountersign?: unknown; request?: unknown };
  return p.isCountersign === true && typeof p.request === 'function';
}

/**
 * Resolves with Countersign's provider once it announces itself. Rejects with `NotInstalledError` when no
 * announcement comes within `timeoutMs`, or at once where there is no `window` (Node, server-side
 * rendering, a worker).
 */
export function discoverCountersign(options: DiscoverOptions = {}): Promise<Eip1193Provider> {
  const { timeoutMs = 3000 } = options;
  const w = (globalThis as { window?: Window }).window;
  if (!w || typeof w.addEventListener !== 'function')
    return Promise.reject(new NotInstalledError('There is no window here: discover Countersign in the browser.'));
  return new Promise((resolve, reject) => {
    const onAnnounce = (event: Event) => {
      const { info, provider } = ((event as CustomEvent<Announcement>).detail ?? {}) as Announcement;
      const pinned = (w as { countersign?: unknown }).countersign;
      if (info?.rdns !== COUNTERSIGN_RDNS || !isCountersignProvider(provider, pinned)) return;
      clearTimeout(timer);
      w.removeEventListener('eip6963:announceProvider', onAnnounce);
      resolve(provider);
    };
    const timer = setTimeout(() => {
      w.removeEventListener('eip6963:announceProvider', onAnnounce);
      reject(new NotInstalledError('Countersign is not installed (no EIP-6963 announcement).'));
    }, timeoutMs);
    w.addEventListener('eip6963:announceProvider', onAnnounce);
    w.dispatchEvent(new Event('eip6963:requestProvider'));
  });
}
