/**
 * Hosts of a setup: which are this machine's loopback (the sandbox; a host permission granted at install
 * in development and test builds, `build-mode.ts`) and which host permissions the
 * popup asks the browser for when a venue, a preset or a custom setup is chosen. Kept apart from the
 * connection check so the popup loads little.
 */
import { LOOPBACK_AT_INSTALL } from './build-mode';
import type { Settings } from './index';
import { isLoopbackHost } from '../http/transport';

export { isLoopbackHost } from '../http/transport';

/**
 * The host-permission patterns the services of `s` need: `<protocol>//<host>/*` for each distinct host of
 * the REST services (the background fetches them), sorted. Loopback hosts are left out when
 * `loopbackAtInstall` (development and test builds: granted at install; default `LOOPBACK_AT_INSTALL`)
 * and asked for otherwise (`https://127.0.0.1/*` for a setup behind a local https front; `http:` there
 * is refused by the transport rule before any permission is asked). WebSockets need no host permission.
 * An http URL off loopback yields `http://<host>/*`, which the manifest does not offer; `settings.set`
 * refuses it before that (`lib/http/transport.ts`).
 */
export function hostOrigins(
  s: Pick<Settings, 'perpsUrl' | 'clobUrl' | 'gammaUrl' | 'dataUrl' | 'relayerUrl' | 'rpcUrl' | 'bridgeUrl'>,
  loopbackAtInstall: boolean = LOOPBACK_AT_INSTALL,
): string[] {
  const out = new Set<string>();
  for (const url of [s.perpsUrl, s.clobUrl, s.gammaUrl, s.dataUrl, s.relayerUrl, s.rpcUrl, s.bridgeUrl]) {
    if (!URL.canParse(url)) continue; // invalid: `settings.set` refuses it, naming the field
    const u = new URL(url);
    if (!loopbackAtInstall || !isLoopbackHost(u.hostname)) out.add(`${u.protocol}//${u.hostname}/*`);
  }
  return [...out].sort();
}
