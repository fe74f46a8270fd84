/**
 * The real-money confirmation ("Venue presets"): the venue presets have never run against
 * the live venue, so while one is active the first signature asks the person to confirm, once per
 * preset (stored in the settings' `confirmedPresets`). A custom setup whose services are not all on
 * loopback counts as live too (keyed by its hosts, so pointing it elsewhere asks again); the sandbox,
 * and a custom setup on loopback only, never ask. Until confirmed, signing throws `VenueNotConfirmedError`
 * before anything is signed (`SigningService`; panic's own cancel and close commands are exempt).
 */
import { BaseError } from '../errors/base';
import type { PRESET_IDS } from './index';
import { isLoopbackHost } from './hosts';

/** The URL fields a custom setup's confirmation key is made of. */
const URL_FIELDS = ['perpsUrl', 'perpsWsUrl', 'clobUrl', 'clobWsUrl', 'gammaUrl', 'dataUrl', 'relayerUrl', 'rpcUrl', 'bridgeUrl'] as const;

/**
 * What the confirmation reads of the settings (all optional, so callers that pass fewer fields — tests,
 * benches — read as the default `sandbox` preset, which never asks).
 */
export type ConfirmationSettings = { preset?: (typeof PRESET_IDS)[number]; confirmedPresets?: readonly string[] } & Partial<Record<(typeof URL_FIELDS)[number], string>>;


/**
 * The key under which a confirmation of `s` is stored, or undefined when `s` needs none: the preset id
 * (`polymarket`, `preproduction`), or for `custom` with a non-loopback host `custom:<hosts, sorted>`.
 */
export function confirmationKey(s: ConfirmationSettings): string | undefined {
  const preset = s.preset ?? 'sandbox';
  if (preset === 'sandbox') return undefined;
  if (preset !== 'custom') return preset;
  const hosts = new Set<string>();
  for (const f of URL_FIELDS) {
    const url = s[f];
    if (url === undefined) continue;
    const u = URL.canParse(url) ? new URL(url) : undefined;
    if (!u || !isLoopbackHost(u.hostname)) hosts.add(u?.host ?? url);
  }
  return hosts.size ? `custom:${[...hosts].sort().join(',')}` : undefined;
}

/** Whether signing under `s` needs a confirmation the person has not given yet. */
export const needsConfirmation = (s: ConfirmationSettings): boolean => {
  const key = confirmationKey(s);
  return key !== undefined && !(s.confirmedPresets ?? []).includes(key);
};

/**
 * Thrown before a signature while the active venue preset is not confirmed (`data.preset`: its key).
 * EIP-1193 4100 "unauthorized": the person has not allowed real-money signatures with this preset yet.
 */
export class VenueNotConfirmedError extends BaseError {
  override name = 'Settings.VenueNotConfirmedError';
  static override readonly code: number | undefined = 4100;
  constructor(key: string) {
    super('Nothing was signed: this venue preset has never run against the live venue. Confirm real-money signing with it in Settings first.', { data: { preset: key } });
  }
}

/** Throws `VenueNotConfirmedError` when `needsConfirmation(s)`. */
export function assertVenueConfirmed(s: ConfirmationSettings): void {
  const key = confirmationKey(s);
  if (key !== undefined && needsConfirmation(s)) throw new VenueNotConfirmedError(key);
}
