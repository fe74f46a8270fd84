/**
 * The extension's perps session stream client (PROTOCOL.md §5.1): one WebSocket per venue
 * and account, owned by the background worker, that authenticates with the proxy and its secret,
 * subscribes to the account channels and hands on validated, secret-free events.
 *
 * As the official client does it (`@polymarket/client` 0.2.0, PROTOCOL.md §5.1):
 * - open → `auth` (await `{status:"ok"}`) → `sub` (await ack) → live; the backoff counter resets.
 * - JSON ping every 25 s; any incoming frame is liveness; checked every 5 s, 65 s of silence = stale →
 *   the socket is closed and reconnected.
 * - An unexpected close, error, refused auth or stale socket reconnects after a full-jitter backoff:
 *   `random() × min(250 ms × 2ⁿ, 30 s)`, n the number of failed attempts since the last live session.
 *   After a reconnect `onResync('reconnect')`; when an event's `sq` is not its channel's previous + 1,
 *   `onResync('sequence_gap')` — the caller then re-reads over REST (the stream has no replay).
 * - Frames that are not JSON, not a response and not a valid event are dropped and counted
 *   (`status().malformed`).
 *
 * Without a proxy and secret the socket is public (PROTOCOL.md §5.2): no auth frame, only the public
 * channels of `publicChannels` / `setPublic` (`book::<iid>`, `bbo::<iid>`, `tickers::all`, …).
 *
 * Pure: the WebSocket constructor, the clock, the random source and the timers are injected, so it
 * runs in Node tests against the sandbox with `ws`. The secret goes into the auth frame on the socket
 * and nowhere else: no callback, status or error carries it, and nothing is logged.
 */
import { parsePerpsEvent, type PerpsStreamEvent } from './perps-frames';

/** The part of a WebSocket the client uses (the DOM `WebSocket` and `ws`'s both fit). */
export type WebSocketLike = {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'open' | 'close' | 'error', listener: () => void): void;
};

/** A WebSocket constructor: `new WebSocket(url)`, no subprotocol, no headers (PROTOCOL.md §5.1 "Address"). */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * `live`: authenticated and subscribed; `connecting`: opening, authenticating or subscribing; `down`: closed, waiting
 * to retry, or stopped.
 */
export type StreamState = 'live' | 'connecting' | 'down';

/** Why the caller must re-read over REST: the socket reconnected, or a channel skipped a sequence number. */
export type ResyncReason = 'reconnect' | 'sequence_gap';

/**
 * A stream's state for the popup: `lastEventAt` Unix ms of the last account event (null before any),
 * `retryInMs` the backoff delay of the pending retry (null when none), `malformed` frames dropped,
 * `reconnects` successful reconnects, `lastError` a short code (`auth_refused`, `closed`, `stale`,
 * `error`; never a frame's text).
 */
export type PerpsStreamStatus = {
  state: StreamState;
  lastEventAt: number | null;
  retryInMs: number | null;
  malformed: number;
  reconnects: number;
  lastError: string | null;
};

/** Timing of the client, ms (defaults: the official client's, PROTOCOL.md §5.1). */
export type PerpsStreamTiming = {
  baseDelayMs: number;
  maxDelayMs: number;
  pingEveryMs: number;
  checkEveryMs: number;
  staleAfterMs: number;
  ackTimeoutMs: number;
};

const DEFAULT_TIMING: PerpsStreamTiming = {
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  pingEveryMs: 25_000,
  checkEveryMs: 5_000,
  staleAfterMs: 65_000,
  ackTimeoutMs: 30_000,
};

/** The channels the official client subscribes (PROTOCOL.md §5.1; `tpsl` covers every `tpsl::<n>`). */
const ACCOUNT_CHANNELS = [
  'balances',
  'portfolio',
  'orders',
  'fills',
  'funding',
  'deposits',
  'withdrawals',
  'tpsl',
] as const;

/**
 * Options of `createPerpsStream`. `proxy` / `secret`: the session proxy's address and its REST secret (a
 * credential); without them the socket is public only (no auth frame, no account channels, PROTOCOL.md
 * §5.2). `publicChannels`: public channels to subscribe at each connect (e.g. `book::1`; changed later
 * with `setPublic`).
 */
export type PerpsStreamOptions = {
  wsUrl: string;
  proxy?: string;
  secret?: string;
  publicChannels?: readonly string[];
  WebSocket: WebSocketConstructor;
  onEvent: (event: PerpsStreamEvent) => void;
  onResync: (reason: ResyncReason, channel?: string) => void;
  /** Called on every state change with the new status. */
  onStatus?: (status: PerpsStreamStatus) => void;
  /** Uniform in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Unix ms (default `Date.now`). */
  now?: () => number;
  timing?: Partial<PerpsStreamTiming>;
};

/**
 * A running stream: `start` (idempotent), `stop` (closes and stops retrying), `status`, `setPublic`
 * (the public channels wanted now: the difference is subscribed / unsubscribed on the open socket, the
 * responses not awaited, as the official client does); `proxy` the session's proxy address (not a
 * secret; undefined on a public-only stream) and `command`, a signed command sent over the session
 * (`sendSessionCommand` below); `ping`, a `ping` post now, resolving true at its answer (the socket keeps
 * the venue's frames in order: every event sent before it has come) and false when the stream is not live
 * or the socket goes first.
 */
export type PerpsStream = {
  start: () => void;
  stop: () => void;
  status: () => PerpsStreamStatus;
  ping: () => Promise<boolean>;
  setPublic: (chs: readonly string[]) => void;
  readonly proxy: string | undefined;
  command: (cmd: SessionCommand, timeoutMs: number) => Promise<SessionCommandOutcome>;
};

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Whether an auth/sub response's `data` acknowledges (`{status:"ok"}` or an array with no `err`). */
function acked(data: unknown): boolean {
  if (Array.isArray(data)) return data.length > 0 && data.every(acked);
  return isRecord(data) && data.status === 'ok';
}

/**
 * Full-jitter backoff delay (ms) of failed attempt `n` (0-based): `random × min(base × 2ⁿ, max)`, the
 * official clients' rule on both venues (PROTOCOL.md §5.1, §5.3). `random` uniform in [0, 1).
 */
export function backoff(n: number, random: number, t: { baseDelayMs: number; maxDelayMs: number }): number {
  return Math.floor(random * Math.min(t.baseDelayMs * 2 ** Math.min(n, 30), t.maxDelayMs));
}

/**
 * Creates the stream (not yet connected: call `start`). See the module comment for the protocol.
 * Throws nothing; every failure shows in `status()` and is retried until `stop()`.
 */
export function createPerpsStream(opts: PerpsStreamOptions): PerpsStream {
  const t: PerpsStreamTiming = { ...DEFAULT_TIMING, ...opts.timing };
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const st: PerpsStreamStatus = {
    state: 'down',
    lastEventAt: null,
    retryInMs: null,
    malformed: 0,
    reconnects: 0,
    lastError: null,
  };
  let ws: WebSocketLike | null = null;
  let running = false;
  let attempts = 0;
  let everLive = false;
  let lastHeard = 0;
  let nextId = 1;
  const sq = new Map<string, number>();
  let publicChs = new Set(opts.publicChannels ?? []);
  const authed = opts.proxy !== undefined && opts.secret !== undefined;
  const timers: ReturnType<typeof setTimeout>[] = [];
  let intervals: ReturnType<typeof setInterval>[] = [];
  let retry: ReturnType<typeof setTimeout> | null = null;

  const emitStatus = () => opts.onStatus?.({ ...st });
  const setState = (state: StreamState) => {
    if (st.state === state) return;
    st.state = state;
    emitStatus();
  };
  const clearSocketTimers = () => {
    for (const x of timers.splice(0)) clearTimeout(x);
    for (const x of intervals) clearInterval(x);
    intervals = [];
  };

  /** Drops the socket (if any) and schedules the next attempt. */
  const fail = (reason: string) => {
    commands.drop(); // commands sent on this socket and still unanswered: outcome unknown
    endPings();
    const old = ws;
    ws = null;
    clearSocketTimers();
    if (old) {
      try {
        old.close(4000, reason);
      } catch {
        /* already closed */
      }
    }
    if (!running) return;
    st.lastError = reason;
    const delay = backoff(attempts, random(), t);
    attempts += 1;
    st.retryInMs = delay;
    st.state = 'down';
    emitStatus();
    retry = setTimeout(() => {
      retry = null;
      st.retryInMs = null;
      connect();
    }, delay);
  };

  const send = (frame: unknown) => ws?.send(JSON.stringify(frame));

  const request = (frame: Record<string, unknown>, onAck: () => void) => {
    const reqId = nextId++;
    pending.set(reqId, onAck);
    timers.push(setTimeout(() => pending.has(reqId) && fail('ack_timeout'), t.ackTimeoutMs));
    send({ id: reqId, ...frame });
  };
  const pending = new Map<number, () => void>();
  /** The `ping` posts waiting for their answers (by id): true at the answer, false when the socket goes. */
  const pings = new Map<number, (answered: boolean) => void>();
  const endPings = () => {
    for (const done of pings.values()) done(false);
    pings.clear();
  };
  const commands = commandWaiters();

  const onLive = () => {
    attempts = 0;
    st.lastError = null;
    if (everLive) st.reconnects += 1;
    setState('live');
    intervals.push(setInterval(() => send({ id: 0, req: 'post', op: { type: 'ping' } }), t.pingEveryMs));
    intervals.push(setInterval(() => now() - lastHeard > t.staleAfterMs && fail('stale'), t.checkEveryMs));
    if (everLive) opts.onResync('reconnect');
    everLive = true;
  };

  const onFrame = (raw: unknown) => {
    lastHeard = now();
    let frame: unknown;
    try {
      frame = JSON.parse(typeof raw === 'string' ? raw : String(raw));
    } catch {
      st.malformed += 1;
      return;
    }
    if (isRecord(frame) && typeof frame.id === 'number' && 'data' in frame && !('ch' in frame)) {
      const ping = pings.get(frame.id);
      if (ping) {
        pings.delete(frame.id);
        return ping(true);
      }
      if (commands.answer(frame.id, frame.data)) return;
      const ack = pending.get(frame.id);
      if (!ack) return; // the ping's answer (id 0) or an unknown id: liveness only
      pending.delete(frame.id);
      if (acked(frame.data)) ack();
      else fail('auth_refused');
      return;
    }
    const parsed = parsePerpsEvent(frame);
    if (!parsed) {
      st.malformed += 1;
      return;
    }
    const prev = sq.get(parsed.ch);
    sq.set(parsed.ch, parsed.sq);
    if (prev !== undefined && parsed.sq !== prev + 1) opts.onResync('sequence_gap', parsed.ch);
    if (parsed.event) {
      st.lastEventAt = now();
      opts.onEvent(parsed.event);
    }
  };

  function connect() {
    if (!running) return;
    setState('connecting');
    sq.clear();
    pending.clear();
    endPings();
    nextId = 1;
    let sock: WebSocketLike;
    try {
      sock = new opts.WebSocket(opts.wsUrl);
    } catch {
      fail('error');
      return;
    }
    ws = sock;
    lastHeard = now();
    // A dropped socket's late events are ignored: every listener first checks it is still the current one.
    sock.addEventListener('open', () => {
      if (ws !== sock) return;
      const chs = [...(authed ? ACCOUNT_CHANNELS : []), ...publicChs];
      const subscribe = () => (chs.length ? request({ req: 'sub', chs }, onLive) : onLive());
      if (authed)
        request({ op: { args: { proxy: opts.proxy, secret: opts.secret }, type: 'auth' }, req: 'post' }, subscribe);
      else subscribe();
    });
    sock.addEventListener('message', (ev) => ws === sock && onFrame(ev.data));
    sock.addEventListener('close', () => ws === sock && fail('closed'));
    sock.addEventListener('error', () => ws === sock && fail('error'));
  }

  return {
    start() {
      if (running) return;
      running = true;
      connect();
    },
    stop() {
      running = false;
      if (retry) clearTimeout(retry);
      retry = null;
      st.retryInMs = null;
      fail('stopped');
      setState('down');
    },
    status: () => ({ ...st }),
    ping() {
      if (!ws || st.state !== 'live') return Promise.resolve(false);
      const id = nextId++;
      return new Promise<boolean>((resolve) => {
        pings.set(id, resolve);
        send({ id, req: 'post', op: { type: 'ping' } });
      });
    },
    proxy: opts.proxy,
    command: (cmd, timeoutMs) =>
      ws && st.state === 'live'
        ? sendSessionCommand(ws, nextId++, cmd, timeoutMs, commands)
        : Promise.resolve({ kind: 'not_sent' }),
    setPublic(chs) {
      const next = new Set(chs);
      const added = [...next].filter((c) => !publicChs.has(c));
      const removed = [...publicChs].filter((c) => !next.has(c));
      publicChs = next;
      if (st.state !== 'live') return; // the next connect subscribes the new set
      if (removed.length) send({ id: nextId++, req: 'unsub', chs: removed });
      for (const c of removed) sq.delete(c);
      if (added.length) send({ id: nextId++, req: 'sub', chs: added });
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Commands over the session (PROTOCOL.md §5.1 "command")

/**
 * A signed command as the session carries it: the REST envelope's signed fields (`op`, `sig`, `salt`, `ts` ms, `exp`
 * ms).
 */
export type SessionCommand = { op: unknown; sig: string; salt: number; ts: number; exp?: number };

/**
 * What a session command came to: `answer` — the venue's `data` for its `id` (success or refusal, to
 * classify as REST's answer); `not_sent` — the session was not live, nothing left this side (REST may
 * carry it); `no_answer` — the frame was handed to the socket, then the socket dropped (`closed`) or
 * the deadline passed (`timeout`): the outcome is **unknown**, never to be resent by itself.
 */
export type SessionCommandOutcome =
  { kind: 'answer'; data: unknown } | { kind: 'not_sent' } | { kind: 'no_answer'; reason: 'closed' | 'timeout' };

/** The commands of one stream waiting for their answer, by request `id`. */
type CommandWaiters = {
  wait: (id: number, timeoutMs: number) => Promise<SessionCommandOutcome>;
  settle: (id: number, outcome: SessionCommandOutcome) => boolean;
  answer: (id: number, data: unknown) => boolean;
  drop: () => void;
};

/**
 * The waiters of a stream's commands: settled by the answer with their `id`, by the deadline, or by a drop of the
 * socket.
 */
function commandWaiters(): CommandWaiters {
  const waiting = new Map<number, (o: SessionCommandOutcome) => void>();
  const settle = (id: number, outcome: SessionCommandOutcome) => {
    const done = waiting.get(id);
    waiting.delete(id);
    done?.(outcome);
    return done !== undefined;
  };
  return {
    wait: (id, timeoutMs) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => settle(id, { kind: 'no_answer', reason: 'timeout' }), timeoutMs);
        waiting.set(id, (o) => {
          clearTimeout(timer);
          resolve(o);
        });
      }),
    settle,
    answer: (id, data) => settle(id, { kind: 'answer', data }),
    drop: () => {
      for (const id of [...waiting.keys()]) settle(id, { kind: 'no_answer', reason: 'closed' });
    },
  };
}

/**
 * Sends `cmd` on the live socket `ws` as the official client does — `{salt, sig, ts, exp?, id, op,
 * req:"post"}`, the signed envelope first (PROTOCOL.md §5.1) — and waits for the answer with that `id`
 * for at most `timeoutMs` (ms). A socket that is not open sends nothing (`not_sent`); once `send` was
 * called, a throw, a drop or the deadline is `no_answer` (the frame may have left).
 */
function sendSessionCommand(
  ws: WebSocketLike,
  id: number,
  cmd: SessionCommand,
  timeoutMs: number,
  waiters: CommandWaiters,
): Promise<SessionCommandOutcome> {
  if (ws.readyState !== 1) return Promise.resolve({ kind: 'not_sent' });
  const frame = JSON.stringify({
    salt: cmd.salt,
    sig: cmd.sig,
    ts: cmd.ts,
    ...(cmd.exp === undefined ? {} : { exp: cmd.exp }),
    id,
    op: cmd.op,
    req: 'post',
  });
  const outcome = waiters.wait(id, timeoutMs);
  try {
    ws.send(frame);
  } catch {
    waiters.settle(id, { kind: 'no_answer', reason: 'closed' });
  }
  return outcome;
}
