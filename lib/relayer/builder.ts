/**
 * Builder headers of the venue's relayer (PROTOCOL.md §4.4 "Builder headers"; `@polymarket/builder-signing-sdk`
 * 0.0.8): an HMAC-SHA256 of `timestamp + METHOD + path + body`, keyed with the base64 builder secret,
 * url-safe base64 output with `=` kept — the same construction as the order book's L2 signature
 * (`lib/clob/auth.ts`), so it is computed by the same code. Sent only on relayer `POST /submit` and
 * `GET /transactions`. Names follow the seeds' rename of `POLY_*` to `SVC_*`.
 */
import { buildL2SignatureSync } from '../clob/auth';

/** Builder API credentials (from order-book `POST /auth/builder-api-key`); `secret` base64, never logged. */
export type BuilderCredentials = { key: string; secret: string; passphrase: string };

/** The four builder headers (venue names `POLY_BUILDER_*`). `SVC_BUILDER_TIMESTAMP` Unix seconds. */
export type BuilderHeaders = {
  SVC_BUILDER_API_KEY: string;
  SVC_BUILDER_PASSPHRASE: string;
  SVC_BUILDER_SIGNATURE: string;
  SVC_BUILDER_TIMESTAMP: string;
};

/**
 * The builder HMAC of one relayer request: `timestamp` Unix **seconds**, `path` relayer-relative
 * (`/submit`, `/transactions`; a query is not signed), `body` the exact JSON text sent (none for GET).
 * Throws `InvalidFieldError` (`secret`, `timestamp`).
 */
export function builderSignature(input: { secret: string; timestamp: number; method: string; path: string; body?: string }): string {
  return buildL2SignatureSync({ secret: input.secret, timestamp: input.timestamp, method: input.method, requestPath: input.path, ...(input.body === undefined ? {} : { body: input.body }) });
}

/** The builder headers of one relayer request (see {@link builderSignature}). Throws `InvalidFieldError`. */
export function builderHeaders(creds: BuilderCredentials, input: { timestamp: number; method: string; path: string; body?: string }): BuilderHeaders {
  return {
    SVC_BUILDER_API_KEY: creds.key,
    SVC_BUILDER_PASSPHRASE: creds.passphrase,
    SVC_BUILDER_SIGNATURE: builderSignature({ secret: creds.secret, ...input }),
    SVC_BUILDER_TIMESTAMP: String(input.timestamp),
  };
}
