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
import {
  assertSecureSettings,
  BUILD_TRANSPORT_RULE,
  TRANSPORT_FIELDS,
  type TransportField,
  type TransportRule,
} from './transport';

/**
 * The URL fields a custom setup's confirmation key is made of: every service the settings name (`TRANSPORT_FIELDS`).
 */
const URL_FIELDS = Object.keys(TRANSPORT_FIELDS) as TransportField[];

/**
 * What the confirmation reads of the settings (all optional, so callers that pass fewer fields — tests,
 * benches — read as the default `sandbox` preset, which never asks).
 */
export type ConfirmationSettings = {
  preset?: (typeof PRESET_IDS)[number];
  confirmedPresets?: readonly string[];
  venueChosen?: boolean;
} & Partial<Record<TransportField, string>>;

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
    super(
      'Nothing was signed: this venue preset has never run against the ' +
        'live venue. Confirm real-money signing with it in Settings first.',
      { data: { preset: key } },
    );
  }
}

/** Throws `VenueNotConfirmedError` when `needsConfirmation(s)`. */
export function assertVenueConfirmed(s: ConfirmationSettings): void {
  const key = confirmationKey(s);
  if (key !== undefined && needsConfirmation(s)) throw new VenueNotConfirmedError(key);
}

/**
 * Thrown before a vault is created or anything is signed while no venue was chosen (a release build's
 * first run: `venueChosen` false). EIP-1193 4100: the person has not said where they trade yet.
 */
export class VenueNotChosenError extends BaseError {
  override name = 'Settings.VenueNotChosenError';
  static override readonly code: number | undefined = 4100;
  constructor() {
    super('Nothing was done: no venue has been chosen yet. Choose where you trade first.');
  }
}

/** Throws `VenueNotChosenError` when `s` says no venue was chosen (`venueChosen: false`; absent reads as chosen). */
export function assertVenueChosen(s: Pick<ConfirmationSettings, 'venueChosen'>): void {
  if (s.venueChosen === false) throw new VenueNotChosenError();
}

/**
 * Everything the settings must hold before a signature, in this order: a venue was chosen
 * (`VenueNotChosenError`), every service URL present is on an encrypted transport under `rule`
 * (`InsecureTransportError`, `transport.ts`), and a live preset is confirmed (`VenueNotConfirmedError`).
 */
export function assertVenueUsable(s: ConfirmationSettings, rule: TransportRule = BUILD_TRANSPORT_RULE): void {
  assertVenueChosen(s);
  assertSecureSettings(s, rule);
  assertVenueConfirmed(s);
}
