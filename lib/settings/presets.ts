/**
 * Venue presets ("Venue presets in Settings"): each fills every service field of the
 * settings — perps REST and WebSocket, order-book REST and channels, catalogue, data, relayer, bridge,
 * chain RPC — plus the chain id, the header names and the pinned perps EIP-712 domain.
 *
 * Sources of the venue's values: `@polymarket/client` 0.2.0 `dist/index.js`, its exported environment
 * objects `production` (`chainId` 137, `perps`, `clob`, `gamma`, `data`, `relayer`, `rpc`) and
 * `preproduction` (= `forkEnvironmentConfig` of production overriding only `clob.rest`, `gamma.rest`,
 * `data.rest` and `relayer.rest`: its perps gateway, order-book channels, RPC and chain are production's).
 * `presets.test.ts` compares these constants with the package's. The bridge is not in the client:
 * `https://bridge.polymarket.com` is the server of the venue's published Bridge API
 * (docs.polymarket.com, "Polymarket Bridge API"). The perps domain `{ name: "Polymarket", version: "1" }`
 * is what the client hard-codes (PROTOCOL.md §5.1). Header names: the venue's `POLY_*` /
 * `POLYMARKET-*` (`headerSet: 'venue'`, PROTOCOL.md §3).
 *
 * The venue presets have never run against the live venue: the popup says so, and the first
 * real-money signature under one asks the person to confirm (`confirmation.ts`).
 */
import { DEFAULT_SETTINGS, type PRESET_IDS, type Settings } from './index';
import { RELEASE_BUILD } from './build-mode';

/** A preset's id (`custom`: the URLs the person typed). */
export type PresetId = (typeof PRESET_IDS)[number];

/** The settings fields a preset fills. */
export const PRESET_FIELDS = [
  'perpsUrl',
  'perpsWsUrl',
  'clobUrl',
  'clobWsUrl',
  'gammaUrl',
  'dataUrl',
  'relayerUrl',
  'rpcUrl',
  'bridgeUrl',
  'clobChainId',
  'headerSet',
  'perpsDomain',
] as const satisfies readonly (keyof Settings)[];

/** The values one preset fills (`PRESET_FIELDS`). */
export type PresetValues = Pick<Settings, (typeof PRESET_FIELDS)[number]>;

/** One preset: its label, whether it reaches the live venue (real money), and its values. */
export type Preset = { id: Exclude<PresetId, 'custom'>; label: string; live: boolean; values: PresetValues };

/** The preset fields of `s`. */
export function presetValuesOf(s: PresetValues): PresetValues {
  const {
    perpsUrl,
    perpsWsUrl,
    clobUrl,
    clobWsUrl,
    gammaUrl,
    dataUrl,
    relayerUrl,
    rpcUrl,
    bridgeUrl,
    clobChainId,
    headerSet,
    perpsDomain,
  } = s;
  return {
    perpsUrl,
    perpsWsUrl,
    clobUrl,
    clobWsUrl,
    gammaUrl,
    dataUrl,
    relayerUrl,
    rpcUrl,
    bridgeUrl,
    clobChainId,
    headerSet,
    perpsDomain,
  };
}

/** What every venue preset shares: the venue's header names and pinned domain. */
const VENUE = {
  headerSet: 'venue',
  perpsDomain: { name: 'Polymarket', version: '1' },
} as const satisfies Partial<PresetValues>;

/** `@polymarket/client` 0.2.0 `production` (see the module comment); the bridge from the venue's Bridge API docs. */
const POLYMARKET: PresetValues = {
  perpsUrl: 'https://api.perpetuals.polymarket.com',
  perpsWsUrl: 'wss://ws.perpetuals.polymarket.com/v1/ws',
  clobUrl: 'https://clob.polymarket.com',
  // production.clob.market.ws / .user.ws = this + "/market" / "/user"
  clobWsUrl: 'wss://ws-subscriptions-clob.polymarket.com/ws',
  gammaUrl: 'https://gamma-api.polymarket.com',
  dataUrl: 'https://data-api.polymarket.com',
  relayerUrl: 'https://relayer-v2.polymarket.com',
  rpcUrl: 'https://polygon.drpc.org',
  bridgeUrl: 'https://bridge.polymarket.com',
  clobChainId: 137,
  ...VENUE,
};

/** The presets, Sandbox first (the default). */
export const PRESETS: readonly Preset[] = [
  {
    id: 'sandbox',
    label: 'Sandbox (local, no real money)',
    live: false,
    values: presetValuesOf(DEFAULT_SETTINGS),
  },
  { id: 'polymarket', label: 'Polymarket (Polygon, chain 137)', live: true, values: POLYMARKET },
  {
    id: 'preproduction',
    label: "Polymarket pre-production (the venue's test environment)",
    live: true,
    // `@polymarket/client` 0.2.0 `preproduction`: these four, the rest production's (perps included).
    values: {
      ...POLYMARKET,
      clobUrl: 'https://clob-preprod-int-v2.polymarket.com',
      gammaUrl: 'https://gamma-api-preprod-int.polymarket.com',
      dataUrl: 'https://data-api-preprod-int.polymarket.com',
      relayerUrl: 'https://relayer-v2-preprod-int.polymarket.com',
    },
  },
];

/**
 * The presets this build offers: all of them in a development build; a release leaves out the Sandbox,
 * whose plain http on loopback a release never uses (`lib/http/transport.ts`).
 */
export const OFFERED_PRESETS: readonly Preset[] = RELEASE_BUILD ? PRESETS.filter((p) => p.id !== 'sandbox') : PRESETS;

/** The preset `id`, or undefined for `custom`. */
export const presetById = (id: PresetId): Preset | undefined => PRESETS.find((p) => p.id === id);

/** Whether `s` holds exactly preset `p`'s values. */
function matches(s: PresetValues, p: Preset): boolean {
  return PRESET_FIELDS.every((f) => JSON.stringify(s[f]) === JSON.stringify(p.values[f]));
}

/**
 * The patch `settings.set` stores, with the preset kept truthful: a patch naming a preset other than
 * `custom` gets all of that preset's values (they win over the patch's); a patch that changes a preset
 * field without naming a preset turns the stored preset into `custom`, unless the result still equals it.
 */
export function settlePreset(current: Settings, patch: Partial<Settings>): Partial<Settings> {
  const named = patch.preset === undefined ? undefined : presetById(patch.preset);
  if (named) return { ...patch, ...named.values };
  if (patch.preset !== undefined || !PRESET_FIELDS.some((f) => f in patch)) return patch;
  const active = presetById(current.preset);
  const next = { ...current, ...patch };
  return { ...patch, preset: active && matches(next, active) ? active.id : 'custom' };
}
