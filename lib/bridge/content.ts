/**
 * The content-script relay (isolated world): accepts request frames from the same window only
 * (`event.source === window`, exact framing — see `framing.ts`), forwards a clean copy over a runtime
 * port, and posts replies and events back to the page's own origin. When the port drops (the service
 * worker stopped or the extension reloaded) every request still pending is answered with a retryable
 * 4900 error; the next request opens a new port. When no port can be opened at all (the extension was
 * removed or reloaded) the page also gets `disconnect` (4900): the provider serves no chain. Holds no
 * secrets; attaches nothing unvalidated.
 */
import {
  PAGE_TARGET,
  PORT_NAME,
  readReply,
  readRequestFrame,
  type EventFrame,
  type PortRequest,
  type ReplyFrame,
} from './framing';

/** The part of a `runtime.Port` the relay uses (`browser.runtime.connect(PORT_NAME)`). */
export type RelayPort = {
  postMessage: (m: PortRequest) => void;
  onMessage: { addListener: (fn: (m: unknown) => void) => void };
  onDisconnect: { addListener: (fn: () => void) => void };
};

/**
 * Starts the relay on `win`: `connect(name)` opens the port to the background (called lazily, again after
 * a disconnect). Frames the content script refuses are answered with their code (-32600 / -32602); a
 * duplicate pending id with -32600.
 */
export function startContentRelay(connect: (name: string) => RelayPort, win: Window): void {
  let port: RelayPort | undefined;
  const pending = new Set<string>();
  const toPage = (frame: ReplyFrame | EventFrame) => win.postMessage(frame, win.location.origin);
  const fail = (id: string, code: number, message: string, data?: { retryable: boolean }) =>
    toPage({ target: PAGE_TARGET, id, error: { code, message, ...(data ? { data } : {}) } });

  const ensurePort = (): RelayPort => {
    if (port) return port;
    const p = connect(PORT_NAME);
    p.onMessage.addListener((m) => {
      const msg = readReply(m);
      if (!msg) return;
      if ('event' in msg) toPage({ target: PAGE_TARGET, ...msg });
      else if (pending.delete(msg.id)) toPage({ target: PAGE_TARGET, ...msg });
    });
    p.onDisconnect.addListener(() => {
      if (port === p) port = undefined;
      for (const id of pending)
        fail(id, 4900, 'Countersign restarted before answering; retry the request.', { retryable: true });
      pending.clear();
    });
    port = p;
    return p;
  };

  win.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== win) return;
    const f = readRequestFrame(event.data);
    if (!f.ok) {
      if (f.id && f.code) fail(f.id, f.code, `Invalid request: ${f.reason}.`);
      return;
    }
    if (pending.has(f.id)) {
      fail(f.id, -32600, 'Duplicate request id.');
      return;
    }
    pending.add(f.id);
    try {
      ensurePort().postMessage({ id: f.id, method: f.method, params: f.params });
    } catch {
      port = undefined;
      try {
        ensurePort().postMessage({ id: f.id, method: f.method, params: f.params });
      } catch {
        pending.delete(f.id);
        fail(f.id, 4900, 'Countersign is unavailable; retry the request.', { retryable: true });
        // No port can be opened (the extension was removed or reloaded): the provider serves no chain.
        toPage({
          target: PAGE_TARGET,
          event: 'disconnect',
          data: { code: 4900, message: 'Countersign is unavailable.' },
        });
      }
    }
  });
}
