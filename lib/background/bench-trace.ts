/**
 * Bench-only (`wxt build --mode bench`, through `bench-hooks.ts`): where a page request's time goes inside
 * the worker. `traceStart(bg)` wraps, on the running background's own instances, the calls a granted page
 * request makes — the session restore that starts `servePage` (`enter`), the grant decision (`decide`), the
 * artifact build (`prepare`), signing with submission (`execute`), the key reads (`key`), the `storage.session` writes
 * (`session.set`), the gateway `fetch` (REST), a socket's `send` (`ws.send`), the frames a socket that sent receives
 * (`ws.answer`, `ws.event`), each IndexedDB transaction (`idb.<stores>`: the journal, the grant uses, the audit log…)
 * and the broadcasts to extension pages (`push`: `runtime.sendMessage`, the stream pushes) — and records each call's
 * start and end (`performance.now()`, ms). `traceStop()` unwraps them and returns the spans that ended, in start
 * order. Nothing here changes what the calls do or answer.
 */
import type { Background } from './index';

/** One traced call: `name`, and its start and end (`performance.now()`, ms; a mark has `end === start`). */
export type TraceSpan = { name: string; start: number; end: number };

let undo: (() => void)[] = [];
let spans: TraceSpan[] = [];

/** Replaces `obj[key]` (a method) by a timed call of it, until `traceStop`. */
function wrap(obj: object, key: string, name: string): void {
  const o = obj as Record<string, unknown>;
  const orig = o[key];
  if (typeof orig !== 'function') return;
  const own = Object.prototype.hasOwnProperty.call(o, key);
  o[key] = function (this: unknown, ...args: unknown[]) {
    const span: TraceSpan = { name, start: performance.now(), end: NaN };
    spans.push(span);
    const out = (orig as (...a: unknown[]) => unknown).apply(this, args);
    if (out instanceof Promise) {
      out.then(
        () => (span.end = performance.now()),
        () => (span.end = performance.now()),
      );
    } else span.end = performance.now();
    return out;
  };
  undo.push(() => {
    if (own) o[key] = orig;
    else delete o[key];
  });
}

/** Sockets given a frame listener (once each, whatever the number of traces). */
const watched = new WeakSet<object>();

/**
 * Whether a frame is an answer: the order-book channel's `PONG`, or a JSON object opening with its request's `id` and
 * naming no channel (a perps command's or ping's answer, as the venues write them).
 */
const isAnswer = (data: unknown): boolean =>
  data === 'PONG' || (typeof data === 'string' && data.startsWith('{"id":') && !data.includes('"ch"'));

/**
 * Records each frame a socket that sends while traced receives: `ws.answer` (`isAnswer`) and `ws.event` (any other: a
 * channel's frame), from the event's time stamp (its arrival on the worker's thread) to the end of this listener,
 * added after the stream's own (so the end is when the stream's handling of it returned).
 */
function watchFrames(proto: object): void {
  const p = proto as { send: (this: WebSocket, data: unknown) => void };
  const send = p.send;
  p.send = function (this: WebSocket, data: unknown) {
    if (!watched.has(this)) {
      watched.add(this);
      this.addEventListener('message', (ev: MessageEvent) => {
        if (!undo.length) return;
        const name = isAnswer(ev.data) ? 'ws.answer' : 'ws.event';
        spans.push({ name, start: ev.timeStamp, end: performance.now() });
      });
    }
    return send.call(this, data);
  };
  undo.push(() => (p.send = send));
}

/**
 * Records each IndexedDB transaction as `idb.<stores>` (`idb.journal`, `idb.audit+meta`, …; `.r` when read-only), from
 * its creation to its `complete`, `abort` or `error`.
 */
function watchTransactions(proto: object): void {
  const p = proto as { transaction: (this: IDBDatabase, ...a: unknown[]) => IDBTransaction };
  const transaction = p.transaction;
  p.transaction = function (this: IDBDatabase, ...a: unknown[]) {
    const tx = transaction.apply(this, a);
    const stores = Array.isArray(a[0]) ? (a[0] as string[]).join('+') : String(a[0]);
    const span: TraceSpan = {
      name: `idb.${stores}${tx.mode === 'readonly' ? '.r' : ''}`,
      start: performance.now(),
      end: NaN,
    };
    spans.push(span);
    const end = () => (span.end = performance.now());
    for (const t of ['complete', 'abort', 'error']) tx.addEventListener(t, end);
    return tx;
  };
  undo.push(() => (p.transaction = transaction));
}

/** Starts tracing `bg`'s page path (see the module docstring); a trace already running is stopped first. */
export function traceStart(bg: Background): void {
  traceStop();
  wrap(bg.vault(), 'restoreSession', 'enter');
  wrap(bg.grants(), 'decide', 'decide');
  wrap(bg.service(), 'preparePerps', 'prepare');
  wrap(bg.service(), 'prepareClob', 'prepare');
  wrap(bg.service(), 'execute', 'execute');
  wrap(bg.vault(), 'proxyFor', 'key');
  wrap(bg.vault(), 'clobCredentials', 'key');
  const g = globalThis as unknown as {
    fetch: typeof fetch;
    chrome?: { storage?: { session?: object }; runtime?: object };
    WebSocket?: { prototype: object };
  };
  wrap(g, 'fetch', 'fetch');
  if (g.chrome?.storage?.session) wrap(g.chrome.storage.session, 'set', 'session.set');
  if (g.WebSocket) {
    wrap(g.WebSocket.prototype, 'send', 'ws.send');
    watchFrames(g.WebSocket.prototype);
  }
  if (g.chrome?.runtime) wrap(g.chrome.runtime, 'sendMessage', 'push');
  if (typeof IDBDatabase !== 'undefined') watchTransactions(IDBDatabase.prototype);
}

/**
 * Stops tracing: the calls are unwrapped; returns the spans recorded since `traceStart` that ended (a transaction or a
 * call still open is left out), in start order.
 */
export function traceStop(): TraceSpan[] {
  for (const u of undo.reverse()) u();
  undo = [];
  const out = spans.filter((x) => Number.isFinite(x.end)).sort((a, b) => a.start - b.start);
  spans = [];
  return out;
}
