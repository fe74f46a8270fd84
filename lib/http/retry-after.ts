/**
 * Parses an HTTP `Retry-After` header value (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date.
 * Returns the delay in **ms** (≥ 0), or `undefined` when absent or unparseable.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Minimal view of an HTTP response that the classifiers read (works with fetch `Response` data). */
export type HttpAnswer = {
  status: number;
  /** Header lookup, case-insensitive (e.g. `new Headers(...)` or a plain record). */
  headers?: Headers | Record<string, string | undefined>;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
};

/** Reads a header from `Headers` or a plain record, case-insensitively. */
export function headerOf(headers: HttpAnswer['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [k, val] of Object.entries(headers)) if (k.toLowerCase() === lower) return val;
  return undefined;
}
