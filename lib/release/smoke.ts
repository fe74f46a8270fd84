/**
 * The venue smoke run (`npm run smoke`, documented in lib/release/README.md "Venue smoke run"): reads and
 * cancels only — it never places an order, creates credentials or moves funds — against one preset's
 * services (the venue's pre-production environment by default), with the product's own request code:
 *
 * 1. the connection check of every service (`lib/settings/check.ts`: one public read per REST service,
 *    the perps domain pin, the chain id, a handshake per stream);
 * 2. with an owner key: its existing order-book API credentials, derived with an L1 header
 *    (`GET /auth/derive-api-key`, a read; a wallet without credentials skips 3-4);
 * 3. L2 reads: `GET /auth/api-keys`, `GET /data/orders` (open orders);
 * 4. an L2 cancel of an order id that cannot exist (`DELETE /order`, 32 zero bytes): the venue must take
 *    the signed cancel (2xx, the id in `not_canceled`) — nothing of the person's is touched.
 *
 * Header names, chain id and perps domain are the preset's. Node only; never bundled.
 */
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { buildL1Headers, type ApiCredentials } from '../clob/auth';
import { clobL2Request } from '../clob/client';
import { applyHeaderSet, fetchWithHeaderSet } from '../http/headers';
import { guardedFetch, guardedWebSocket, type TransportRule } from '../http/transport';
import { checkConnections } from '../settings/check';
import { DEFAULT_SETTINGS, SANDBOX_BASE, type Settings } from '../settings';
import { presetById, presetValuesOf, type PresetValues } from '../settings/presets';
import type { WebSocketConstructor } from '../streams/perps';

/** One step's outcome: `ok`, a one-line `detail`, and the time it took (ms). */
export type SmokeStep = { step: string; ok: boolean; detail: string; ms: number };

/** The record a run writes: what ran against what, when (ISO time), each step, and whether all passed. */
export type SmokeRecord = {
  preset: string;
  services: PresetValues;
  startedAt: string;
  ok: boolean;
  steps: SmokeStep[];
};

/** What to run against: a preset id (`preproduction` by default), optionally moved onto a sandbox `base`. */
export type SmokeOptions = {
  preset: 'polymarket' | 'preproduction' | 'sandbox';
  /**
   * A sandbox base URL (`http://127.0.0.1:8787`): every service URL moves onto the sandbox's layout; header names,
   * chain id and domain stay the preset's.
   */
  base?: string;
  /** The owner key whose credentials are derived (0x + 64 hex); without it steps 2-4 are skipped. */
  privateKey?: Hex;
  WebSocket: WebSocketConstructor;
  /** Deadline of one probe (ms, default 10 000). */
  timeoutMs?: number;
};

/** The preset's service values, moved onto a sandbox `base` when one is given. */
export function smokeServices(preset: SmokeOptions['preset'], base?: string): PresetValues {
  const p = presetById(preset);
  if (!p) throw new Error(`unknown preset ${preset}`);
  if (!base) return p.values;
  const moved = presetValuesOf(
    JSON.parse(
      JSON.stringify(DEFAULT_SETTINGS)
        .replaceAll(SANDBOX_BASE, base)
        .replaceAll(SANDBOX_BASE.replace(/^http/, 'ws'), base.replace(/^http/, 'ws')),
    ) as Settings,
  );
  return {
    ...moved,
    headerSet: p.values.headerSet,
    clobChainId: p.values.clobChainId,
    perpsDomain: p.values.perpsDomain,
  };
}

/** The smoke run's transport rule: https / wss, and loopback in clear for a local sandbox (`lib/http/transport.ts`). */
export const SMOKE_TRANSPORT_RULE: TransportRule = { loopbackCleartext: true };

/** A cancel of this order id can match no order (32 zero bytes). */
export const IMPOSSIBLE_ORDER_ID = `0x${'00'.repeat(32)}`;

/** Runs the smoke steps (module comment) and returns the record; never throws for a failing step. */
export async function runSmoke(o: SmokeOptions): Promise<SmokeRecord> {
  const services = smokeServices(o.preset, o.base);
  const steps: SmokeStep[] = [];
  const startedAt = new Date().toISOString();
  // The smoke run sends a ClobAuth signature and L2 headers: only over https (loopback in clear for a local
  // sandbox `base`: the smoke run is a developer's tool, never the release build), checked before each request.
  const secure = guardedFetch(fetch, SMOKE_TRANSPORT_RULE);
  const fetchFn = fetchWithHeaderSet(secure, async () => services.headerSet);
  const timed = async (step: string, fn: () => Promise<string>) => {
    const t0 = Date.now();
    try {
      steps.push({ step, ok: true, detail: await fn(), ms: Date.now() - t0 });
      return true;
    } catch (err) {
      steps.push({ step, ok: false, detail: err instanceof Error ? err.message : String(err), ms: Date.now() - t0 });
      return false;
    }
  };

  for (const r of await checkConnections(services, {
    fetchFn,
    WebSocket: guardedWebSocket(o.WebSocket, SMOKE_TRANSPORT_RULE),
    timeoutMs: o.timeoutMs ?? 10_000,
  })) {
    steps.push({
      step: `read ${r.service}`,
      ok: r.ok,
      detail: r.ok ? r.url : `${r.url}: ${r.reason ?? 'failed'}`,
      ms: r.ms,
    });
  }
  if (!o.privateKey) return { preset: o.preset, services, startedAt, ok: steps.every((s) => s.ok), steps };

  const account = privateKeyToAccount(o.privateKey);
  let credentials: ApiCredentials | undefined;
  await timed('derive API credentials (L1)', async () => {
    const timestamp = Number(await (await secure(`${services.clobUrl}/time`)).json());
    const headers = applyHeaderSet(
      { ...(await buildL1Headers(account, { chainId: services.clobChainId, timestamp, nonce: 0 })) },
      services.headerSet,
    );
    const res = await secure(`${services.clobUrl}/auth/derive-api-key`, { headers });
    if (res.status >= 400 && res.status < 500 && res.status !== 401)
      return `no API credentials for ${account.address} (HTTP ${res.status}): authenticated steps skipped`;
    if (!res.ok) throw new Error(`answered HTTP ${res.status}`);
    const body = (await res.json()) as Partial<ApiCredentials>;
    if (!body.apiKey || !body.secret || !body.passphrase) throw new Error('answered no credentials');
    credentials = { apiKey: body.apiKey, secret: body.secret, passphrase: body.passphrase };
    return `credentials of ${account.address} derived`;
  });
  const creds = credentials;
  if (creds) {
    const l2 = (method: string, requestPath: string, body?: unknown) =>
      clobL2Request(
        services.clobUrl,
        { address: account.address, credentials: creds, method, requestPath, ...(body === undefined ? {} : { body }) },
        fetchFn,
      );
    await timed(
      'read API keys (L2)',
      async () => `answered ${JSON.stringify(await l2('GET', '/auth/api-keys')).slice(0, 120)}`,
    );
    await timed('read open orders (L2)', async () => {
      const r = (await l2('GET', '/data/orders')) as { data?: unknown[] } | unknown[];
      return `${Array.isArray(r) ? r.length : (r.data?.length ?? 0)} open orders`;
    });
    await timed('cancel an order id that cannot exist (L2)', async () => {
      const r = (await l2('DELETE', '/order', { orderID: IMPOSSIBLE_ORDER_ID })) as {
        canceled?: unknown[];
        not_canceled?: Record<string, unknown>;
      };
      if (r.canceled?.length) throw new Error('the venue reports something canceled');
      if (!r.not_canceled || !(IMPOSSIBLE_ORDER_ID in r.not_canceled))
        throw new Error(`answered ${JSON.stringify(r).slice(0, 120)}`);
      return `refused as expected: ${JSON.stringify(r.not_canceled[IMPOSSIBLE_ORDER_ID])}`;
    });
  }
  return { preset: o.preset, services, startedAt, ok: steps.every((s) => s.ok), steps };
}
