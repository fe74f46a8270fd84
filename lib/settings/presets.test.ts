/**
 * Venue presets: the constants equal the official client's environment objects, every
 * preset validates, choosing one fills every service field, and editing a field makes the preset `custom`.
 */
import 'fake-indexeddb/auto';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { DEFAULT_SETTINGS, readSettings, settingsSchema, writeSettings } from './index';
import { PRESET_FIELDS, PRESETS, presetById, settlePreset } from './presets';

/**
 * The parts of `@polymarket/client`'s environment objects the presets copy (read at run time: `preproduction` is
 * untyped).
 */
const envSchema = v.object({
  chainId: v.number(),
  rpc: v.string(),
  perps: v.object({ rest: v.string(), ws: v.string() }),
  clob: v.object({ rest: v.string(), market: v.object({ ws: v.string() }), user: v.object({ ws: v.string() }) }),
  gamma: v.object({ rest: v.string() }),
  data: v.object({ rest: v.string() }),
  relayer: v.object({ rest: v.string() }),
});

async function clientEnv(name: 'production' | 'preproduction') {
  const mod: Record<string, unknown> = await import('@polymarket/client');
  return v.parse(envSchema, mod[name]);
}

describe('presets', () => {
  it.each([
    ['polymarket', 'production'],
    ['preproduction', 'preproduction'],
  ] as const)('%s fills every service from @polymarket/client `%s`', async (id, env) => {
    const e = await clientEnv(env);
    const p = presetById(id)!.values;
    expect(p).toMatchObject({
      perpsUrl: e.perps.rest,
      perpsWsUrl: e.perps.ws,
      clobUrl: e.clob.rest,
      gammaUrl: e.gamma.rest,
      dataUrl: e.data.rest,
      relayerUrl: e.relayer.rest,
      rpcUrl: e.rpc,
      clobChainId: e.chainId,
      headerSet: 'venue',
      perpsDomain: { name: 'Polymarket', version: '1' },
    });
    expect(`${p.clobWsUrl}/market`).toBe(e.clob.market.ws);
    expect(`${p.clobWsUrl}/user`).toBe(e.clob.user.ws);
    expect(p.bridgeUrl).toBe('https://bridge.polymarket.com');
  });

  it('Polymarket is chain 137; Sandbox is the default settings; every preset passes the settings schema', () => {
    expect(presetById('polymarket')!.values.clobChainId).toBe(137);
    for (const f of PRESET_FIELDS) expect(presetById('sandbox')!.values[f]).toEqual(DEFAULT_SETTINGS[f]);
    for (const p of PRESETS)
      expect(v.safeParse(settingsSchema, { ...DEFAULT_SETTINGS, ...p.values, preset: p.id }).success).toBe(true);
    expect(PRESETS.filter((p) => p.live).map((p) => p.id)).toEqual(['polymarket', 'preproduction']);
  });
});

describe('settlePreset', () => {
  let n = 0;
  const save = async (db: Awaited<ReturnType<typeof openVaultDb>>, patch: Parameters<typeof settlePreset>[1]) =>
    writeSettings(db, settlePreset(await readSettings(db), patch));

  it(
    'choosing a preset fills every service field; editing ' + 'one makes it custom; choosing again restores it',
    async () => {
      const db = await openVaultDb(`presets-${n++}`);
      let s = await save(db, { preset: 'polymarket', perpsUrl: 'https://ignored.example' });
      expect(s).toMatchObject({ preset: 'polymarket', ...presetById('polymarket')!.values });
      s = await save(db, { perpsWsUrl: 'wss://other.example/v1/ws' });
      expect(s.preset).toBe('custom');
      expect(s.perpsUrl).toBe('https://api.perpetuals.polymarket.com');
      s = await save(db, { preset: 'sandbox' });
      expect(s).toMatchObject({ ...DEFAULT_SETTINGS, confirmedPresets: s.confirmedPresets });
      s = await save(db, { autoLockMinutes: 5, clobChainId: 80002 });
      expect(s.preset).toBe('sandbox');
    },
  );
});
