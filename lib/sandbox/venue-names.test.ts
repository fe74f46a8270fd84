/**
 * The venue's defaults in the sandbox: the perps command domain is the venue's
 * (`Polymarket` / `1` / chain id) unless a test asks for another, and REST accepts the venue's header
 * names (`POLY_*`, `POLYMARKET-PROXY` / `-SECRET`) as well as the seed's — never both with different
 * values.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildL1Headers, buildL2Headers } from '../clob/auth';
import { createOrders } from '../perps/commands';
import { signPerpsCommand } from '../perps/envelope';
import { startHarness, type Harness } from '../../test/kits/sandbox';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const venueNames = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.replace(/^SVC_/, 'POLY_'), v]));
const order = () => createOrders({ orders: [{ iid: 1, buy: true, p: '50000', qty: '0.001', tif: 'gtc' }] });

describe('perps domain', () => {
  it('reports and verifies on the venue domain by default', async () => {
    h = await startHarness();
    const info = await (await fetch(`${h.perps}/v1/info/exchange`)).json();
    expect(info).toMatchObject({ name: 'Polymarket', version: '1', chain_id: 80002 });
    const env = await signPerpsCommand(h.proxy, {
      command: order(),
      domain: { name: 'Polymarket', version: '1', chainId: 80002 },
      nowMs: h.clock.now,
    });
    const res = await h.raw('POST', '/v1/trade/orders', env);
    expect(res.status).toBe(200);
  });

  it('keeps another name when the sandbox is started with one, and refuses the venue domain then', async () => {
    h = await startHarness({ config: { perpsDomain: { name: 'Countersign Sandbox', version: '1', chainId: 80002 } } });
    const info = await (await fetch(`${h.perps}/v1/info/exchange`)).json();
    expect(info.name).toBe('Countersign Sandbox');
    const env = await signPerpsCommand(h.proxy, {
      command: order(),
      domain: { name: 'Polymarket', version: '1', chainId: 80002 },
      nowMs: h.clock.now,
    });
    const res = await h.raw('POST', '/v1/trade/orders', env);
    // Recovered on the sandbox's domain, the signature names some other key: refused, nothing placed.
    expect(res.status).toBe(401);
    expect([...h.ctx.venue.orders.values()].filter((o) => o.owner === h.owner.address.toLowerCase())).toEqual([]);
  });
});

describe('perps proxy headers', () => {
  const balances = (headers: Record<string, string>) => fetch(`${h.perps}/v1/account/balances`, { headers });

  it('accepts POLYMARKET-PROXY / POLYMARKET-SECRET as well as SERVICE-*', async () => {
    h = await startHarness();
    expect(
      (await balances({ 'POLYMARKET-PROXY': h.proxyAuth.proxy, 'POLYMARKET-SECRET': h.proxyAuth.secret })).status,
    ).toBe(200);
    expect((await balances({ 'SERVICE-PROXY': h.proxyAuth.proxy, 'SERVICE-SECRET': h.proxyAuth.secret })).status).toBe(
      200,
    );
  });

  it('refuses a wrong venue-named secret, and a request naming the secret twice with different values', async () => {
    h = await startHarness();
    expect((await balances({ 'POLYMARKET-PROXY': h.proxyAuth.proxy, 'POLYMARKET-SECRET': 'nope' })).status).toBe(401);
    const both = {
      'POLYMARKET-PROXY': h.proxyAuth.proxy,
      'POLYMARKET-SECRET': 'nope',
      'SERVICE-SECRET': h.proxyAuth.secret,
    };
    expect((await balances(both)).status).toBe(401);
  });
});

describe('order-book L1 and L2 headers', () => {
  it('creates an API key with POLY_* L1 headers and reads orders with POLY_* L2 headers', async () => {
    h = await startHarness();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const nowS = Math.floor(h.clock.now / 1000);
    const l1 = venueNames(
      await buildL1Headers(wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS, nonce: 0 }),
    );
    const created = await fetch(`${h.clobUrl}/auth/api-key`, { method: 'POST', headers: l1 });
    expect(created.status).toBe(200);
    const creds = (await created.json()) as { apiKey: string; secret: string; passphrase: string };
    const l2 = buildL2Headers({
      address: wallet.address,
      credentials: creds,
      timestamp: nowS,
      method: 'GET',
      requestPath: '/data/orders',
    });
    expect((await fetch(`${h.clobUrl}/data/orders`, { headers: venueNames(l2) })).status).toBe(200);
    // The key named twice with different values authenticates as nothing, whichever name is right.
    const mixed = {
      ...venueNames(l2),
      SVC_API_KEY: creds.apiKey,
      POLY_API_KEY: 'b2c5e1a8-0000-4000-8000-000000000001',
    };
    expect((await fetch(`${h.clobUrl}/data/orders`, { headers: mixed })).status).toBe(401);
  });
});
