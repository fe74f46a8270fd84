/**
 * Header sets. The seeds name the authentication headers `SVC_ADDRESS`, `SVC_SIGNATURE`,
 * `SVC_TIMESTAMP`, `SVC_NONCE`, `SVC_API_KEY`, `SVC_PASSPHRASE` and `SERVICE-PROXY` / `SERVICE-SECRET`;
 * the venue's own gateways use `POLY_…` and `POLYMARKET-PROXY` / `POLYMARKET-SECRET` (PROTOCOL.md §3).
 * Everything in the extension builds headers with the seed names; a gateway profile may name the
 * venue's set, and the transport renames them on the way out. Nothing else changes: the values, and
 * what is signed, are the same.
 */

/** Which header names a gateway profile uses. */
export type HeaderSet = 'seed' | 'venue';

/** Seed name → venue name. */
export const VENUE_HEADER_NAMES: Readonly<Record<string, string>> = {
  SVC_ADDRESS: 'POLY_ADDRESS',
  SVC_SIGNATURE: 'POLY_SIGNATURE',
  SVC_TIMESTAMP: 'POLY_TIMESTAMP',
  SVC_NONCE: 'POLY_NONCE',
  SVC_API_KEY: 'POLY_API_KEY',
  SVC_PASSPHRASE: 'POLY_PASSPHRASE',
  SVC_BUILDER_API_KEY: 'POLY_BUILDER_API_KEY',
  SVC_BUILDER_PASSPHRASE: 'POLY_BUILDER_PASSPHRASE',
  SVC_BUILDER_SIGNATURE: 'POLY_BUILDER_SIGNATURE',
  SVC_BUILDER_TIMESTAMP: 'POLY_BUILDER_TIMESTAMP',
  'SERVICE-PROXY': 'POLYMARKET-PROXY',
  'SERVICE-SECRET': 'POLYMARKET-SECRET',
};

/** A copy of `headers` with the seed names renamed for `set` (other headers unchanged). */
export function applyHeaderSet<T extends Record<string, string>>(headers: T, set: HeaderSet): Record<string, string> {
  if (set === 'seed') return { ...headers };
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [VENUE_HEADER_NAMES[k] ?? k, v]));
}

/** Wraps `fetchFn` so every request's seed-named headers are renamed for the set `setOf()` gives. */
export function fetchWithHeaderSet(fetchFn: typeof fetch, setOf: () => Promise<HeaderSet>): typeof fetch {
  return async (input, init) => {
    const set = await setOf();
    if (set === 'seed' || !init?.headers) return fetchFn(input, init);
    const plain = Object.fromEntries(new Headers(init.headers).entries());
    // `Headers` lowercases names; restore the seed spelling before renaming.
    const seedCase = Object.fromEntries(
      Object.entries(plain).map(([k, v]) => [
        Object.keys(VENUE_HEADER_NAMES).find((n) => n.toLowerCase() === k) ?? k,
        v,
      ]),
    );
    return fetchFn(input, { ...init, headers: applyHeaderSet(seedCase, set) });
  };
}
