/**
 * The page side without a browser: the main-world provider and the content-script relay on one fake
 * window (an `EventTarget` whose `postMessage` dispatches a `message` event from itself, as a page's
 * window does). The background is a fake port, or none at all (the extension is gone).
 */
import { describe, expect, it } from 'vitest';
import { installProvider, ProviderRpcError } from './provider';
import { startContentRelay, type RelayPort } from './content';
import type { PortRequest } from './framing';

type FakeWindow = Window & {
  countersign?: {
    request: (a: { method: string; params?: unknown }) => Promise<unknown>;
    on: (e: string, fn: (d: unknown) => void) => unknown;
  };
};

/** A window whose `postMessage` delivers a `message` event with `source` = itself (structured clone of `data`). */
function fakeWindow(): FakeWindow {
  const target = new EventTarget();
  const win = Object.assign(target, {
    location: { origin: 'https://app.example' },
    postMessage: (data: unknown) => {
      const event = new Event('message');
      Object.defineProperties(event, { data: { value: structuredClone(data) }, source: { value: win } });
      queueMicrotask(() => target.dispatchEvent(event));
    },
  });
  return win as unknown as FakeWindow;
}

/** A port to a background that answers every request with `answer` and can push events. */
function fakePort(answer: (m: PortRequest) => unknown) {
  const listeners: ((m: unknown) => void)[] = [];
  const port: RelayPort = {
    postMessage: (m) => queueMicrotask(() => listeners.forEach((fn) => fn({ id: m.id, result: answer(m) }))),
    onMessage: { addListener: (fn) => void listeners.push(fn) },
    onDisconnect: { addListener: () => undefined },
  };
  return { port, push: (event: string, data: unknown) => listeners.forEach((fn) => fn({ event, data })) };
}

describe('page-side events (EIP-1193)', () => {
  it(
    'delivers connect / accountsChanged / chainChanged ' + 'payloads as sent, and disconnect as a ProviderRpcError',
    async () => {
      const win = fakeWindow();
      const bg = fakePort(() => '0x13882');
      installProvider(win);
      startContentRelay(() => bg.port, win);
      const seen: [string, unknown][] = [];
      for (const e of ['connect', 'accountsChanged', 'chainChanged', 'disconnect'])
        win.countersign?.on(e, (d) => seen.push([e, d]));
      expect(await win.countersign?.request({ method: 'eth_chainId' })).toBe('0x13882'); // opens the port
      bg.push('connect', { chainId: '0x13882' });
      bg.push('accountsChanged', []);
      bg.push('chainChanged', '0x89');
      bg.push('disconnect', { code: 4900, message: 'Countersign is unavailable.' });
      await new Promise((r) => setTimeout(r, 0));
      expect(seen.slice(0, 4)).toEqual([
        ['connect', { chainId: '0x13882' }], // the provider's own: it serves (see below)
        ['connect', { chainId: '0x13882' }], // the background's, passed on
        ['accountsChanged', []],
        ['chainChanged', '0x89'],
      ]);
      const [name, payload] = seen[4] ?? [];
      expect(name).toBe('disconnect');
      expect(payload).toBeInstanceOf(ProviderRpcError);
      expect(payload).toBeInstanceOf(Error);
      expect(payload).toMatchObject({ code: 4900, message: 'Countersign is unavailable.' });
    },
  );

  it(
    'when the extension cannot be reached at all, the ' + 'request gets a retryable 4900 and the page a disconnect',
    async () => {
      const win = fakeWindow();
      installProvider(win);
      startContentRelay(() => {
        throw new Error('Extension context invalidated.');
      }, win);
      const disconnects: unknown[] = [];
      win.countersign?.on('disconnect', (d) => disconnects.push(d));
      await expect(win.countersign?.request({ method: 'eth_chainId' })).rejects.toMatchObject({
        code: 4900,
        data: { retryable: true },
      });
      await new Promise((r) => setTimeout(r, 0));
      expect(disconnects).toHaveLength(1);
      expect(disconnects[0]).toBeInstanceOf(ProviderRpcError);
      expect(disconnects[0]).toMatchObject({ code: 4900 });
    },
  );

  it(
    'emits connect (with the chain id) as soon as the provider serves, ' +
      'to a page that only listens: once, and again after a disconnect',
    async () => {
      const win = fakeWindow();
      const asked: string[] = [];
      const bg = fakePort((m) => {
        asked.push(m.method);
        return m.method === 'eth_chainId' ? '0x13882' : [];
      });
      installProvider(win);
      startContentRelay(() => bg.port, win);
      const seen: [string, unknown][] = [];
      for (const e of ['connect', 'disconnect']) win.countersign?.on(e, (d) => seen.push([e, d]));
      const settle = async () => {
        for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
      };
      await settle();
      // No request from the page: the provider asked the chain id itself and told the page it serves.
      expect(seen).toEqual([['connect', { chainId: '0x13882' }]]);
      expect(asked).toEqual(['eth_chainId']);
      // Further answers add no connect of the provider's own.
      expect(await win.countersign?.request({ method: 'eth_accounts' })).toEqual([]);
      await settle();
      expect(seen.map(([e]) => e)).toEqual(['connect']);
      expect(asked).toEqual(['eth_chainId', 'eth_accounts']);
      // After a disconnect, the next answer means it serves again: connect once more.
      bg.push('disconnect', { code: 4900, message: 'Countersign is unavailable.' });
      bg.push('disconnect', { code: 4900, message: 'Countersign is unavailable.' });
      await settle();
      expect(seen.map(([e]) => e)).toEqual(['connect', 'disconnect']);
      await win.countersign?.request({ method: 'eth_accounts' });
      await settle();
      expect(seen.map(([e]) => e)).toEqual(['connect', 'disconnect', 'connect']);
      expect(seen[2]![1]).toEqual({ chainId: '0x13882' });
    },
  );

  it('asks nothing of the background while the page neither listens for connect nor makes a request', async () => {
    const win = fakeWindow();
    let opened = 0;
    installProvider(win);
    startContentRelay(() => {
      opened++;
      return fakePort(() => '0x1').port;
    }, win);
    win.countersign?.on('accountsChanged', () => undefined);
    for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
    expect(opened).toBe(0);
  });
});
