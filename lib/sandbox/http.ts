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
