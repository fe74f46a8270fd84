import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import {
  clobChannelUrl,
  DEFAULT_SETTINGS,
  readSettings,
  readSettingsReport,
  SETTINGS_VERSION,
  writeSettings,
} from './index';

let n = 0;
const db = () => openVaultDb(`settings-test-${n++}`);

describe('readSettingsReport', () => {
  it('gives the defaults for an empty store, with nothing reported', async () => {
    expect(await readSettingsReport(await db())).toEqual({ settings: DEFAULT_SETTINGS, invalid: [] });
  });

  it('migrates a v1 record (bare values) and keeps every valid field', async () => {
    const d = await db();
    await d.put('settings', { perpsUrl: 'https://perps.example/api', autoLockMinutes: 30 }, 'prefs');
    const { settings, invalid } = await readSettingsReport(d);
    expect(settings).toEqual({
      ...DEFAULT_SETTINGS,
      perpsUrl: 'https://perps.example/api',
      perpsWsUrl: 'wss://perps.example/api/v1/ws',
      preset: 'custom',
      autoLockMinutes: 30,
    });
    expect(invalid).toEqual([]);
  });

  it('resets only the invalid field, reports it, and keeps the gateway URLs', async () => {
    const d = await db();
    await d.put(
      'settings',
      {
        version: SETTINGS_VERSION,
        values: {
          perpsUrl: 'https://perps.example',
          clobUrl: 'https://clob.example',
          autoLockMinutes: 0,
          theme: 'neon',
        },
      },
      'prefs',
    );
    const { settings, invalid } = await readSettingsReport(d);
    expect(settings.perpsUrl).toBe('https://perps.example');
    expect(settings.clobUrl).toBe('https://clob.example');
    expect(settings.autoLockMinutes).toBe(DEFAULT_SETTINGS.autoLockMinutes);
    expect(settings.theme).toBe(DEFAULT_SETTINGS.theme);
    expect(invalid.map((i) => i.field)).toEqual(['autoLockMinutes', 'theme']);
    expect(invalid[0]!.reason).toBe('must be at least 1');
  });
});

describe('writeSettings', () => {
  it('stores the current version and refuses an invalid patch naming the field, changing nothing', async () => {
    const d = await db();
    await writeSettings(d, { autoLockMinutes: 5 });
    expect(await d.get('settings', 'prefs')).toEqual({
      version: SETTINGS_VERSION,
      values: { ...DEFAULT_SETTINGS, autoLockMinutes: 5 },
    });
    await expect(writeSettings(d, { perpsUrl: 'ftp://x' })).rejects.toThrow(/perpsUrl/);
    expect((await readSettings(d)).autoLockMinutes).toBe(5);
  });
});

describe('v3: WebSocket and bridge URLs, the domain pin, the preset', () => {
  it(
    'migrates a v2 record: the perps WS URL the background ' +
      'derived, the channels base, the default pin, custom preset',
    async () => {
      const d = await db();
      await d.put(
        'settings',
        {
          version: 2,
          values: { ...v2Defaults(), perpsUrl: 'https://perps.example/api/', clobUrl: 'https://clob.example' },
        },
        'prefs',
      );
      const { settings, invalid } = await readSettingsReport(d);
      expect(invalid).toEqual([]);
      expect(settings.perpsWsUrl).toBe('wss://perps.example/api/v1/ws');
      expect(settings.clobWsUrl).toBe('wss://clob.example/ws');
      expect(clobChannelUrl(settings, 'market')).toBe('wss://clob.example/ws/market');
      expect(settings.perpsDomain).toEqual({ name: 'Polymarket', version: '1' });
      expect(settings.preset).toBe('custom');
      expect(settings.bridgeUrl).toBe(DEFAULT_SETTINGS.bridgeUrl);
    },
  );

  it('migrates a v2 record of the sandbox to the Sandbox preset with the sandbox streams', async () => {
    const d = await db();
    await d.put('settings', { version: 2, values: v2Defaults() }, 'prefs');
    const { settings } = await readSettingsReport(d);
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(settings.perpsWsUrl).toBe('ws://127.0.0.1:8787/perps/v1/ws');
    expect(clobChannelUrl(settings, 'user')).toBe('ws://127.0.0.1:8787/clob/ws/user');
  });

  it('moves a derived WS URL with its REST URL, keeps one set on its own, and refuses a non-ws URL', async () => {
    const d = await db();
    let s = await writeSettings(d, { perpsUrl: 'http://127.0.0.1:9999/perps', clobUrl: 'http://127.0.0.1:9999/clob' });
    expect(s.perpsWsUrl).toBe('ws://127.0.0.1:9999/perps/v1/ws');
    expect(s.clobWsUrl).toBe('ws://127.0.0.1:9999/clob/ws');
    s = await writeSettings(d, { perpsWsUrl: 'wss://ws.example/v1/ws' });
    s = await writeSettings(d, { perpsUrl: 'https://api.example' });
    expect(s.perpsWsUrl).toBe('wss://ws.example/v1/ws');
    await expect(writeSettings(d, { clobWsUrl: 'https://clob.example/ws' })).rejects.toThrow(/clobWsUrl/);
    await expect(writeSettings(d, { perpsDomain: { name: '', version: '1' } })).rejects.toThrow(/perpsDomain/);
  });
});

/** The v2 defaults (the fields v2 knew). */
function v2Defaults() {
  const { preset, perpsWsUrl, clobWsUrl, bridgeUrl, perpsDomain, confirmedPresets, ...rest } = DEFAULT_SETTINGS;
  void [preset, perpsWsUrl, clobWsUrl, bridgeUrl, perpsDomain, confirmedPresets];
  return rest;
}
