/**
 * Sending signed perps commands and proxy-header reads to a gateway (`baseUrl` = the perps service
 * root, e.g. `http://127.0.0.1:8787/perps`). Answers are classified with `classifyPerpsAnswer`; a
 * failure throws `PerpsGatewayError`, a missing answer throws `NetworkError` (outcome unknown); a read's
 * answer of another shape throws `Perps.InvalidAnswerError` (schemas in `./wire`).
 */
import { requestJson } from '../http/json';
import type { PerpsCommand } from './commands';
import type { PerpsEnvelope } from './envelope';
import { classifyPerpsAnswer } from './errors';
import { PERPS_READS, proxyHeaders, type PerpsReadName } from './reads';
import { parsePerpsAnswer, type PerpsReadAnswer } from './wire';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from './signing';

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
 * Performs read `name` (PROTOCOL.md §3.2) and returns its answer validated by `PERPS_READ_ANSWERS[name]`.
 * Proxy-header reads need `auth` (`proxy` address and its `secret`); `query` values are appended as
 * query parameters. Throws the gateway's typed error (`classifyPerpsAnswer`), `NetworkError` (no answer),
 * or `InvalidPerpsAnswerError` (an answer of another shape).
 */
export async function perpsRead<N extends PerpsReadName>(
  baseUrl: string,
  name: N,
  options: {
    auth?: { proxy: string; secret: string };
    query?: Record<string, string | number | undefined>;
    fetchFn?: typeof fetch;
  } = {},
): Promise<PerpsReadAnswer<N>> {
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
  return parsePerpsAnswer(name, answer.body);
}

/**
 * Reads `GET /v1/info/exchange` and returns the command and withdraw domains (PROTOCOL.md §1.1).
 * Throws `InvalidExchangeInfoError` when the answer is malformed.
 */
export async function fetchPerpsDomains(
  baseUrl: string,
  fetchFn?: typeof fetch,
): Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }> {
  const info = await perpsRead(baseUrl, 'exchange', fetchFn ? { fetchFn } : {});
  const domain = { name: info.name, version: info.version, chainId: info.chain_id };
  return { domain, withdrawDomain: { ...domain, verifyingContract: info.contract } };
}
