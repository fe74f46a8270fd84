/**
 * User settings kept in the vault database's `settings` store (not secret): gateway URLs, the
 * relayer and chain RPC URLs (deposit wallets), the order-book chain id, auto-lock minutes, theme, and the gateway profile's header set (`seed`: the
 * seeds' `SVC_*` / `SERVICE-*` names, the default; `venue`: the venue's `POLY_*` / `POLYMARKET-*`,
 * `lib/http/headers.ts`). Defaults point at the sandbox on 127.0.0.1:8787.
 *
 * Stored as `{ version, values }` under `prefs` (issue #14 §4), with written migrations from each
 * version to the next (v1 was the bare values object). Every field is validated on its own when read:
 * a field that is missing takes its default silently; a field that is present but invalid takes its
 * default **and is reported** (`readSettingsReport().invalid`, shown in the popup's Settings) — the
 * other fields, gateway URLs included, keep their stored values.
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

/** The settings' schema (issue #4; fields documented on `Settings`): URLs lose their trailing slashes. */
export const settingsSchema = v.strictObject({
  perpsUrl: httpUrl,
  clobUrl: httpUrl,
  gammaUrl: httpUrl,
  dataUrl: httpUrl,
  /** The venue's relayer (deposit wallets, issue #21; PROTOCOL.md §4.4). */
  relayerUrl: httpUrl,
  /** The chain JSON-RPC the deposit-wallet factory is read through (PROTOCOL.md §4.3); the sandbox's `/rpc` stand-in by default. */
  rpcUrl: httpUrl,
  clobChainId: v.pipe(v.number('must be a number'), v.safeInteger('must be an integer'), v.minValue(1, 'must be positive')),
  autoLockMinutes: v.pipe(v.number('must be a number'), v.integer('must be whole minutes'), v.minValue(1, 'must be at least 1'), v.maxValue(24 * 60, 'must be at most 1440')),
  theme: v.picklist(['system', 'light', 'dark'], 'must be system, light or dark'),
  headerSet: v.picklist(['seed', 'venue'], 'must be seed or venue'),
  auditRetentionDays: v.pipe(v.number('must be a number'), v.safeInteger('must be whole days'), v.minValue(0, 'must be 0 (forever) or more'), v.maxValue(3650, 'must be at most 3650')),
  maxPositionUsdc: v.pipe(v.number('must be a number'), v.safeInteger('must be whole USDC'), v.minValue(1, 'must be at least 1'), v.maxValue(1_000_000_000, 'is too large')),
  slippageBps: v.pipe(v.number('must be a number'), v.safeInteger('must be whole basis points'), v.minValue(1, 'must be at least 1'), v.maxValue(1_000, 'must be at most 1000 (10 %)')),
});

/**
 * Settings. URLs are service roots without a trailing slash; `autoLockMinutes` 1-1440; `slippageBps`
 * the protected market orders' default slippage cap in basis points, 1-1000 (issue #19; per order
 * editable in the ticket; a missing field takes the default, so no migration is needed).
 */
export type Settings = v.InferOutput<typeof settingsSchema>;

/** The local sandbox gateway's base URL (`npm start`), which the default settings point at. */
export const SANDBOX_BASE = 'http://127.0.0.1:8787';

/** Settings of a fresh install: the sandbox's services, its chain id (80002), 15 min auto-lock, 90 days of audit, a 1 % (100 bp) slippage cap. */
export const DEFAULT_SETTINGS: Settings = {
  perpsUrl: `${SANDBOX_BASE}/perps`,
  clobUrl: `${SANDBOX_BASE}/clob`,
  gammaUrl: `${SANDBOX_BASE}/gamma`,
  dataUrl: `${SANDBOX_BASE}/data`,
  relayerUrl: `${SANDBOX_BASE}/relayer`,
  rpcUrl: `${SANDBOX_BASE}/rpc`,
  clobChainId: 80002,
  autoLockMinutes: 15,
  theme: 'system',
  headerSet: 'seed',
  maxPositionUsdc: 50_000,
  auditRetentionDays: 90,
  slippageBps: 100,
};

/** The stored settings format version of this build. */
export const SETTINGS_VERSION = 2;

/** Migrations: `SETTINGS_MIGRATIONS[n]` turns version n − 1 values into version n values. Never edit a shipped one. */
export const SETTINGS_MIGRATIONS: Readonly<Record<number, (values: Record<string, unknown>) => Record<string, unknown>>> = {
  // v1 stored the bare values object under `prefs`; v2 wraps it as `{ version, values }` (same fields).
  2: (values) => values,
};

/** A stored field that failed validation and fell back to its default. */
export type InvalidSetting = { field: keyof Settings; reason: string };

/** Settings and the stored fields that were invalid (each replaced by its default). */
export type SettingsReport = { settings: Settings; invalid: InvalidSetting[] };

const isSettingsField = (key: string): key is keyof Settings => Object.hasOwn(settingsSchema.entries, key);
const FIELDS = Object.keys(settingsSchema.entries).filter(isSettingsField);

const storedValuesSchema = v.record(v.string(), v.unknown());
/** The stored record from v2 on: `{ version, values }` (v1 stored the bare values object). */
const versionedSchema = v.object({ version: v.pipe(v.number(), v.integer()), values: storedValuesSchema });

/** Reads stored settings record (any version) and migrates its values to `SETTINGS_VERSION`. */
function migrate(stored: unknown): Record<string, unknown> {
  const versioned = v.safeParse(versionedSchema, stored);
  const bare = v.safeParse(storedValuesSchema, stored);
  let version = 1;
  let values: Record<string, unknown> = bare.success ? bare.output : {};
  if (versioned.success) ({ version, values } = versioned.output);
  for (let n = version + 1; n <= SETTINGS_VERSION; n++) values = SETTINGS_MIGRATIONS[n]?.(values) ?? values;
  return values;
}

/** Reads settings field by field: defaults for missing fields; invalid ones fall back and are reported. */
export async function readSettingsReport(db: VaultDb): Promise<SettingsReport> {
  const values = migrate(await db.get('settings', 'prefs'));
  const candidate: Record<string, unknown> = {};
  const invalid: InvalidSetting[] = [];
  for (const field of FIELDS) {
    if (!Object.hasOwn(values, field) || values[field] === undefined) {
      candidate[field] = DEFAULT_SETTINGS[field];
      continue;
    }
    const parsed = v.safeParse(settingsSchema.entries[field], values[field]);
    if (parsed.success) candidate[field] = parsed.output;
    else {
      candidate[field] = DEFAULT_SETTINGS[field];
      invalid.push({ field, reason: parsed.issues[0]?.message ?? 'is invalid' });
    }
  }
  // Every field now holds a valid value or its default: the whole parse types it (and cannot fail).
  return { settings: parseOrThrow(settingsSchema, candidate), invalid };
}

/** Reads settings (see `readSettingsReport`). */
export async function readSettings(db: VaultDb): Promise<Settings> {
  return (await readSettingsReport(db)).settings;
}

/** Writes a validated patch (current version) and returns the new settings. Throws `InvalidFieldError`. */
export async function writeSettings(db: VaultDb, patch: Partial<Settings>): Promise<Settings> {
  const next = parseOrThrow(settingsSchema, { ...(await readSettings(db)), ...patch });
  await db.put('settings', { version: SETTINGS_VERSION, values: next }, 'prefs');
  return next;
}
