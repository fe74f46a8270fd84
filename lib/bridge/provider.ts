/**
 * The main-world provider (`window.countersign`): EIP-1193 `request`, `on` / `removeListener`, and
 * EIP-6963 discovery (`eip6963:announceProvider` on load and on every `eip6963:requestProvider`).
 * Only framing: it holds no secrets and decides nothing; every request goes to the content script.
 */
import { CONTENT_TARGET, PAGE_TARGET, readReply, type RequestFrame } from './framing';
import { fromRpcError, InvalidParamsRpcError, InvalidRequestRpcError, ProviderRpcError, readRpcError } from '../provider/errors';

/** What a page's `request` rejects with: the shared `ProviderRpcError` (`name`, `code`, `message`, `data?`). */
export { ProviderRpcError };

const ICON =
  'data:image/svg+xml;base64,' +
  btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#065f46"/><path d="M8 17l5 5 11-12" stroke="#ecfdf5" stroke-width="3.5" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>');

/** EIP-6963 provider info announced to pages: name, reverse-DNS id and icon (data URL). */
export const PROVIDER_INFO = { name: 'Countersign', rdns: 'xyz.countersign', icon: ICON } as const;

/**
 * Installs `window.countersign` (frozen, non-configurable) on `win` once and announces it (EIP-6963).
 * `request` posts a `RequestFrame` to the content script and settles on the matching reply frame.
 */
export function installProvider(win: Window & { countersign?: unknown }): void {
  if (win.countersign) return;
  const waiting = new Map<string, { resolve: (v: unknown) => void; reject: (e: ProviderRpcError) => void }>();
  const listeners = new Map<string, Set<(data: unknown) => void>>();
  let seq = 0;
  const prefix = Math.random().toString(36).slice(2, 10);

  win.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== win) return;
    if (typeof event.data !== 'object' || event.data === null || !('target' in event.data) || event.data.target !== PAGE_TARGET) return;
    const d = readReply(event.data);
    if (!d) return;
    if ('event' in d) {
      // EIP-1193: `disconnect` carries a ProviderRpcError (an Error with `code`), not a plain object.
      const data = d.event === 'disconnect' ? fromRpcError(readRpcError(d.data)) : d.data;
      for (const fn of listeners.get(d.event) ?? []) {
        try {
          fn(data);
        } catch {
          /* a listener's error is the page's business */
        }
      }
      return;
    }
    const w = waiting.get(d.id);
    if (!w) return;
    waiting.delete(d.id);
    if ('error' in d) w.reject(fromRpcError(d.error));
    else w.resolve(d.result);
  });

  const provider = Object.freeze({
    isCountersign: true,
    request(args: { method: string; params?: unknown }): Promise<unknown> {
      if (!args || typeof args !== 'object' || typeof args.method !== 'string') {
        return Promise.reject(new InvalidRequestRpcError('request expects { method, params? }.'));
      }
      const id = `${prefix}-${++seq}`;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const frame: RequestFrame = { target: CONTENT_TARGET, id, method: args.method, ...('params' in args && args.params !== undefined ? { params: args.params } : {}) };
        try {
          win.postMessage(frame, win.location.origin);
        } catch {
          waiting.delete(id);
          reject(new InvalidParamsRpcError('params must be serialisable.'));
        }
      });
    },
    on(event: string, fn: (data: unknown) => void) {
      if (typeof fn !== 'function') return provider;
      const set = listeners.get(event) ?? new Set();
      set.add(fn);
      listeners.set(event, set);
      return provider;
    },
    removeListener(event: string, fn: (data: unknown) => void) {
      listeners.get(event)?.delete(fn);
      return provider;
    },
  });

  Object.defineProperty(win, 'countersign', { value: provider, writable: false, configurable: false, enumerable: true });
  const info = Object.freeze({ uuid: crypto.randomUUID(), ...PROVIDER_INFO });
  const announce = () => win.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
  win.addEventListener('eip6963:requestProvider', announce);
  announce();
}
