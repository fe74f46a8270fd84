/**
 * Small JSON-over-fetch helper shared by the gateway clients. Returns the status, headers and the
 * parsed body (or the raw text when the body is not JSON); never throws on an HTTP error status —
 * callers classify answers with `classifyPerpsAnswer` / `classifyClobAnswer`.
 */
import { InsecureTransportError } from './transport';
import type { HttpAnswer } from './retry-after';
import { BaseError } from '../errors/base';

/** The gateway a URL belongs to, as a person configured it: origin plus the first path segment. */
export function gatewayOf(url: string): string {
  try {
    const u = new URL(url);
    const first = u.pathname.split('/').filter(Boolean)[0];
    return `${u.origin}${first ? `/${first}` : ''}`;
  } catch {
    return 'the gateway';
  }
}

/**
 * Thrown when the request never got an answer (network error, timeout). The outcome is **unknown**.
 * `data.gateway` names which gateway did not answer (origin + first path segment).
 */
export class NetworkError extends BaseError {
  /**
   * EIP-1474 -32002 "resource unavailable": the gateway could not be reached or the answer was lost (never -32603,
   * which dapp libraries retry).
   */
  static override readonly code: number | undefined = -32002;
  override name = 'Http.NetworkError';
  readonly gateway: string;
  constructor(url: string, options: { cause?: unknown } = {}) {
    const gateway = gatewayOf(url);
    super(`No answer from ${gateway}. Check your connection and the gateway URL in Settings.`, {
      ...options,
      data: { gateway },
    });
    this.gateway = gateway;
  }
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
    // Refused before anything was sent (a URL in clear): that is its own answer, not "no answer".
    if (err instanceof InsecureTransportError) throw err;
    throw new NetworkError(url, { cause: err });
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
