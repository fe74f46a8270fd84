/**
 * The content-script relay (isolated world): accepts request frames from the same window only
 * (`event.source === window`, exact framing — see `framing.ts`), forwards a clean copy over a runtime
 * port, and posts replies and events back to the page's own origin. When the port drops (the service
 * worker stopped or the extension reloaded) every request still pending is answered with a retryable
 * 4900 error; the next request opens a new port. Holds no secrets; attaches nothing unvalidated.
 */
import { PAGE_TARGET, PORT_NAME, readRequestFrame } from './framing';

export type RelayPort = {
  postMessage: (m: unknown) => void;
  onMessage: { addListener: (fn: (m: unknown) => void) => void };
  onDisconnect: { addListener: (fn: () => void) => void };
};

export function startContentRelay(connect: (name: string) => RelayPort, win: Window): void {
  let port: RelayPort | undefined;
  const pending = new Set<string>();
  const toPage = (frame: Record<string, unknown>) => win.postMessage({ target: PAGE_TARGET, ...frame }, win.location.origin);

  const ensurePort = (): RelayPort => {
    if (port) return port;
    const p = connect(PORT_NAME);
    p.onMessage.addListener((m) => {
      const msg = m as { id?: unknown; result?: unknown; error?: unknown; event?: unknown; data?: unknown } | null;
      if (!msg || typeof msg !== 'object') return;
      if (typeof msg.id === 'string' && pending.has(msg.id)) {
        pending.delete(msg.id);
        const e = msg.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
        if (e) toPage({ id: msg.id, error: { code: Number(e.code) || -32603, message: String(e.message ?? 'Error'), ...(e.data ? { data: e.data } : {}) } });
        else toPage({ id: msg.id, result: msg.result ?? null });
      } else if (typeof msg.event === 'string' && ['accountsChanged', 'connect', 'disconnect', 'chainChanged'].includes(msg.event)) {
        toPage({ event: msg.event, data: msg.data ?? null });
      }
    });
    p.onDisconnect.addListener(() => {
      if (port === p) port = undefined;
      for (const id of pending) toPage({ id, error: { code: 4900, message: 'Countersign restarted before answering; retry the request.', data: { retryable: true } } });
      pending.clear();
    });
    port = p;
    return p;
  };

  win.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== win) return;
    const f = readRequestFrame(event.data);
    if (!f.ok) {
      if (f.id && f.code) toPage({ id: f.id, error: { code: f.code, message: `Invalid request: ${f.reason}.` } });
      return;
    }
    if (pending.has(f.id)) {
      toPage({ id: f.id, error: { code: -32600, message: 'Duplicate request id.' } });
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
        toPage({ id: f.id, error: { code: 4900, message: 'Countersign is unavailable; retry the request.', data: { retryable: true } } });
      }
    }
  });
}
