/**
 * The transport of every gateway call (reads and signed commands alike): the configured `fetch`, with
 * the seed's auth header names renamed for the profile's header set (`./headers.ts`), and a deadline on
 * each request (`./timeout.ts`).
 */
import { fetchWithHeaderSet, type HeaderSet } from './headers';
import { DEFAULT_REQUEST_TIMEOUT_MS, fetchWithTimeout } from './timeout';
import { guardedFetch, type TransportRule } from './transport';

/** A gateway transport: `fetchFn` with the default deadline, and `fetchFor(ms)` with another one. */
export type GatewayTransport = {
  /** The transport with the default deadline (`timeoutMs`). */
  fetchFn: typeof fetch;
  /** The transport with a deadline of `timeoutMs` (ms; the default when undefined). */
  fetchFor: (timeoutMs: number | undefined) => typeof fetch;
  /** The default deadline of one request (ms). */
  timeoutMs: number;
};

/**
 * Builds the transport over `fetchFn` (default the global `fetch`, looked up per call): header names
 * for the set `headerSetOf()` gives at each request, and a deadline of `timeoutMs` (ms; default
 * `DEFAULT_REQUEST_TIMEOUT_MS`, 15 s) past which a call fails as "no answer" (`Http.NetworkError`).
 * Every request's URL is checked against the transport rule first (`rule`; this build's is
 * `BUILD_TRANSPORT_RULE`, `lib/settings/transport.ts`): one in clear is refused with
 * `InsecureTransportError` (`./transport.ts`), nothing sent.
 */
export function gatewayTransport(
  fetchFn: typeof fetch | undefined,
  headerSetOf: () => Promise<HeaderSet>,
  timeoutMs: number | undefined,
  rule: TransportRule,
): GatewayTransport {
  const renamed = fetchWithHeaderSet(guardedFetch(fetchFn ?? ((input, init) => fetch(input, init)), rule), headerSetOf);
  const deadline = timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const withDefault = fetchWithTimeout(renamed, deadline);
  return {
    fetchFn: withDefault,
    fetchFor: (ms) => (ms === undefined || ms === deadline ? withDefault : fetchWithTimeout(renamed, ms)),
    timeoutMs: deadline,
  };
}
