/**
 * Sending signed perps commands and proxy-header reads to a gateway (`baseUrl` = the perps service
 * root, e.g. `http://127.0.0.1:8787/perps`). Answers are classified with `classifyPerpsAnswer`; a
 * failure throws `PerpsGatewayError`, a missing answer throws `NetworkError` (outcome unknown).
 */
import * as v from 'valibot';
import { requestJson } from '../http/json';
import type { PerpsCommand } from './commands';
import type { PerpsEnvelope } from './envelope';
import { classifyPerpsAnswer } from './errors';
import { PERPS_READS, proxyHeaders, type PerpsReadName } from './reads';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from './signing';
import { BaseError } from '../errors/base';

/** Submits a signed envelope to the command's endpoint; returns the parsed success body. */
export async function sendPerpsCommand(
  baseUrl: string,
  command: Pick<PerpsCommand, 'endpoint'>,
  envelope: PerpsEnvelope,
  fetchFn?: typeof fetch,
): Promise<unknown> {
  const answer = await requestJson(
    baseUrl + command.endpoint.path,
    { method: command.endpoint.method, body: JSON.stringify(envelope) },
    fetchFn,
  );
  const err = classifyPerpsAnswer(answer);
  if (err) throw err;
  return answer.body;
}

/**
 * Performs a read. Proxy-header reads need `auth` (`proxy` address and its `secret`); `query` values
 * are appended as query parameters.
 */
export async function perpsRead(
  baseUrl: string,
  name: PerpsReadName,
  options: { auth?: { proxy: string; secret: string }; query?: Record<string, string | number | undefined>; fetchFn?: typeof fetch } = {},
): Promise<unknown> {
  const r = PERPS_READS[name];
  const qs = new URLSearchParams();
  for (const [k, val] of Object.entries(options.query ?? {})) if (val !== undefined) qs.set(k, String(val));
  const url = baseUrl + r.path + (qs.size ? `?${qs}` : '');
  const answer = await requestJson(
    url,
    {
      method: r.method,
      headers: options.auth ? proxyHeaders(options.auth.proxy, options.auth.secret) : {},
      ...(r.method === 'POST' ? { body: '{}' } : {}),
    },
    options.fetchFn,
  );
  const err = classifyPerpsAnswer(answer);
  if (err) throw err;
  return answer.body;
}

/** Thrown when the exchange-info read does not have the seed's shape. */
export class InvalidExchangeInfoError extends BaseError {
  override name = 'Perps.InvalidExchangeInfoError';
}

const exchangeInfoSchema = v.object({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  version: v.pipe(v.string(), v.minLength(1), v.maxLength(20)),
  chain_id: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  contract: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/)),
});

/**
 * Reads `GET /v1/info/exchange` and returns the command and withdraw domains (PROTOCOL.md §1.1).
 * Throws `InvalidExchangeInfoError` when the answer is malformed.
 */
export async function fetchPerpsDomains(
  baseUrl: string,
  fetchFn?: typeof fetch,
): Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }> {
  const body = await perpsRead(baseUrl, 'exchange', fetchFn ? { fetchFn } : {});
  const parsed = v.safeParse(exchangeInfoSchema, body);
  if (!parsed.success) throw new InvalidExchangeInfoError('The gateway answered the exchange info in an unexpected shape.');
  const domain = { name: parsed.output.name, version: parsed.output.version, chainId: parsed.output.chain_id };
  return { domain, withdrawDomain: { ...domain, verifyingContract: parsed.output.contract as `0x${string}` } };
}
