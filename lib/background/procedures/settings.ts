/** Handlers of the settings procedures (contract: lib/messaging/settings.ts). */
import type { SETTINGS_CONTRACT } from '../../messaging/settings';
import { readSettings, readSettingsReport, writeSettings, type Settings } from '../../settings';
import { PRESET_FIELDS, settlePreset } from '../../settings/presets';
import { venueChanged } from '../../settings/venue';
import { checkConnections } from '../../settings/check';
import { clearCleartextUses, CLEARTEXT_EXPOSURE, noteCleartextUses } from '../../settings/cleartext';
import { hostOrigins } from '../../settings/hosts';
import { assertSecureSettings, insecureFields, type TransportRule } from '../../settings/transport';
import { guardedWebSocket } from '../../http/transport';
import { BaseError } from '../../errors/base';
import type { WebSocketConstructor } from '../../streams/perps';
import type { ContractHandlers, ProcedureDeps } from './deps';

/**
 * Thrown by `settings.set` when the browser has not granted the hosts of the venue it would store
 * (`data.hosts`: the missing match patterns, comma-separated). Nothing is stored. EIP-1193 4100.
 */
export class HostsNotGrantedError extends BaseError {
  override name = 'Settings.HostsNotGrantedError';
  static override readonly code: number | undefined = 4100;
  constructor(origins: string[]) {
    super(
      `Nothing was saved: the browser has not allowed Countersign to reach ` +
        `${origins.join(', ')}. Allow it when the browser asks, then save again.`,
      { data: { hosts: origins.join(',') } },
    );
  }
}

/**
 * What `settings.set` refuses before anything is stored, whichever extension page calls it and in
 * whatever order: a service URL the patch sets that breaks the transport rule (`InsecureTransportError`
 * naming the field; a stored one the patch leaves alone is refused at use instead), and a venue whose
 * hosts the browser has not granted (`HostsNotGrantedError`). Returns the patch to store, with
 * `venueChosen` set when it names a preset or a venue's service.
 */
async function checkedPatch(
  d: ProcedureDeps,
  rule: TransportRule,
  current: Settings,
  patch: Partial<Settings>,
): Promise<Partial<Settings>> {
  const settled = settlePreset(current, patch);
  assertSecureSettings(settled, rule);
  const next = { ...current, ...settled };
  if (venueChanged(current, next) && d.hostsGranted) {
    // Loopback is granted at install exactly where it may be used in clear (development and test builds).
    const origins = hostOrigins(next, rule.loopbackCleartext);
    if (origins.length > 0 && !(await d.hostsGranted(origins))) throw new HostsNotGrantedError(origins);
  }
  const choosing = settled.preset !== undefined || PRESET_FIELDS.some((f) => f in settled);
  return choosing ? { ...settled, venueChosen: true } : settled;
}

/**
 * Adds the stored service URLs in clear to the record (`cleartext.ts`: `since` is when Countersign first
 * noticed each) and lists it, each with what may have travelled and the rotation that helps.
 */
async function noteAndListCleartext(d: ProcedureDeps, s: Settings) {
  const uses = await noteCleartextUses(d.db, s, d.service.transportRule, Date.now());
  return uses.map((u) => ({ ...u, ...(CLEARTEXT_EXPOSURE[u.field] ?? { secrets: '' }) }));
}

/**
 * `settings.get` (with the stored fields that were invalid, the stored service URLs the transport rule
 * refuses at use, and the services ever named in clear with what may have travelled), `settings.set` (a
 * change of a venue field, `lib/settings/venue.ts`, ends the authority epoch's `all` scope before the
 * write; then `onSettings`, and `onChainChanged` with the new chain id when `clobChainId` changed: pages
 * get `chainChanged`, EIP-1193), `settings.clearCleartext` (the person rotated, or keeps, what was named).
 * `settings.set` keeps the preset truthful (`settlePreset`: naming a preset fills all its values;
 * editing one of its fields makes it `custom`) and refuses what `checkedPatch` refuses.
 * `settings.checkConnections` probes the stored settings' services through the signing service's
 * transport (header names, deadline, the transport rule) and the worker's WebSocket (the rule too).
 */
export function settingsProcedures(d: ProcedureDeps): ContractHandlers<typeof SETTINGS_CONTRACT> {
  const rule = () => d.service.transportRule;
  return {
    'settings.get': async () => {
      const report = await readSettingsReport(d.db);
      return {
        ...report,
        insecure: insecureFields(report.settings, rule()),
        cleartext: await noteAndListCleartext(d, report.settings),
      };
    },
    'settings.set': async (patch) => {
      const current = await readSettings(d.db);
      const checked = await checkedPatch(d, rule(), current, patch);
      let venue = false;
      // A new venue ends what was started for the old one before the new settings are stored: whoever
      // reads them finds every earlier request's authority ended (`onSettings` ends it again once stored).
      // A refused patch stores and ends nothing.
      const s = await writeSettings(d.db, checked, {
        beforeStore: (was, next) => {
          venue = venueChanged(was, next);
          if (venue) d.service.authority.end('all', 'venue');
        },
      });
      await d.onSettings({ venue });
      if (s.clobChainId !== current.clobChainId) d.onChainChanged?.(s.clobChainId);
      return s;
    },
    'settings.clearCleartext': async () => {
      await clearCleartextUses(d.db);
      return null;
    },
    'settings.checkConnections': async () => {
      const Ws: WebSocketConstructor | undefined = globalThis.WebSocket;
      return {
        results: await checkConnections(await readSettings(d.db), {
          fetchFn: d.service.gatewayFetch(),
          WebSocket: Ws ? guardedWebSocket(Ws, rule()) : undefined,
        }),
      };
    },
  };
}
