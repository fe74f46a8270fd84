/** Handlers of the settings procedures (contract: lib/messaging/settings.ts). */
import type { SETTINGS_CONTRACT } from '../../messaging/settings';
import { readSettings, readSettingsReport, writeSettings } from '../../settings';
import { settlePreset } from '../../settings/presets';
import { venueChanged } from '../../settings/venue';
import { checkConnections } from '../../settings/check';
import type { ContractHandlers, ProcedureDeps } from './deps';

/**
 * `settings.get` (with the stored fields that were invalid) and `settings.set` (a change of a venue field,
 * `lib/settings/venue.ts`, ends the authority epoch's `all` scope before the write; then `onSettings`, and
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
      let venue = false;
      // A new venue ends what was started for the old one before the new settings are stored: whoever
      // reads them finds every earlier request's authority ended (`onSettings` ends it again once stored).
      // A refused patch stores and ends nothing.
      const s = await writeSettings(d.db, settlePreset(current, patch), {
        beforeStore: (was, next) => {
          venue = venueChanged(was, next);
          if (venue) d.service.authority.end('all', 'venue');
        },
      });
      await d.onSettings({ venue });
      if (s.clobChainId !== current.clobChainId) d.onChainChanged?.(s.clobChainId);
      return s;
    },
    'settings.checkConnections': async () => ({
      results: await checkConnections(await readSettings(d.db), { fetchFn: d.service.gatewayFetch(), WebSocket: globalThis.WebSocket }),
    }),
  };
}
