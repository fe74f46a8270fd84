/**
 * A small WebSocket test client for the sandbox streams (Node only, `ws`): it keeps every frame received
 * (parsed as JSON when it is JSON) and waits for the first one a predicate accepts.
 */
import { WebSocket } from 'ws';

/** An open test socket: frames received so far, `send`, `next(predicate, timeoutMs)`, `close`. */
export type TestSocket = {
  ws: WebSocket;
  frames: unknown[];
  send: (frame: unknown) => void;
  /**
   * The first frame received (already or later) that `match` accepts and no earlier `next` returned; rejects after
   * `timeoutMs`.
   */
  next: (match: (frame: unknown) => boolean, timeoutMs?: number) => Promise<unknown>;
  /** Resolves when the server closes the socket, with its close code. */
  closed: Promise<number>;
  close: () => void;
};

/** Opens `url` and resolves when it is open. */
export function openTestSocket(url: string): Promise<TestSocket> {
  const ws = new WebSocket(url);
  const frames: unknown[] = [];
  const taken = new Set<number>();
  const waiters: { match: (f: unknown) => boolean; resolve: (f: unknown) => void }[] = [];
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('message', (raw) => {
    const text = raw.toString();
    let frame: unknown = text;
    try {
      frame = JSON.parse(text);
    } catch {
      /* a text frame such as PONG */
    }
    frames.push(frame);
    const i = frames.length - 1;
    const w = waiters.findIndex((x) => x.match(frame));
    if (w >= 0) {
      taken.add(i);
      waiters.splice(w, 1)[0]?.resolve(frame);
    }
  });
  const next = (match: (f: unknown) => boolean, timeoutMs = 3_000) =>
    new Promise<unknown>((resolve, reject) => {
      const i = frames.findIndex((f, k) => !taken.has(k) && match(f));
      if (i >= 0) {
        taken.add(i);
        return resolve(frames[i]);
      }
      const timer = setTimeout(
        () =>
          reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames).slice(0, 2_000)}`)),
        timeoutMs,
      );
      waiters.push({ match, resolve: (f) => (clearTimeout(timer), resolve(f)) });
    });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        ws,
        frames,
        send: (f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)),
        next,
        closed,
        close: () => ws.close(),
      }),
    );
  });
}
