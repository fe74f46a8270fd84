/**
 * Sandbox order-book L1 routes — authenticated by a ClobAuth signature of the wallet (the official
 * client's L1 methods, `@polymarket/clob-client-v2` `createApiKey` / `deriveApiKey`; PROTOCOL.md §2.1):
 * `POST /auth/api-key` creates credentials for an unused nonce (400 on a used one) and credits a new
 * account with demo collateral; `GET /auth/derive-api-key` answers the credentials of a used nonce
 * (500 when there are none). Both answer `Cache-Control: no-store`.
 */
import type { Hono } from 'hono';
import type { Address } from 'viem';
import { randomBytes } from '../http';
import { fail, type ClobExchange } from './exchange';
import type { ApiCreds } from './venue';

/** Mounts the L1 routes of `ex` on `app`. */
export function l1Routes(app: Hono, ex: ClobExchange): void {
  const { venue, ctx } = ex;
  const nonceKey = (address: string, nonce: number) => `${address.toLowerCase()}:${nonce}`;

  const newCreds = (address: Address, nonce: number): ApiCreds => {
    const creds: ApiCreds = {
      apiKey: crypto.randomUUID(),
      secret: Buffer.from(randomBytes(32)).toString('base64url') + '=',
      passphrase: Buffer.from(randomBytes(32)).toString('hex'),
      address,
      nonce,
    };
    venue.creds.set(creds.apiKey, creds);
    venue.credsByNonce.set(nonceKey(address, nonce), creds.apiKey);
    return creds;
  };

  app.post('/auth/api-key', ex.l1, (c) => {
    const { address, nonce } = c.var.l1;
    if (venue.credsByNonce.has(nonceKey(address, nonce))) return fail(c, 400, 'Could not create api key');
    const creds = newCreds(address, nonce);
    if (!venue.collateral.has(address.toLowerCase())) venue.credit(address, ctx.config.newAccountBalance);
    c.header('Cache-Control', 'no-store');
    return c.json({ apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase });
  });

  app.get('/auth/derive-api-key', ex.l1, (c) => {
    const { address, nonce } = c.var.l1;
    const key = venue.credsByNonce.get(nonceKey(address, nonce));
    const creds = key ? venue.creds.get(key) : undefined;
    if (!creds) return fail(c, 500, 'Could not derive api key');
    c.header('Cache-Control', 'no-store');
    return c.json({ apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase });
  });
}
