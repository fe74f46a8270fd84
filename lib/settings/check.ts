/**
 * The connection check after switching a preset ("Venue presets"): one cheap public read
 * per service and one handshake per stream, each reported on its own — ok, or the reason it failed —
 * with the time it took (ms). Nothing is signed and no credential is sent.
 *
 * | service | probe |
 * |---|---|
 * | perps gateway | `GET /v1/info/exchange`; its domain must equal the pinned one (`assertPinnedPerpsDomain`) |
 * | order book | `GET /time` (Unix seconds) |
 * | catalogue | `GET /markets?limit=1` (a list) |
 * | data service | `GET /v2/value?user=<zero address>` (the v2 envelope; a miss is `data: null`) |
 * | relayer | `GET /relay-payload?address=<zero address>&type=PROXY` (an object) |
 * | chain RPC | `eth_chainId`, which must equal `clobChainId` |
 * | bridge | `GET /supported-assets` (an object) |
 * | perps stream, order-book market and user channels | open the WebSocket; ok on `open` or a first frame; then close
 * (no auth frame) |
 */
import * as v from 'valibot';
import { fetchPerpsDomains } from '../perps/client';
import { fetchWithTimeout } from '../http/timeout';
import type { WebSocketConstructor, WebSocketLike } from '../streams/perps';
import { assertPinnedPerpsDomain } from './domain';
import { clobChannelUrl, type Settings } from './index';

/** The services the check reaches, in the order it reports them. */
export const CHECKED_SERVICES = [
  'perps',
  'perpsWs',
  'clob',
  'clobMarket',
  'clobUser',
  'gamma',
  'data',
  'relayer',
  'rpc',
  'bridge',
] as const;

/** One service's result: `ok`, or `reason` (one sentence); `ms` the time the probe took. */
export type ConnectionResult = {
  service: (typeof CHECKED_SERVICES)[number];
  label: string;
  url: string;
  ok: boolean;
  reason?: string;
  ms: number;
};

/**
 * What a check needs: the transport for the reads, a WebSocket constructor, a deadline per probe (ms), a clock (ms).
 */
export type CheckDeps = {
  fetchFn: typeof fetch;
  WebSocket: WebSocketConstructor | undefined;
  timeoutMs?: number;
  now?: () => number;
};

/** The settings fields a check reads. */
export type CheckedSettings = Pick<
  Settings,
  | 'perpsUrl'
  | 'perpsWsUrl'
  | 'clobUrl'
  | 'clobWsUrl'
  | 'gammaUrl'
  | 'dataUrl'
  | 'relayerUrl'
  | 'rpcUrl'
  | 'bridgeUrl'
  | 'clobChainId'
  | 'perpsDomain'
>;

const ZERO = '0x0000000000000000000000000000000000000000';
/** Default deadline of one probe (ms). */
const PROBE_TIMEOUT_MS = 5_000;

/** GETs (or POSTs) `url` and returns its JSON body; throws with the status on a non-2xx answer. */
async function json(fetchFn: typeof fetch, url: string, init?: RequestInit): Promise<unknown> {
  const res = await fetchFn(url, init);
  if (!res.ok) throw new Error(`answered HTTP ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new Error('answered something other than JSON');
  }
}

/** Throws `what` unless `schema` accepts `body`. */
function expectShape(schema: v.GenericSchema, body: unknown, what: string): void {
  if (!v.is(schema, body)) throw new Error(`answered ${what}`);
}

const rpcAnswer = v.object({ result: v.pipe(v.string(), v.regex(/^0x[0-9a-f]+$/i)) });

/**
 * Opens `url`, resolves on `open` or a first frame, rejects on `error` / `close` first or after `timeoutMs`; always
 * closes.
 */
function handshake(Ws: WebSocketConstructor, url: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let ws: WebSocketLike;
    try {
      ws = new Ws(url);
    } catch {
      return reject(new Error('is not a WebSocket URL this browser opens'));
    }
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        ws.close();
      } catch {
        /* already closed */
      }
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () => finish(new Error(`no handshake within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
    ws.addEventListener('open', () => finish());
    ws.addEventListener('message', () => finish());
    ws.addEventListener('error', () => finish(new Error('refused the WebSocket handshake')));
    ws.addEventListener('close', () => finish(new Error('closed before the handshake')));
  });
}

/** A person-readable reason for a failed probe. */
function reasonOf(err: unknown): string {
  if (err && typeof err === 'object' && 'shortMessage' in err && typeof err.shortMessage === 'string')
    return err.shortMessage;
  if (err instanceof TypeError) return 'could not be reached';
  return err instanceof Error ? err.message : 'failed';
}

/**
 * Runs every probe of `s` at once (see the module table) and returns one result per service in
 * `CHECKED_SERVICES` order. Never throws: a failure is a result with `ok: false` and its `reason`.
 */
export async function checkConnections(s: CheckedSettings, d: CheckDeps): Promise<ConnectionResult[]> {
  const timeoutMs = d.timeoutMs ?? PROBE_TIMEOUT_MS;
  const now = d.now ?? Date.now;
  const f = fetchWithTimeout(d.fetchFn, timeoutMs);
  const ws = (url: string) => async () => {
    if (!d.WebSocket) throw new Error('WebSockets are not available here');
    await handshake(d.WebSocket, url, timeoutMs);
  };
  const probes: { service: ConnectionResult['service']; label: string; url: string; run: () => Promise<void> }[] = [
    {
      service: 'perps',
      label: 'Perps gateway',
      url: s.perpsUrl,
      run: async () =>
        assertPinnedPerpsDomain(
          { ...s.perpsDomain, chainId: s.clobChainId },
          (await fetchPerpsDomains(s.perpsUrl, f)).domain,
        ),
    },
    { service: 'perpsWs', label: 'Perps session stream', url: s.perpsWsUrl, run: ws(s.perpsWsUrl) },
    {
      service: 'clob',
      label: 'Order book',
      url: s.clobUrl,
      run: async () =>
        expectShape(
          v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/))]),
          await json(f, `${s.clobUrl}/time`),
          'no server time',
        ),
    },
    {
      service: 'clobMarket',
      label: 'Order-book market channel',
      url: clobChannelUrl(s, 'market'),
      run: ws(clobChannelUrl(s, 'market')),
    },
    {
      service: 'clobUser',
      label: 'Order-book user channel',
      url: clobChannelUrl(s, 'user'),
      run: ws(clobChannelUrl(s, 'user')),
    },
    {
      service: 'gamma',
      label: 'Catalogue',
      url: s.gammaUrl,
      run: async () =>
        expectShape(v.array(v.unknown()), await json(f, `${s.gammaUrl}/markets?limit=1`), 'no market list'),
    },
    {
      service: 'data',
      label: 'Data service',
      url: s.dataUrl,
      run: async () =>
        expectShape(
          v.object({ data: v.unknown() }),
          await json(f, `${s.dataUrl}/v2/value?user=${ZERO}`),
          'no v2 envelope',
        ),
    },
    {
      service: 'relayer',
      label: 'Relayer',
      url: s.relayerUrl,
      run: async () =>
        expectShape(
          v.record(v.string(), v.unknown()),
          await json(f, `${s.relayerUrl}/relay-payload?address=${ZERO}&type=PROXY`),
          'no relay payload',
        ),
    },
    {
      service: 'rpc',
      label: 'Chain RPC',
      url: s.rpcUrl,
      run: async () => {
        const body = await json(f, s.rpcUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        });
        if (!v.is(rpcAnswer, body)) throw new Error('answered no chain id');
        const chain = Number.parseInt(body.result, 16);
        if (chain !== s.clobChainId) throw new Error(`is on chain ${chain}, not the preset's ${s.clobChainId}`);
      },
    },
    {
      service: 'bridge',
      label: 'Bridge',
      url: s.bridgeUrl,
      run: async () =>
        expectShape(
          v.record(v.string(), v.unknown()),
          await json(f, `${s.bridgeUrl}/supported-assets`),
          'no asset list',
        ),
    },
  ];
  return Promise.all(
    probes.map(async ({ run, ...p }) => {
      const start = now();
      try {
        await run();
        return { ...p, ok: true, ms: now() - start };
      } catch (err) {
        return { ...p, ok: false, reason: reasonOf(err), ms: now() - start };
      }
    }),
  );
}
