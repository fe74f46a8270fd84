/**
 * The official perps / streams client (`@polymarket/client` 0.2.0) pointed at a sandbox: a harness whose
 * clock follows the wall clock (the client stamps commands with `Date.now()`), every service of the
 * venue's environment config on the sandbox's REST and WebSocket URLs, and a fresh key's
 * secure client. Node 20 has no global WebSocket: the client is given `ws`'s.
 */
import { WebSocket } from 'ws';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSecureClient, forkEnvironmentConfig } from '@polymarket/client';
import { privateKey } from '@polymarket/client/viem';
import { startHarness, type Harness } from '../kits/sandbox';

/** A sandbox, the venue's environment pointed at it, and a new key's secure client (`key` is its private key). */
export async function startVenueClient(): Promise<{
  h: Harness;
  client: Awaited<ReturnType<typeof createSecureClient>>;
  key: `0x${string}`;
}> {
  Object.assign(globalThis, { WebSocket });
  const h = await startHarness({ now: undefined });
  const ws = h.url.replace('http', 'ws');
  const environment = forkEnvironmentConfig({
    name: 'countersign-sandbox',
    chainId: h.ctx.config.perpsDomain.chainId,
    perps: { rest: `${h.url}/perps`, ws: `${ws}/perps/v1/ws` },
    clob: { rest: `${h.url}/clob`, market: { ws: `${ws}/clob/ws/market` }, user: { ws: `${ws}/clob/ws/user` } },
    gamma: { rest: `${h.url}/gamma` },
    data: { rest: `${h.url}/data` },
    relayer: { rest: `${h.url}/relayer` },
  });
  const key = generatePrivateKey();
  const client = await createSecureClient({
    environment,
    signer: privateKey(key),
    wallet: privateKeyToAccount(key).address,
  });
  return { h, client, key };
}

/** Collects an official client subscription's events as they arrive (the array fills in the background). */
export function collect<T>(iterable: AsyncIterable<T>): T[] {
  const out: T[] = [];
  void (async () => {
    for await (const e of iterable) out.push(e);
  })();
  return out;
}
