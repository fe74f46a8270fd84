/**
 * The main-world provider (`window.countersign`): EIP-1193 `request`, `on` / `removeListener`, and
 * EIP-6963 discovery (`eip6963:announceProvider` on load and on every `eip6963:requestProvider`).
 * Only framing: it holds no secrets and decides nothing; every request goes to the content script.
 *
 * EIP-1193 `connect`: emitted (`{ chainId }`, hex) when the provider first can serve a
 * chain — the first answer of the background to `eth_chainId`, asked as soon as the page listens for
 * `connect` or after any request it makes — and again after a `disconnect` as soon as it serves again.
 * The background's own `connect` (to connected sites after an unlock) is passed on as it comes.
 * The provider asks nothing on its own before the page listens or asks (no worker is woken by a page
 * that never uses it).
 */
import { CONTENT_TARGET, PAGE_TARGET, readReply, type RequestFrame } from './framing';
import {
  fromRpcError,
  InvalidParamsRpcError,
  InvalidRequestRpcError,
  ProviderRpcError,
  readRpcError,
} from '../errors/rpc';

/** What a page's `request` rejects with: the shared `ProviderRpcError` (`name`, `code`, `message`, `data?`). */
export { ProviderRpcError };

const ICON =
  'data:image/svg+xml;base64,' +
  btoa(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" ' +
      'height="32" rx="7" fill="#065f46"/><path d="M8 17l5 5 11-12" stroke="#ecfdf5" ' +
      'stroke-width="3.5" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  );

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
  /** What the page was told last: `connect`, `disconnect`, or nothing yet. */
  let told: 'connect' | 'disconnect' | undefined;
  let probing = false;

  const deliver = (event: string, data: unknown) => {
    for (const fn of listeners.get(event) ?? []) {
      try {
        fn(data);
      } catch {
        /* a listener's error is the page's business */
      }
    }
  };
  const becameConnected = (chainId: unknown) => {
    if (told === 'connect' || typeof chainId !== 'string') return;
    told = 'connect';
    deliver('connect', { chainId });
  };
  /** Asks `eth_chainId` (once at a time) and emits `connect` with its answer unless already connected. */
  const probe = () => {
    if (told === 'connect' || probing) return;
    probing = true;
    send('eth_chainId', undefined).then(
      (chainId) => {
        probing = false;
        becameConnected(chainId);
      },
      () => {
        probing = false;
      },
    );
  };

  win.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== win) return;
    if (
      typeof event.data !== 'object' ||
      event.data === null ||
      !('target' in event.data) ||
      event.data.target !== PAGE_TARGET
    )
      return;
    const d = readReply(event.data);
    if (!d) return;
    if ('event' in d) {
      if (d.event === 'connect') told = 'connect'; // the background's own (after an unlock): passed on as sent
      if (d.event === 'disconnect') {
        if (told === 'disconnect') return;
        told = 'disconnect';
        // EIP-1193: `disconnect` carries a ProviderRpcError (an Error with `code`), not a plain object.
        return deliver('disconnect', fromRpcError(readRpcError(d.data)));
      }
      return deliver(d.event, d.data);
    }
    const w = waiting.get(d.id);
    if (!w) return;
    waiting.delete(d.id);
    if ('error' in d) w.reject(fromRpcError(d.error));
    else w.resolve(d.result);
    // The background answered: the provider serves a chain (a 4900 "unavailable" is no answer of the background's).
    if (told !== 'connect' && !('error' in d && d.error.code === 4900 && d.error.data?.retryable === true)) probe();
  });

  /** Posts one request frame to the content script; settles on the matching reply. */
  function send(method: string, params: unknown): Promise<unknown> {
    const id = `${prefix}-${++seq}`;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      const frame: RequestFrame = { target: CONTENT_TARGET, id, method, ...(params !== undefined ? { params } : {}) };
      try {
        win.postMessage(frame, win.location.origin);
      } catch {
        waiting.delete(id);
        reject(new InvalidParamsRpcError('params must be serialisable.'));
      }
    });
  }

  const provider = Object.freeze({
    isCountersign: true,
    request(args: { method: string; params?: unknown }): Promise<unknown> {
      if (!args || typeof args !== 'object' || typeof args.method !== 'string') {
        return Promise.reject(new InvalidRequestRpcError('request expects { method, params? }.'));
      }
      return send(args.method, 'params' in args ? args.params : undefined);
    },
    on(event: string, fn: (data: unknown) => void) {
      if (typeof fn !== 'function') return provider;
      const set = listeners.get(event) ?? new Set();
      set.add(fn);
      listeners.set(event, set);
      // A page that listens for `connect` learns it as soon as the provider serves (EIP-1193).
      if (event === 'connect') queueMicrotask(probe);
      return provider;
    },
    removeListener(event: string, fn: (data: unknown) => void) {
      listeners.get(event)?.delete(fn);
      return provider;
    },
  });

  Object.defineProperty(win, 'countersign', {
    value: provider,
    writable: false,
    configurable: false,
    enumerable: true,
  });
  const info = Object.freeze({ uuid: crypto.randomUUID(), ...PROVIDER_INFO });
  const announce = () =>
    win.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
  win.addEventListener('eip6963:requestProvider', announce);
  announce();
}
