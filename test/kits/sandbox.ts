/**
 * Test helpers for driving a sandbox over real HTTP on an ephemeral loopback port, with a clock the
 * test controls, and a gateway hop that lies in the public reads (`startLyingGateway`). Used by the
 * sandbox tests and later integration tests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket as NodeWebSocket, WebSocketServer } from 'ws';
import { privateKeyToAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../lib/sandbox/server';
import { signPerpsCommand } from '../../lib/perps/envelope';
import { sendPerpsCommand, perpsRead } from '../../lib/perps/client';
import type { PerpsCommand } from '../../lib/perps/commands';

/** A running sandbox on a test-controlled clock, with the demo keys and helpers to sign, send and read. */
export type Harness = RunningSandbox & {
  clock: { now: number; advance: (ms: number) => void };
  perps: string;
  clobUrl: string;
  owner: LocalAccount;
  proxy: LocalAccount;
  proxyAuth: { proxy: string; secret: string };
  /** Signs `command` with `account` at the sandbox clock and sends it. */
  send: (
    account: LocalAccount,
    command: PerpsCommand,
    extra?: { exp?: number; nowMs?: number; salt?: number },
  ) => Promise<unknown>;
  read: (
    name: Parameters<typeof perpsRead>[1],
    query?: Record<string, string | number | undefined>,
    auth?: { proxy: string; secret: string },
  ) => Promise<unknown>;
  /** Raw POST/DELETE/PATCH of a JSON body to the perps gateway (for malformed or tampered envelopes). */
  raw: (
    method: string,
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: unknown; headers: Headers }>;
};

/**
 * Starts a sandbox on an ephemeral loopback port whose clock is `clock.now` (ms; advance it with
 * `clock.advance(ms)`). The clock stands still unless `options` names `now: undefined`: then it follows
 * the wall clock (plus whatever was advanced), so a suite that runs longer than the gateway's 5 s
 * timestamp window — a loaded machine, a whole file on one sandbox — is not refused `future_timestamp`.
 */
export async function startHarness(options: SandboxOptions = {}): Promise<Harness> {
  const live = 'now' in options && options.now === undefined;
  let base = Date.now();
  let offset = 0;
  const clock = {
    get now(): number {
      return live ? Date.now() + offset : base;
    },
    set now(ms: number) {
      if (live) offset = ms - Date.now();
      else base = ms;
    },
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const sb = await startSandbox(0, { ...options, now: () => clock.now });
  const perps = `${sb.url}/perps`;
  const owner = privateKeyToAccount(sb.demo.owner.privateKey);
  const proxy = privateKeyToAccount(sb.demo.proxy.privateKey);
  const proxyAuth = { proxy: sb.demo.proxy.address, secret: sb.demo.proxy.secret };
  const { perpsDomain: domain, perpsWithdrawDomain: withdrawDomain } = sb.ctx.config;
  return {
    ...sb,
    clock,
    perps,
    clobUrl: `${sb.url}/clob`,
    owner,
    proxy,
    proxyAuth,
    send: async (account, command, extra = {}) => {
      const envelope = await signPerpsCommand(account, {
        command,
        domain,
        withdrawDomain,
        nowMs: extra.nowMs ?? clock.now,
        ...(extra.exp === undefined ? {} : { exp: extra.exp }),
        ...(extra.salt === undefined ? {} : { salt: extra.salt }),
        commandTimeoutMs: 10 ** 12,
      });
      return sendPerpsCommand(perps, command, envelope);
    },
    read: (name, query, auth = proxyAuth) => perpsRead(perps, name, { auth, ...(query ? { query } : {}) }),
    raw: async (method, path, body, headers = {}) => {
      const res = await fetch(perps + path, {
        method,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  };
}

/** One answer the hop may rewrite: `path` is the request path (query cut off), `query` its parameters. */
export type HopAnswer = { method: string; path: string; query: URLSearchParams; status: number; body: unknown };

/** How the hop lies: each returns the body to serve instead, or `undefined` to serve the honest one. */
export type HopLies = {
  rewrite?: (a: HopAnswer) => unknown;
  rewriteError?: (a: HopAnswer) => unknown;
  /** A stream frame from the gateway (parsed JSON) → the frame to push instead, or `undefined`. */
  rewriteFrame?: (frame: unknown) => unknown;
};

/** A running hop: its base URL (`http://127.0.0.1:PORT`), the lies it tells (mutable between tests), `close()`. */
export type LyingGateway = { url: string; lies: HopLies; close: () => Promise<void> };

const HOP_HEADERS = new Set([
  'connection',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'keep-alive',
  'host',
]);

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A gateway hop (Node only — never imported by the extension): an HTTP server that forwards
 * every request to a sandbox and rewrites the JSON answers of its public reads, while the signing path
 * (every POST / DELETE / PATCH and its answer) passes through untouched. The product talks to it as to
 * a gateway URL (`${hop.url}/perps`, `${hop.url}/clob`, …), so tests hold it black-box: what a lying
 * gateway serves in its reads (names, titles, ticks, fees, prices, error and status texts) against what
 * reached the venue (the sandbox's request log).
 *
 * `rewrite(read)` receives each GET answer (`path` without the query, `query`, `status`, parsed `body`)
 * and returns the body to serve instead (`undefined`: served as the sandbox answered). `rewriteError`
 * does the same for the answers of the signing path that are errors (status ≥ 400), to serve lying
 * error texts; it cannot change what was sent. WebSocket upgrades are forwarded to the same path
 * upstream: frames from the client pass untouched, and each JSON frame from the gateway goes through
 * `rewriteFrame(frame)` (`undefined`: served as the sandbox sent it), so a stream can lie too.
 *
 * Starts the hop on 127.0.0.1 (ephemeral port) in front of `upstream` (a sandbox's base URL); `lies`
 * may be changed between requests (`hop.lies`).
 */
export function startLyingGateway(upstream: string, lies: HopLies = {}): Promise<LyingGateway> {
  const state: HopLies = lies;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', upstream);
    const headers: Record<string, string> = {};
    for (const [k, val] of Object.entries(req.headers))
      if (typeof val === 'string' && !HOP_HEADERS.has(k)) headers[k] = val;
    const body = method === 'GET' || method === 'HEAD' ? undefined : await bodyOf(req);
    const answer = await fetch(url, { method, headers, ...(body ? { body: new Uint8Array(body) } : {}) });
    const text = await answer.text();
    let served = text;
    const lie = method === 'GET' ? state.rewrite : answer.status >= 400 ? state.rewriteError : undefined;
    if (lie) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      const out = lie({ method, path: url.pathname, query: url.searchParams, status: answer.status, body: parsed });
      if (out !== undefined) served = typeof out === 'string' ? out : JSON.stringify(out);
    }
    answer.headers.forEach((val, k) => {
      if (!HOP_HEADERS.has(k)) res.setHeader(k, val);
    });
    res.statusCode = answer.status;
    res.end(served);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.statusCode = 502;
      res.end('{"error":"hop: upstream failed"}');
    });
  });
  // Streams: each client socket is paired with one upstream socket on the same path.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const target = new URL(req.url ?? '/', upstream.replace(/^http/, 'ws'));
    const up = new NodeWebSocket(target);
    up.on('error', () => socket.destroy());
    up.on('open', () =>
      wss.handleUpgrade(req, socket, head, (client) => {
        client.on('message', (data, binary) => up.readyState === up.OPEN && up.send(data, { binary }));
        up.on('message', (data, binary) => {
          let out: unknown;
          if (!binary && state.rewriteFrame) {
            try {
              out = state.rewriteFrame(JSON.parse(String(data)));
            } catch {
              out = undefined;
            }
          }
          if (client.readyState === client.OPEN)
            client.send(out === undefined ? data : JSON.stringify(out), { binary });
        });
        client.on('close', () => up.close());
        up.on('close', () => client.close());
      }),
    );
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        lies: state,
        close: () =>
          new Promise<void>((done) => {
            for (const c of wss.clients) c.terminate();
            wss.close();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Replaces, in a perps `instruments` answer, the fields `patch(instrument)` returns (by instrument id). */
export function patchInstruments(
  body: unknown,
  patch: (i: Record<string, unknown>) => Record<string, unknown> | undefined,
): unknown {
  const list = Array.isArray(body) ? body : (body as { data?: unknown[] } | undefined)?.data;
  if (!Array.isArray(list)) return undefined;
  const out = list.map((i) => ({ ...(i as Record<string, unknown>), ...(patch(i as Record<string, unknown>) ?? {}) }));
  return Array.isArray(body) ? out : { ...(body as object), data: out };
}
