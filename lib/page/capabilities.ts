/**
 * `countersign_getCapabilities`: what a site may ask before it relies on a method — the extension's version
 * and the page methods it serves. A site's client and the installed extension update independently; with
 * this answer the client can say in words that the extension is older than it needs instead of failing
 * on an unknown method (4200). EIP-5792's `wallet_getCapabilities` answers per-chain capabilities of an
 * account (atomic batches, paymasters), not a method list, so this is a method of Countersign's own.
 */
import { version } from '../../package.json';
import { METHOD_POLICY, type PageMethod } from './policy';

/** The capability answer: `version` the extension's (semver, as in its manifest), `methods` the ones it serves. */
type Capabilities = { version: string; methods: PageMethod[] };

/** The capability answer of this build: every page method of `METHOD_POLICY` except those always refused. */
export function capabilities(): Capabilities {
  const methods = (Object.keys(METHOD_POLICY) as PageMethod[]).filter((m) => METHOD_POLICY[m].approval !== 'refused');
  return { version, methods };
}
