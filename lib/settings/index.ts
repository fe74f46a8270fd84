/**
 * User settings kept in the vault database's `settings` store (not secret): the preset they came from
 * (`presets.ts`), gateway URLs (REST and WebSocket), the relayer, bridge and chain RPC URLs, the pinned
 * perps EIP-712 domain, the venue presets confirmed for real money, the order-book chain id, auto-lock minutes, theme,
 * and the gateway profile's header set (`seed`: the seeds' `SVC_*` / `SERVICE-*` names, the default; `venue`: the
 * venue's `POLY_*` / `POLYMARKET-*`, `lib/http/headers.ts`). Defaults point at the sandbox on 127.0.0.1:8787.
 *
 * Stored as `{ version, values }` under `prefs`, with written migrations from each
 * version to the next (v1 was the bare values object; v3 added the WebSocket and bridge URLs, the
 * preset, the perps domain pin; v4 `venueChosen`). Every field is validated on its own when read:
 * a field that is missing takes its default silently; a field that is present but invalid takes its
 * default **and is reported** (`readSettingsReport().invalid`, shown in the popup's Settings) — the
 * other fields, gateway URLs included, keep their stored values.
 */
import * as v from 'valibot';
import type { VaultDb } from '../vault/db';
import { parseOrThrow } from '../validation';
import { RELEASE_BUILD } from './build-mode';

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

const wsUrl = v.pipe(
  v.string('must be a URL'),
  v.maxLength(300, 'must be at most 300 characters'),
  v.check((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'wss:' || u.protocol === 'ws:') && !u.username && !u.password && !u.hash && !u.search;
    } catch {
      return false;
    }
  }, 'must be a ws(s) URL without credentials, query or fragment'),
  v.transform((s) => s.replace(/\/+$/, '')),
);

/** A pinned EIP-712 domain's name or version: 1-64 printable characters. */
const domainPart = v.pipe(
  v.string('must be text'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64, 'must be at most 64 characters'),
  v.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
);

/** The settings' presets (`lib/settings/presets.ts`); `custom` = URLs typed by the person. */
export const PRESET_IDS = ['sandbox', 'polymarket', 'preproduction', 'custom'] as const;

/** The settings' schema (fields documented on `Settings`): URLs lose their trailing slashes. */
export const settingsSchema = v.strictObject({
  /** The preset the service fields were filled from (`custom` once the person edits one). */
  preset: v.picklist(PRESET_IDS, 'must be sandbox, polymarket, preproduction or custom'),
  perpsUrl: httpUrl,
  /** The perps session / public channels WebSocket (PROTOCOL.md §5.1), e.g. `ws://127.0.0.1:8787/perps/v1/ws`. */
  perpsWsUrl: wsUrl,
  clobUrl: httpUrl,
  /** The order-book channels' base: `/market` and `/user` are appended (`clobChannelUrl`, PROTOCOL.md §5.3-5.4). */
  clobWsUrl: wsUrl,
  /** The bridge (withdrawals to other chains; seed "Relayer and bridge"). */
  bridgeUrl: httpUrl,
  /**
   * The perps EIP-712 command domain's pinned `name` and `version` (PROTOCOL.md §1.1; its chain id is
   * `clobChainId`). The gateway's exchange-info read must report exactly these before anything is signed.
   */
  perpsDomain: v.strictObject({ name: domainPart, version: domainPart }, 'must be { name, version }'),
  /** Confirmation keys (`confirmationKey`) of the venue presets the person accepted for real-money signatures. */
  confirmedPresets: v.pipe(
    v.array(v.pipe(v.string(), v.maxLength(700)), 'must be a list'),
    v.maxLength(50, 'must be at most 50 entries'),
  ),
  gammaUrl: httpUrl,
  dataUrl: httpUrl,
  /** The venue's relayer (deposit wallets; PROTOCOL.md §4.4). */
  relayerUrl: httpUrl,
  /**
   * The chain JSON-RPC the deposit-wallet factory is read through (PROTOCOL.md §4.3); the sandbox's `/rpc` stand-in by
   * default.
   */
  rpcUrl: httpUrl,
  clobChainId: v.pipe(
    v.number('must be a number'),
    v.safeInteger('must be an integer'),
    v.minValue(1, 'must be positive'),
  ),
  autoLockMinutes: v.pipe(
    v.number('must be a number'),
    v.integer('must be whole minutes'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(24 * 60, 'must be at most 1440'),
  ),
  theme: v.picklist(['system', 'light', 'dark'], 'must be system, light or dark'),
  headerSet: v.picklist(['seed', 'venue'], 'must be seed or venue'),
  auditRetentionDays: v.pipe(
    v.number('must be a number'),
    v.safeInteger('must be whole days'),
    v.minValue(0, 'must be 0 (forever) or more'),
    v.maxValue(3650, 'must be at most 3650'),
  ),
  maxPositionUsdc: v.pipe(
    v.number('must be a number'),
    v.safeInteger('must be whole USDC'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(1_000_000_000, 'is too large'),
  ),
  slippageBps: v.pipe(
    v.number('must be a number'),
    v.safeInteger('must be whole basis points'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(1_000, 'must be at most 1000 (10 %)'),
  ),
  /**
   * Whether the person chose the venue (a release build's first run, `entrypoints/popup/venue-step.tsx`).
   * Set only by the background: `settings.set` stores it when a patch names a preset or changes a venue
   * field whose hosts the browser granted. Until then a release creates no vault and signs nothing
   * (`assertVenueUsable`). Development and test builds start on the sandbox, chosen.
   */
  venueChosen: v.boolean('must be true or false'),
});

/**
 * Settings. URLs are service roots without a trailing slash; `autoLockMinutes` 1-1440; `slippageBps`
 * the protected market orders' default slippage cap in basis points, 1-1000 (per order
 * editable in the ticket; a missing field takes the default, so no migration is needed).
 */
export type Settings = v.InferOutput<typeof settingsSchema>;

/** The local sandbox gateway's base URL (`npm start`), which the default settings point at. */
export const SANDBOX_BASE = 'http://127.0.0.1:8787';

/**
 * Settings of a fresh install: the sandbox's services, its chain id (80002), 15 min auto-lock, 90 days of audit, a 1 %
 * (100 bp) slippage cap.
 */
export const DEFAULT_SETTINGS: Settings = {
  preset: 'sandbox',
  perpsUrl: `${SANDBOX_BASE}/perps`,
  perpsWsUrl: `${SANDBOX_BASE.replace(/^http/, 'ws')}/perps/v1/ws`,
  clobUrl: `${SANDBOX_BASE}/clob`,
  clobWsUrl: `${SANDBOX_BASE.replace(/^http/, 'ws')}/clob/ws`,
  bridgeUrl: `${SANDBOX_BASE}/bridge`,
  perpsDomain: { name: 'Polymarket', version: '1' },
  confirmedPresets: [],
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
  venueChosen: !RELEASE_BUILD,
};

/** The stored settings format version of this build. */
export const SETTINGS_VERSION = 4;

/** The WebSocket URL of an http(s) URL: the same host and path, `ws(s)`. */
const toWs = (url: string) => url.replace(/^http/, 'ws').replace(/\/+$/, '');

/**
 * v2 → v3 (venue presets): adds `perpsWsUrl` (derived from `perpsUrl` exactly as the
 * background did before: `ws(s)` + `/v1/ws`), `clobWsUrl` (`clobUrl` + `/ws`, the sandbox's layout),
 * `preset` (`sandbox` when every service URL and the chain id are the sandbox's, else `custom`) and
 * `perpsDomain` (the default pin). `bridgeUrl` and `confirmedPresets` take their defaults. A stored
 * URL that is not a string is left for the field check to report.
 */
function migrateV2toV3(values: Record<string, unknown>): Record<string, unknown> {
  const out = { ...values };
  const { perpsUrl, clobUrl } = values;
  if (typeof perpsUrl === 'string') out.perpsWsUrl = `${toWs(perpsUrl)}/v1/ws`;
  if (typeof clobUrl === 'string') out.clobWsUrl = `${toWs(clobUrl)}/ws`;
  const sandboxFields = ['perpsUrl', 'clobUrl', 'gammaUrl', 'dataUrl', 'relayerUrl', 'rpcUrl', 'clobChainId'] as const;
  const isSandbox = sandboxFields.every((f) => values[f] === undefined || values[f] === DEFAULT_SETTINGS[f]);
  out.preset = isSandbox ? 'sandbox' : 'custom';
  out.perpsDomain = DEFAULT_SETTINGS.perpsDomain;
  return out;
}

/** Migrations: `SETTINGS_MIGRATIONS[n]` turns version n − 1 values into version n values. Never edit a shipped one. */
export const SETTINGS_MIGRATIONS: Readonly<
  Record<number, (values: Record<string, unknown>) => Record<string, unknown>>
> = {
  // v1 stored the bare values object under `prefs`; v2 wraps it as `{ version, values }` (same fields).
  2: (values) => values,
  3: migrateV2toV3,
  // A stored record before v4 was written once the venue was chosen (a release stores settings first at
  // its venue step; a development build's sandbox is chosen from install): it keeps that choice.
  4: (values) => ({ ...values, venueChosen: true }),
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
  if (stored === undefined) return {}; // nothing stored: every field takes its default
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

/**
 * The URL of order-book channel `channel` (PROTOCOL.md §5.3-5.4): `clobWsUrl` + `/market` or `/user`,
 * e.g. `wss://ws-subscriptions-clob.polymarket.com/ws/market`, the sandbox's `ws://127.0.0.1:8787/clob/ws/user`.
 * The market channel needs no auth; the user channel's API credentials never leave the background.
 */
export function clobChannelUrl(settings: Pick<Settings, 'clobWsUrl'>, channel: 'market' | 'user'): string {
  return `${settings.clobWsUrl}/${channel}`;
}

/**
 * The patch with the WebSocket URLs that follow their REST URL: when a patch moves `perpsUrl` (or
 * `clobUrl`) alone and the stored `perpsWsUrl` (`clobWsUrl`) is the one derived from the stored REST URL
 * (the sandbox's layout: `ws(s)` + `/v1/ws`, `/ws`), the WebSocket URL moves with it — what the
 * background derived before v3. A WebSocket URL set on its own (the venue's hosts differ) stays. The
 * same for `bridgeUrl` after `relayerUrl` (the sandbox's `…/relayer` → `…/bridge`).
 */
function withFollowingWs(current: Settings, patch: Partial<Settings>): Partial<Settings> {
  const out = { ...patch };
  const { perpsUrl, clobUrl } = patch;
  if (
    perpsUrl !== undefined &&
    patch.perpsWsUrl === undefined &&
    v.is(httpUrl, perpsUrl) &&
    current.perpsWsUrl === `${toWs(current.perpsUrl)}/v1/ws`
  )
    out.perpsWsUrl = `${toWs(perpsUrl)}/v1/ws`;
  if (
    clobUrl !== undefined &&
    patch.clobWsUrl === undefined &&
    v.is(httpUrl, clobUrl) &&
    current.clobWsUrl === `${toWs(current.clobUrl)}/ws`
  )
    out.clobWsUrl = `${toWs(clobUrl)}/ws`;
  // The sandbox mounts the bridge beside the relayer (`…/relayer` → `…/bridge`): a bridge still at the
  // relayer's sibling moves with it; one set on its own (the venue's bridge host) stays.
  const sibling = (relayer: string) => relayer.replace(/\/relayer$/, '/bridge');
  const { relayerUrl } = patch;
  if (
    relayerUrl !== undefined &&
    patch.bridgeUrl === undefined &&
    v.is(httpUrl, relayerUrl) &&
    /\/relayer$/.test(relayerUrl) &&
    current.bridgeUrl === sibling(current.relayerUrl)
  )
    out.bridgeUrl = sibling(relayerUrl);
  return out;
}

/**
 * Writes a validated patch (current version) and returns the new settings. Throws `InvalidFieldError`
 * naming the field (nothing stored). WebSocket URLs may follow a moved REST URL (`withFollowingWs`).
 * `beforeStore` runs synchronously once the new settings are validated, right before they are stored
 * (the venue change ends authority there: `settings.set`).
 */
export async function writeSettings(
  db: VaultDb,
  patch: Partial<Settings>,
  o: { beforeStore?: (current: Settings, next: Settings) => void } = {},
): Promise<Settings> {
  const current = await readSettings(db);
  const next = parseOrThrow(settingsSchema, { ...current, ...withFollowingWs(current, patch) });
  o.beforeStore?.(current, next);
  await db.put('settings', { version: SETTINGS_VERSION, values: next }, 'prefs');
  return next;
}
