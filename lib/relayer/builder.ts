/**
 * Builder headers of the venue's relayer (PROTOCOL.md §4.4 "Builder headers"; `@polymarket/builder-signing-sdk`
 * 0.0.8): an HMAC-SHA256 of `timestamp + METHOD + path + body`, keyed with the base64 builder secret, url-safe base64
 * output with `=` kept — the same construction as the order book's L2 signature (`lib/hmac`), so it is computed by the
 * same code. Sent only on relayer `POST /submit` and `GET /transactions` as `POLY_BUILDER_API_KEY`,
 * `POLY_BUILDER_PASSPHRASE`, `POLY_BUILDER_SIGNATURE`, `POLY_BUILDER_TIMESTAMP` (Unix seconds).
 */
import { buildL2SignatureSync } from '../hmac';

/**
 * The builder HMAC of one relayer request: `timestamp` Unix **seconds**, `path` relayer-relative
 * (`/submit`, `/transactions`; a query is not signed), `body` the exact JSON text sent (none for GET).
 * Throws `InvalidFieldError` (`secret`, `timestamp`).
 */
export function builderSignature(input: {
  secret: string;
  timestamp: number;
  method: string;
  path: string;
  body?: string;
}): string {
  return buildL2SignatureSync({
    secret: input.secret,
    timestamp: input.timestamp,
    method: input.method,
    requestPath: input.path,
    ...(input.body === undefined ? {} : { body: input.body }),
  });
}

/**
 * Builder API credentials (from order-book `POST /auth/builder-api-key`); `secret` base64, never logged, never leaves
 * the background.
 */
export type BuilderCredentials = { key: string; secret: string; passphrase: string };

/**
 * The four builder headers of one relayer request under the seeds' names (`SVC_BUILDER_*`; the
 * transport renames them to the venue's `POLY_BUILDER_*` for the `venue` header set, `lib/http/headers.ts`).
 * `timestamp` Unix **seconds**. Throws `InvalidFieldError` (see {@link builderSignature}).
 */
export function builderHeaders(
  creds: BuilderCredentials,
  input: { timestamp: number; method: string; path: string; body?: string },
): Record<string, string> {
  return {
    SVC_BUILDER_API_KEY: creds.key,
    SVC_BUILDER_PASSPHRASE: creds.passphrase,
    SVC_BUILDER_SIGNATURE: builderSignature({ secret: creds.secret, ...input }),
    SVC_BUILDER_TIMESTAMP: String(input.timestamp),
  };
}
