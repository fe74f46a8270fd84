/**
 * The connection check: against the sandbox every service answers; a wrong pin, a wrong
 * chain, a dead port and a dead stream each show as that service's error with its reason; and the
 * host permissions a preset asks for are exactly its REST hosts.
 */
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { checkConnections, CHECKED_SERVICES } from './check';
import { hostOrigins } from './hosts';
import { DEFAULT_SETTINGS } from './index';
import { presetById } from './presets';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const sandbox = () => {
  const ws = h.url.replace(/^http/, 'ws');
  return {
    ...DEFAULT_SETTINGS,
    perpsUrl: `${h.url}/perps`,
    perpsWsUrl: `${ws}/perps/v1/ws`,
    clobUrl: `${h.url}/clob`,
    clobWsUrl: `${ws}/clob/ws`,
    gammaUrl: `${h.url}/gamma`,
    dataUrl: `${h.url}/data`,
    relayerUrl: `${h.url}/relayer`,
    rpcUrl: `${h.url}/rpc`,
    bridgeUrl: `${h.url}/bridge`,
  };
};
const deps = { fetchFn: fetch, WebSocket, timeoutMs: 3_000 };

describe('checkConnections', () => {
  it('reports every service of the sandbox ok, in order, with its time', async () => {
    const results = await checkConnections(sandbox(), deps);
    expect(results.map((r) => r.service)).toEqual([...CHECKED_SERVICES]);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    for (const r of results) expect(r.ms).toBeGreaterThanOrEqual(0);
  });

  it('names what is wrong per service: another pinned domain, another chain, a dead port, a dead stream', async () => {
    const dead = 'http://127.0.0.1:9';
    const results = await checkConnections(
      {
        ...sandbox(),
        perpsDomain: { name: 'Countersign', version: '1' },
        clobChainId: 137,
        gammaUrl: `${dead}/gamma`,
        clobWsUrl: 'ws://127.0.0.1:9/ws',
        bridgeUrl: `${h.url}/nowhere`,
      },
      deps,
    );
    const by = Object.fromEntries(results.map((r) => [r.service, r]));
    expect(by.perps).toMatchObject({ ok: false, reason: expect.stringMatching(/"Polymarket".*"Countersign"/) });
    expect(by.rpc).toMatchObject({ ok: false, reason: "is on chain 80002, not the preset's 137" });
    expect(by.gamma).toMatchObject({ ok: false, reason: 'could not be reached' });
    expect(by.clobMarket).toMatchObject({ ok: false, url: 'ws://127.0.0.1:9/ws/market' });
    expect(by.clobUser?.ok).toBe(false);
    expect(by.bridge).toMatchObject({ ok: false, reason: 'answered HTTP 404' });
    expect(by.perpsWs?.ok).toBe(true);
    expect(by.data?.ok).toBe(true);
  });
});

describe('hostOrigins', () => {
  it("asks for exactly the venue preset's REST hosts, and nothing for the sandbox", () => {
    expect(hostOrigins(presetById('polymarket')!.values)).toEqual([
      'https://api.perpetuals.polymarket.com/*',
      'https://bridge.polymarket.com/*',
      'https://clob.polymarket.com/*',
      'https://data-api.polymarket.com/*',
      'https://gamma-api.polymarket.com/*',
      'https://polygon.drpc.org/*',
      'https://relayer-v2.polymarket.com/*',
    ]);
    expect(hostOrigins(DEFAULT_SETTINGS)).toEqual([]);
  });

  it(
    'in a release (no loopback at install) the sandbox asks ' +
      'for loopback, and a venue preset for the same https hosts',
    () => {
      expect(hostOrigins(DEFAULT_SETTINGS, false)).toEqual(['http://127.0.0.1/*']);
      expect(hostOrigins(presetById('preproduction')!.values, false)).toEqual(
        hostOrigins(presetById('preproduction')!.values, true),
      );
      expect(hostOrigins({ ...DEFAULT_SETTINGS, clobUrl: 'http://localhost:9000/clob' }, false)).toEqual([
        'http://127.0.0.1/*',
        'http://localhost/*',
      ]);
    },
  );
});
