/**
 * The version check: the site client and the installed extension update independently. A site states the
 * methods it needs; `requireCountersign` reads the extension's capability answer
 * (`countersign_getCapabilities`: `{ version, methods }`) and throws `ExtensionOutdatedError` naming what is
 * missing, instead of the site failing later on an unknown method. An extension older than the capability
 * method answers it with 4200; that is the same error, without a version.
 */
import type { Client } from 'viem';
import { ExtensionOutdatedError, toCountersignError, UnsupportedError } from './errors.js';
import type { CountersignCapabilities } from './types.js';

/** The page method that answers the extension's version and methods. */
export const CAPABILITIES_METHOD = 'countersign_getCapabilities';

/**
 * The capability answer of the extension behind `client` (one request, never retried). Throws
 * `ExtensionOutdatedError` (4200) when the extension does not know the method, a `CountersignError` (-32603) when the
 * answer is not `{ version: string, methods: string[] }`, else the typed error of what the provider answered.
 */
export async function getCountersignCapabilities(client: Pick<Client, 'request'>): Promise<CountersignCapabilities> {
  let answer: unknown;
  try {
    answer = await client.request<{ Parameters: []; ReturnType: unknown }>(
      { method: CAPABILITIES_METHOD, params: [] },
      { retryCount: 0, dedupe: false },
    );
  } catch (err) {
    const e = toCountersignError(err);
    throw e instanceof UnsupportedError ? new ExtensionOutdatedError(undefined, [CAPABILITIES_METHOD]) : e;
  }
  if (!isCapabilities(answer))
    throw toCountersignError({
      code: -32603,
      message: 'Countersign answered countersign_getCapabilities with something other than { version, methods }.',
    });
  return answer;
}

/**
 * Checks that the extension behind `client` serves every method of `methods` (page method names, e.g.
 * `perps_sendCommand`); resolves with its capability answer. Throws `ExtensionOutdatedError` (4200) with the
 * extension's version and the missing methods — or, when the extension predates the capability method, without
 * a version and missing `countersign_getCapabilities` — and the typed error of anything else the provider answered.
 */
export async function requireCountersign(
  client: Pick<Client, 'request'>,
  need: { methods: readonly string[] },
): Promise<CountersignCapabilities> {
  const caps = await getCountersignCapabilities(client);
  const missing = need.methods.filter((m) => !caps.methods.includes(m));
  if (missing.length) throw new ExtensionOutdatedError(caps.version, missing);
  return caps;
}

function isCapabilities(x: unknown): x is CountersignCapabilities {
  if (typeof x !== 'object' || x === null) return false;
  const { version, methods } = x as Record<string, unknown>;
  return typeof version === 'string' && Array.isArray(methods) && methods.every((m) => typeof m === 'string');
}
