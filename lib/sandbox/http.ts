/**
 * HTTP helpers shared by every sandbox service (Node only): the one answer to an unexpected error, the
 * JSON body reader, and the random bytes the services hand out.
 */
import type { Context } from 'hono';

/**
 * The sandbox's answer to an error no route expected: logs only the message (never a body or a secret)
 * and answers `500 { error: 'Internal server error' }`. Used as `onError` of the root app.
 */
export function internalError(err: Error, c: Context): Response {
  console.error('[sandbox] internal error:', err.message);
  return c.json({ error: 'Internal server error' }, 500);
}

/** `JSON.parse` of `text`, or `undefined` when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The request body parsed as JSON, or `undefined` when it is absent or not JSON. */
export async function jsonBody(c: Context): Promise<unknown> {
  return parseJson(await c.req.text());
}

/** `n` random bytes from the platform CSPRNG. */
export function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

/** A keyset cursor for row offset `n` (base64url of `k:<n>`; the catalogue's and data service's cursors). */
export function cursorOf(n: number): string {
  return Buffer.from(`k:${n}`).toString('base64url');
}

/** The row offset of a {@link cursorOf} cursor: 0 when absent, undefined when malformed. */
export function fromCursor(s: string | undefined): number | undefined {
  if (!s) return 0;
  const m = /^k:(\d{1,9})$/.exec(Buffer.from(s, 'base64url').toString());
  return m ? Number(m[1]) : undefined;
}

/** An ISO-8601 timestamp of Unix ms. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The venue's name of a seed header (PROTOCOL.md §3 table): `SVC_X` → `POLY_X`, `SERVICE-X` →
 * `POLYMARKET-X`; any other name is returned unchanged.
 */
export function venueHeaderName(seedName: string): string {
  return seedName.replace(/^SVC_/, 'POLY_').replace(/^SERVICE-/, 'POLYMARKET-');
}

/**
 * A request header the sandbox accepts under the seed's name or the venue's (the official
 * clients send `POLY_*` / `POLYMARKET-*`, the seeds name `SVC_*` / `SERVICE-*`). `undefined` when
 * neither is sent — and when both are sent with different values, so an ambiguous request
 * authenticates as nothing.
 */
export function authHeader(c: Context, seedName: string): string | undefined {
  const seed = c.req.header(seedName);
  const venue = c.req.header(venueHeaderName(seedName));
  if (seed !== undefined && venue !== undefined && seed !== venue) return undefined;
  return seed ?? venue;
}
