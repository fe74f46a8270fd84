import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { DEFAULT_SETTINGS, readSettings, readSettingsReport, SETTINGS_VERSION, writeSettings } from './index';

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
    expect(settings).toEqual({ ...DEFAULT_SETTINGS, perpsUrl: 'https://perps.example/api', autoLockMinutes: 30 });
    expect(invalid).toEqual([]);
  });

  it('resets only the invalid field, reports it, and keeps the gateway URLs', async () => {
    const d = await db();
    await d.put('settings', { version: SETTINGS_VERSION, values: { perpsUrl: 'https://perps.example', clobUrl: 'https://clob.example', autoLockMinutes: 0, theme: 'neon' } }, 'prefs');
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
    expect(await d.get('settings', 'prefs')).toEqual({ version: SETTINGS_VERSION, values: { ...DEFAULT_SETTINGS, autoLockMinutes: 5 } });
    await expect(writeSettings(d, { perpsUrl: 'ftp://x' })).rejects.toThrow(/perpsUrl/);
    expect((await readSettings(d)).autoLockMinutes).toBe(5);
  });
});
