/** Handlers of the settings procedures (contract: lib/messaging/settings.ts). */
import type { SETTINGS_CONTRACT } from '../../messaging/settings';
import { readSettings, readSettingsReport, writeSettings } from '../../settings';
import { settlePreset } from '../../settings/presets';
import { checkConnections } from '../../settings/check';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** The settings that name the venue a signature is for and where it goes: changing one ends the authority of what was started before. */
const VENUE_FIELDS = ['preset', 'perpsUrl', 'perpsWsUrl', 'clobUrl', 'clobWsUrl', 'relayerUrl', 'rpcUrl', 'bridgeUrl', 'clobChainId', 'headerSet', 'perpsDomain'] as const;

/**
 * `settings.get` (with the stored fields that were invalid) and `settings.set` (then `onSettings`, and
 * `onChainChanged` with the new chain id when `clobChainId` changed: pages get `chainChanged`, EIP-1193).
 * `settings.set` keeps the preset truthful (`settlePreset`: naming a preset fills all its values;
 * editing one of its fields makes it `custom`). `settings.checkConnections` probes the stored settings'
 * services through the signing service's transport (header names, deadline) and the worker's WebSocket.
 */
export function settingsProcedures(d: ProcedureDeps): ContractHandlers<typeof SETTINGS_CONTRACT> {
  return {
    'settings.get': async () => readSettingsReport(d.db),
    'settings.set': async (patch) => {
      const current = await readSettings(d.db);
      const before = current.clobChainId;
      const s = await writeSettings(d.db, settlePreset(current, patch));
      // A new venue (preset, gateway, chain, header set, pinned domain) ends what was started for the old one.
      await d.onSettings({ venue: VENUE_FIELDS.some((f) => JSON.stringify(current[f]) !== JSON.stringify(s[f])) });
      if (s.clobChainId !== before) d.onChainChanged?.(s.clobChainId);
      return s;
    },
    'settings.checkConnections': async () => ({
      results: await checkConnections(await readSettings(d.db), { fetchFn: d.service.gatewayFetch(), WebSocket: globalThis.WebSocket }),
    }),
  };
}
