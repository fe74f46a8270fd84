/**
 * Hosts of a setup (issue #22, "Venue presets"): which are this machine's loopback (the sandbox; host
 * permission granted at install) and which host permissions the popup asks the browser for when a
 * preset or a custom setup is chosen. Kept apart from the connection check so the popup loads little.
 */
import type { Settings } from './index';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `hostname` (a URL's `hostname`: no port) is this machine's loopback: `127.0.0.1`, `localhost`, `[::1]`. */
export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.has(hostname);

/**
 * The host-permission patterns the services of `s` need: `https://<host>/*` for each distinct https
 * host of the REST services (the background fetches them), loopback excluded (granted at install).
 * WebSockets need no host permission. An http URL off loopback yields `http://<host>/*`, which the
 * manifest does not offer: the browser refuses it, so a plain-http remote gateway cannot be set.
 */
export function hostOrigins(s: Pick<Settings, 'perpsUrl' | 'clobUrl' | 'gammaUrl' | 'dataUrl' | 'relayerUrl' | 'rpcUrl' | 'bridgeUrl'>): string[] {
  const out = new Set<string>();
  for (const url of [s.perpsUrl, s.clobUrl, s.gammaUrl, s.dataUrl, s.relayerUrl, s.rpcUrl, s.bridgeUrl]) {
    if (!URL.canParse(url)) continue; // invalid: `settings.set` refuses it, naming the field
    const u = new URL(url);
    if (!isLoopbackHost(u.hostname)) out.add(`${u.protocol}//${u.hostname}/*`);
  }
  return [...out].sort();
}
