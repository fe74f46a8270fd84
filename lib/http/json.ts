/**
 * Small JSON-over-fetch helper shared by the gateway clients. Returns the status, headers and the
 * parsed body (or the raw text when the body is not JSON); never throws on an HTTP error status —
 * callers classify answers with `classifyPerpsAnswer` / `classifyClobAnswer`.
 */
import type { HttpAnswer } from './retry-after';

/** Thrown when the request never got an answer (network error, timeout). The outcome is **unknown**. */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

/** Performs a request and reads the answer. `body` is sent as-is (the exact text that was signed). */
export async function requestJson(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
  fetchFn: typeof fetch = fetch,
): Promise<HttpAnswer & { headers: Headers }> {
  let res: Response;
  try {
    res = await fetchFn(url, {
      method: init.method,
      headers: { ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  } catch (err) {
    throw new NetworkError(`No answer from ${new URL(url).origin}`, { cause: err });
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, headers: res.headers, body };
}
