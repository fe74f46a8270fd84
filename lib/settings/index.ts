/**
 * User settings kept in the vault database's `settings` store (not secret): gateway URLs, the
 * order-book chain id, auto-lock minutes and theme. Validated on every write and read.
 * Defaults point at the sandbox on 127.0.0.1:8787.
 */
import * as v from 'valibot';
import type { VaultDb } from '../vault/db';
import { parseOrThrow } from '../validation';

const httpUrl = v.pipe(
  v.string('must be a URL'),
  v.maxLength(300, 'must be at most 300 characters'),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.hash && !u.search;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials, query or fragment'),
  v.transform((s) => s.replace(/\/+$/, '')),
);

export const settingsSchema = v.strictObject({
  perpsUrl: httpUrl,
  clobUrl: httpUrl,
  gammaUrl: httpUrl,
  dataUrl: httpUrl,
  clobChainId: v.pipe(v.number('must be a number'), v.safeInteger('must be an integer'), v.minValue(1, 'must be positive')),
  autoLockMinutes: v.pipe(v.number('must be a number'), v.integer('must be whole minutes'), v.minValue(1, 'must be at least 1'), v.maxValue(24 * 60, 'must be at most 1440')),
  theme: v.picklist(['system', 'light', 'dark'], 'must be system, light or dark'),
});

/** Settings. URLs are service roots without a trailing slash; `autoLockMinutes` 1-1440. */
export type Settings = v.InferOutput<typeof settingsSchema>;

export const SANDBOX_BASE = 'http://127.0.0.1:8787';

export const DEFAULT_SETTINGS: Settings = {
  perpsUrl: `${SANDBOX_BASE}/perps`,
  clobUrl: `${SANDBOX_BASE}/clob`,
  gammaUrl: `${SANDBOX_BASE}/gamma`,
  dataUrl: `${SANDBOX_BASE}/data`,
  clobChainId: 80002,
  autoLockMinutes: 15,
  theme: 'system',
};

/** Reads settings (defaults for anything missing or invalid). */
export async function readSettings(db: VaultDb): Promise<Settings> {
  const stored = await db.get('settings', 'prefs');
  const merged = { ...DEFAULT_SETTINGS, ...(typeof stored === 'object' && stored ? stored : {}) };
  const parsed = v.safeParse(settingsSchema, merged);
  return parsed.success ? parsed.output : DEFAULT_SETTINGS;
}

/** Writes a validated patch and returns the new settings. */
export async function writeSettings(db: VaultDb, patch: Partial<Settings>): Promise<Settings> {
  const next = parseOrThrow(settingsSchema, { ...(await readSettings(db)), ...patch });
  await db.put('settings', next, 'prefs');
  return next;
}
