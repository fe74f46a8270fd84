/**
 * The transport of every gateway call (reads and signed commands alike): the configured `fetch`, with
 * the seed's auth header names renamed for the profile's header set (`./headers.ts`), and a deadline on
 * each request (`./timeout.ts`).
 */
import { fetchWithHeaderSet, type HeaderSet } from './headers';
import { DEFAULT_REQUEST_TIMEOUT_MS, fetchWithTimeout } from './timeout';

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
 */
export function gatewayTransport(fetchFn: typeof fetch | undefined, headerSetOf: () => Promise<HeaderSet>, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): GatewayTransport {
  const renamed = fetchWithHeaderSet(fetchFn ?? ((input, init) => fetch(input, init)), headerSetOf);
  const withDefault = fetchWithTimeout(renamed, timeoutMs);
  return {
    fetchFn: withDefault,
    fetchFor: (ms) => (ms === undefined || ms === timeoutMs ? withDefault : fetchWithTimeout(renamed, ms)),
    timeoutMs,
  };
}
