/**
 * The transport rule of this build, and the settings' service URLs checked against it
 * (`lib/http/transport.ts` holds the rule itself: only `https:` / `wss:`, loopback in clear only in a
 * development or test build). The background checks it where each request is made (every gateway
 * `fetch`, every WebSocket), before each signature (`assertSecureSettings`, through the signing gate:
 * `assertVenueUsable`), and where a URL is saved (`settings.set`). A URL already stored that breaks it (an
 * older profile, a restored backup) is refused at use with words that say why; the host permissions the
 * browser granted are a precondition `settings.set` checks, never the guard.
 */
import { InsecureTransportError, transportRefusal, type TransportRule } from '../http/transport';
import { RELEASE_BUILD } from './build-mode';
import type { Settings } from './index';

export type { TransportRule } from '../http/transport';

/** This build's rule: loopback in clear in development and test builds, nothing in clear in a release. */
export const BUILD_TRANSPORT_RULE: TransportRule = { loopbackCleartext: !RELEASE_BUILD };

/** The settings fields that name a service Countersign reaches, with the words a person reads for each. */
export const TRANSPORT_FIELDS = {
  perpsUrl: 'perps gateway',
  perpsWsUrl: 'perps session stream',
  clobUrl: 'order book',
  clobWsUrl: 'order-book channels',
  gammaUrl: 'catalogue',
  dataUrl: 'data service',
  relayerUrl: 'relayer',
  rpcUrl: 'chain RPC',
  bridgeUrl: 'bridge',
} as const satisfies Partial<Record<keyof Settings, string>>;

/** A settings field naming a service URL. */
export type TransportField = keyof typeof TRANSPORT_FIELDS;

/**
 * The service fields of `s` (those present) that break `rule`, each with its URL and the reason (empty when all hold).
 */
export function insecureFields(
  s: Partial<Pick<Settings, TransportField>>,
  rule: TransportRule = BUILD_TRANSPORT_RULE,
): { field: TransportField; url: string; reason: string }[] {
  const out: { field: TransportField; url: string; reason: string }[] = [];
  for (const field of Object.keys(TRANSPORT_FIELDS) as TransportField[]) {
    const url = s[field];
    if (url === undefined) continue;
    const reason = transportRefusal(url, rule);
    if (reason !== undefined) out.push({ field, url, reason });
  }
  return out;
}

/** The error naming the service field `field` whose URL `url` breaks the rule for `reason`. */
export const insecureSetting = (field: TransportField, url: string, reason: string) =>
  new InsecureTransportError(url, reason, { field, service: TRANSPORT_FIELDS[field] });

/** Throws `InsecureTransportError` naming the first service field of `s` (those present) that breaks `rule`. */
export function assertSecureSettings(
  s: Partial<Pick<Settings, TransportField>>,
  rule: TransportRule = BUILD_TRANSPORT_RULE,
): void {
  const [bad] = insecureFields(s, rule);
  if (bad) throw insecureSetting(bad.field, bad.url, bad.reason);
}
