/**
 * The extension's perps stream client (PROTOCOL.md §5.1) against the in-process sandbox
 * (`ws` as the WebSocket) and, for what a real gateway cannot be made to do on demand (skip a `sq`,
 * send garbage, fall silent), against a scripted `ws` server.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket as NodeWebSocket, WebSocketServer } from 'ws';
import { createOrders } from '../perps/commands';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { createPerpsStream, type PerpsStream } from './perps';

type PerpsStreamOptions = Parameters<typeof createPerpsStream>[0];
type PerpsStreamStatus = ReturnType<PerpsStream['status']>;
type ResyncReason = Parameters<PerpsStreamOptions['onResync']>[0];
import type { PerpsStreamEvent } from './perps-frames';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

/** Every WebSocket the client made, so a test can drop one. */
const made: NodeWebSocket[] = [];
class TrackedWebSocket extends NodeWebSocket {
  constructor(url: string) {
    super(url);
    made.push(this);
  }
}

type Seen = {
  events: PerpsStreamEvent[];
  resyncs: { reason: ResyncReason; channel?: string }[];
  statuses: PerpsStreamStatus[];
};

function stream(
  url: string,
  auth: { proxy?: string; secret?: string },
  extra: Partial<PerpsStreamOptions> = {},
): { s: PerpsStream; seen: Seen } {
  const seen: Seen = { events: [], resyncs: [], statuses: [] };
  const s = createPerpsStream({
    wsUrl: url,
    ...auth,
    WebSocket: TrackedWebSocket,
    onEvent: (e) => seen.events.push(e),
    onResync: (reason, channel) => seen.resyncs.push(channel === undefined ? { reason } : { reason, channel }),
    onStatus: (st) => seen.statuses.push(st),
    random: () => 0.5,
    timing: { baseDelayMs: 100 },
    ...extra,
  });
  cleanups.push(() => s.stop());
  s.start();
  return { s, seen };
}

async function until(cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function sandbox(): Promise<Harness> {
  const h = await startHarness();
  cleanups.push(() => h.close());
  return h;
}
const wsUrlOf = (h: Harness) => `${h.url.replace('http', 'ws')}/perps/v1/ws`;

describe('perps stream against the sandbox', () => {
  it('goes live and hands on the order, fills, portfolio and balance of a crossing order in REST shapes', async () => {
    const h = await sandbox();
    const { s, seen } = stream(wsUrlOf(h), h.proxyAuth);
    await until(() => s.status().state === 'live');
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.002', tif: 'ioc' }] }));
    await until(() => seen.events.some((e) => e.kind === 'fills'));
    await until(() => seen.events.filter((e) => e.kind === 'portfolio').length >= 2);
    const order = seen.events.find((e) => e.kind === 'order');
    expect(order).toMatchObject({ order: { instrument_id: 1, buy: true, status: 'filled', filled_quantity: '0.002' } });
    expect(seen.events.find((e) => e.kind === 'fills')).toMatchObject({
      fills: [{ instrument_id: 1, side: 'long', quantity: '0.002', taker: true }],
    });
    expect(seen.events.filter((e) => e.kind === 'portfolio').at(-1)).toMatchObject({
      portfolio: { positions: [{ instrument_id: 1, size: '0.002' }] },
    });
    expect(seen.events.some((e) => e.kind === 'balance')).toBe(true);
    expect(s.status()).toMatchObject({ state: 'live', malformed: 0 });
    expect(s.status().lastEventAt).not.toBeNull();
    expect(seen.resyncs).toEqual([]);
  });

  it(
    'public only (no auth): the book, bbo and ticker of the instrument shown, ' +
      'updated as the book changes; setPublic moves to another instrument',
    async () => {
      const h = await sandbox();
      const { s, seen } = stream(wsUrlOf(h), {}, { publicChannels: ['book::1', 'bbo::1', 'tickers::1'] });
      await until(() => s.status().state === 'live' && seen.events.some((e) => e.kind === 'book'));
      expect(made.length).toBeGreaterThan(0);
      const first = seen.events.find((e) => e.kind === 'book');
      expect(first).toMatchObject({ kind: 'book', iid: 1 });
      expect(first?.kind === 'book' && first.book.bids.length).toBeGreaterThan(0);
      await until(() => seen.events.some((e) => e.kind === 'ticker') && seen.events.some((e) => e.kind === 'bbo'));
      const books = () => seen.events.filter((e) => e.kind === 'book').length;
      const before = books();
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60001', qty: '0.001', tif: 'gtc' }] }));
      await until(() => books() > before);
      const last = seen.events.filter((e) => e.kind === 'book').at(-1);
      expect(last?.kind === 'book' && last.book.bids.some(([p]) => p === '60001')).toBe(true);
      s.setPublic(['book::2']);
      await until(() => seen.events.some((e) => e.kind === 'book' && e.iid === 2));
      const n1 = seen.events.filter((e) => e.kind === 'book' && e.iid === 1).length;
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60002', qty: '0.001', tif: 'gtc' }] }));
      await new Promise((r) => setTimeout(r, 100));
      expect(seen.events.filter((e) => e.kind === 'book' && e.iid === 1).length).toBe(n1);
      expect(seen.resyncs).toEqual([]);
    },
  );

  it(
    'reconnects a dropped socket after the full-jitter ' + 'backoff, redoes auth and sub, and asks for a resync',
    async () => {
      const h = await sandbox();
      const { s, seen } = stream(wsUrlOf(h), h.proxyAuth);
      await until(() => s.status().state === 'live');
      made.at(-1)?.terminate();
      await until(() => s.status().state === 'down');
      // random 0.5 × min(100 ms × 2⁰, 30 s)
      expect(s.status().retryInMs).toBe(50);
      await until(() => s.status().state === 'live');
      expect(seen.resyncs).toEqual([{ reason: 'reconnect' }]);
      expect(s.status().reconnects).toBe(1);
      // Live again: the new socket carries events (auth and sub were redone).
      const before = seen.events.length;
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '60000', qty: '0.001', tif: 'gtc' }] }));
      await until(() => seen.events.slice(before).some((e) => e.kind === 'order'));
      // The backoff counter was reset by the live session: the next drop waits the first delay again.
      made.at(-1)?.terminate();
      await until(() => s.status().state === 'down');
      expect(s.status().retryInMs).toBe(50);
    },
  );

  it('backs off exponentially while auth is refused, and the secret appears in nothing it emits or logs', async () => {
    const h = await sandbox();
    const logs = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m));
    const wrong = { proxy: h.proxyAuth.proxy, secret: `${h.proxyAuth.secret.slice(0, -4)}beef` };
    const { s, seen } = stream(wsUrlOf(h), wrong, { timing: { baseDelayMs: 40 } });
    await until(() => seen.statuses.filter((x) => x.retryInMs !== null).length >= 3);
    expect(
      seen.statuses
        .filter((x) => x.retryInMs !== null)
        .slice(0, 3)
        .map((x) => x.retryInMs),
    ).toEqual([20, 40, 80]);
    expect(s.status().lastError).toBe('auth_refused');
    s.stop();
    // And with the right secret, once live and after events:
    const ok = stream(wsUrlOf(h), h.proxyAuth);
    await until(() => ok.s.status().state === 'live');
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
    await until(() => ok.seen.events.some((e) => e.kind === 'fills'));
    const everything = JSON.stringify([seen, ok.seen, s.status(), ok.s.status(), logs.map((l) => l.mock.calls)]);
    expect(everything).not.toContain(h.proxyAuth.secret);
    expect(everything).not.toContain(wrong.secret);
    for (const l of logs) expect(l).not.toHaveBeenCalled();
  });
});

/** A scripted gateway: acknowledges auth and sub, then runs `script(send)`; records what the client sent. */
async function scripted(script: (send: (frame: unknown) => void) => void) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const received: unknown[] = [];
  wss.on('connection', (sock) => {
    const send = (f: unknown) => sock.send(typeof f === 'string' ? f : JSON.stringify(f));
    sock.on('message', (raw) => {
      const f: unknown = JSON.parse(raw.toString());
      received.push(f);
      if (typeof f !== 'object' || f === null || !('id' in f) || f.id === 0) return;
      send({ id: f.id, data: { status: 'ok' } });
      if ('req' in f && f.req === 'sub') script(send);
    });
  });
  cleanups.push(() => new Promise<void>((r) => wss.close(() => r())));
  const addr = wss.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return { url: `ws://127.0.0.1:${port}/perps/v1/ws`, received, wss };
}

const order = (oid: number, status: string) => ({
  oid,
  iid: 1,
  buy: true,
  p: '60000',
  qty: '0.001',
  tif: 'gtc',
  po: false,
  ro: false,
  status,
  rest: '0.001',
  fill: '0',
  cts: 1,
  uts: 1,
});

describe('perps stream against a scripted gateway', () => {
  it('asks for a resync when a channel skips a sequence number, and still hands on the event', async () => {
    const g = await scripted((send) => {
      send({ ch: 'orders', ts: 1, sq: 1, data: order(7, 'open') });
      send({ ch: 'orders', ts: 2, sq: 3, data: order(7, 'cancelled') });
      send({ ch: 'fills', ts: 3, sq: 1, data: [] });
    });
    const { seen } = stream(g.url, { proxy: '0x0000000000000000000000000000000000000001', secret: 's3cret-value' });
    await until(() => seen.events.length === 3);
    expect(seen.resyncs).toEqual([{ reason: 'sequence_gap', channel: 'orders' }]);
    expect(seen.events.map((e) => (e.kind === 'order' ? e.order.status : e.kind))).toEqual([
      'open',
      'cancelled',
      'fills',
    ]);
  });

  it('ignores and counts malformed frames, and a frame with extra fields reaches no one with them', async () => {
    const g = await scripted((send) => {
      send('not json');
      send({ ch: 'orders', ts: 1, sq: 1, data: { oid: 'x' } });
      send({ ch: 'fills', ts: 1, sq: -1, data: [] });
      send({ ch: 'orders', ts: 1, sq: 2, data: { ...order(8, 'open'), secret: 'echoed-secret' } });
    });
    const { s, seen } = stream(g.url, { proxy: '0x0000000000000000000000000000000000000001', secret: 'echoed-secret' });
    await until(() => seen.events.length === 1);
    await until(() => s.status().malformed === 3);
    expect(JSON.stringify(seen.events)).not.toContain('echoed-secret');
    expect(s.status().state).toBe('live');
  });

  it('pings every interval, and closes and reconnects a socket silent for longer than the stale limit', async () => {
    let t = 0;
    const g = await scripted(() => undefined);
    const { s, seen } = stream(
      g.url,
      { proxy: '0x0000000000000000000000000000000000000001', secret: 'x' },
      {
        now: () => t,
        timing: { baseDelayMs: 20, pingEveryMs: 30, checkEveryMs: 20, staleAfterMs: 1_000 },
      },
    );
    await until(() => s.status().state === 'live');
    await until(() => g.received.some((f) => JSON.stringify(f) === '{"id":0,"req":"post","op":{"type":"ping"}}'));
    expect(seen.resyncs).toEqual([]);
    t += 1_001; // a minute of silence, as the client's clock sees it
    await until(() => s.status().lastError === 'stale' || seen.resyncs.length > 0);
    await until(() => seen.resyncs.length === 1);
    expect(seen.resyncs).toEqual([{ reason: 'reconnect' }]);
  });
});
