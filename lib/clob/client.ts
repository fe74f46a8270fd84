/**
 * Calling the order-book exchange (`baseUrl` = the exchange root, e.g. `http://127.0.0.1:8787/clob`):
 * L1 credential creation / derivation, and L2-signed requests whose HMAC covers the exact body text
 * sent. Failures throw the typed errors of `./errors`; no answer throws `NetworkError`.
 */
import * as v from 'valibot';
import type { Address, LocalAccount } from 'viem';
import { requestJson } from '../http/json';
import { buildL1Headers, buildL2Headers, type ApiCredentials } from './auth';
import { classifyClobAnswer, ClobMalformedAnswerError } from './errors';

const credsSchema = v.object({
  apiKey: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  secret: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  passphrase: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
});

/**
 * Validates an exchange answer against `schema` (the trust boundary): the parsed value, or
 * `ClobMalformedAnswerError` ("The exchange answered <what> in an unexpected shape.") — nothing of a
 * malformed answer reaches a caller.
 */
export function parseClobAnswer<S extends v.GenericSchema>(schema: S, body: unknown, what: string): v.InferOutput<S> {
  const p = v.safeParse(schema, body);
  if (!p.success)
    throw new ClobMalformedAnswerError(`The exchange answered ${what} in an unexpected shape.`, {
      status: 200,
      exchangeMessage: '',
    });
  return p.output;
}

/** Credentials from the exchange's answer; throws `ClobMalformedAnswerError` when it has another shape. */
function parseCreds(body: unknown): ApiCredentials {
  return parseClobAnswer(credsSchema, body, 'credentials');
}

/**
 * Creates API credentials for `nonce` (`POST /auth/api-key`); when the exchange refuses because the
 * nonce is used (400), derives the existing ones (`GET /auth/derive-api-key`, same nonce).
 * `timestamp` Unix seconds (the exchange's clock). `beforeSign`: the caller's synchronous check, run
 * before each of the two signatures (it throws to sign and send nothing more). Source: PROTOCOL.md §2.1.
 */
export async function createOrDeriveApiKey(
  baseUrl: string,
  account: LocalAccount,
  input: { chainId: number; timestamp: number; nonce: number },
  fetchFn?: typeof fetch,
  beforeSign?: () => void,
): Promise<{ credentials: ApiCredentials; derived: boolean }> {
  beforeSign?.();
  const create = await requestJson(
    baseUrl + '/auth/api-key',
    { method: 'POST', headers: { ...(await buildL1Headers(account, input)) } },
    fetchFn,
  );
  if (create.status === 200) return { credentials: parseCreds(create.body), derived: false };
  const err = classifyClobAnswer(create);
  // A 2xx other than 200 is not the documented answer either: malformed, like a 200 without credentials.
  if (create.status !== 400)
    throw (
      err ??
      new ClobMalformedAnswerError('The exchange answered credentials in an unexpected shape.', {
        status: create.status,
        exchangeMessage: '',
      })
    );
  beforeSign?.();
  const derive = await requestJson(
    baseUrl + '/auth/derive-api-key',
    { method: 'GET', headers: { ...(await buildL1Headers(account, input)) } },
    fetchFn,
  );
  const derr = classifyClobAnswer(derive);
  if (derr) throw derr;
  return { credentials: parseCreds(derive.body), derived: true };
}

/**
 * Sends an L2-authenticated request: serialises `body` once, signs exactly that text and sends it.
 * `requestPath` may carry a query string: it is sent, but only the path is signed (PROTOCOL.md §2.2).
 * Returns the parsed 2xx body or throws a typed error.
 */
export async function clobL2Request(
  baseUrl: string,
  input: {
    address: Address;
    credentials: ApiCredentials;
    method: string;
    requestPath: string;
    body?: unknown;
    timestamp?: number;
  },
  fetchFn?: typeof fetch,
): Promise<unknown> {
  const text = input.body === undefined ? undefined : JSON.stringify(input.body);
  const headers = buildL2Headers({
    address: input.address,
    credentials: input.credentials,
    timestamp: input.timestamp ?? Math.floor(Date.now() / 1000),
    method: input.method,
    requestPath: input.requestPath,
    ...(text === undefined ? {} : { body: text }),
  });
  const answer = await requestJson(
    baseUrl + input.requestPath,
    { method: input.method, headers: { ...headers }, ...(text === undefined ? {} : { body: text }) },
    fetchFn,
  );
  const err = classifyClobAnswer(answer);
  if (err) throw err;
  return answer.body;
}
