/** Handlers of the settings procedures (contract: lib/messaging/settings.ts). */
import type { SETTINGS_CONTRACT } from '../../messaging/settings';
import { readSettingsReport, writeSettings } from '../../settings';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** `settings.get` (with the stored fields that were invalid) and `settings.set` (then `onSettings`). */
export function settingsProcedures(d: ProcedureDeps): ContractHandlers<typeof SETTINGS_CONTRACT> {
  return {
    'settings.get': async () => readSettingsReport(d.db),
    'settings.set': async (patch) => {
      const s = await writeSettings(d.db, patch);
      await d.onSettings();
      return s;
    },
  };
}
