/**
 * Request timeouts: no gateway call of the signing service may hang forever.
 * `fetchWithTimeout` bounds a whole request — connection, headers **and** body — by a deadline; when it
 * passes, the request is aborted and the call rejects with `RequestTimeoutError`, which the JSON helper
 * (`requestJson`) turns into `Http.NetworkError` ("no answer": the outcome is unknown, exactly as for a
 * dropped connection). The deadline holds even when the underlying fetch ignores its abort signal.
 */
import { BaseError } from '../errors/base';
import { gatewayOf } from './json';

/** Default deadline of one gateway request of the signing service (ms): 15 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** Thrown (inside fetch) when a request got no complete answer within its deadline. */
export class RequestTimeoutError extends BaseError {
  /**
   * EIP-1474 -32002 "resource unavailable": no answer in time, the outcome is unknown (never -32603, which dapp
   * libraries retry).
   */
  static override readonly code: number | undefined = -32002;
  override name = 'Http.RequestTimeoutError';
  constructor(url: string, timeoutMs: number) {
    super(`No answer from ${gatewayOf(url)} within ${Math.ceil(timeoutMs / 1000)} s.`, { data: { timeoutMs } });
  }
}

/** Statuses whose Response must have a null body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * Wraps `fetchFn` so each request is answered in full (status, headers and body) within `timeoutMs`
 * (ms), or rejects with `RequestTimeoutError` and aborts the request. A caller's own `signal` still
 * aborts it earlier. The answer is a buffered `Response` (bodies here are small JSON).
 */
export function fetchWithTimeout(fetchFn: typeof fetch, timeoutMs: number): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const ctl = new AbortController();
      const outer = init?.signal;
      const onOuter = () => ctl.abort(outer?.reason);
      if (outer?.aborted) ctl.abort(outer.reason);
      else outer?.addEventListener('abort', onOuter, { once: true });
      const timer = setTimeout(() => {
        const err = new RequestTimeoutError(url, timeoutMs);
        ctl.abort(err);
        reject(err);
      }, timeoutMs);
      (async () => {
        const res = await fetchFn(input, { ...init, signal: ctl.signal });
        const body = NULL_BODY.has(res.status) ? null : await res.arrayBuffer();
        return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      })()
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          outer?.removeEventListener('abort', onOuter);
        });
    });
}
