/**
 * Sandbox relayer (`/relayer`; seed `order-book-exchange-api.md` "Relayer and bridge"): `POST /submit`
 * answers at once with `STATE_NEW`; `GET /transaction?id=` reports the hash once "mined"
 * (`config.relayerMineMs` after submission). Public.
 */
import { Hono } from 'hono';
import { keccak256, toHex } from 'viem';
import type { SandboxContext } from './context';
import { jsonBody } from './http';

/** The relayer app of `ctx` (paths relative to its `/relayer` mount). */
export function relayerRoutes(ctx: SandboxContext): Hono {
  const relayer = new Hono();
  relayer.post('/submit', async (c) => {
    const payload = await jsonBody(c);
    if (payload === undefined) return c.json({ error: 'invalid json' }, 400);
    if (typeof payload !== 'object' || payload === null) return c.json({ error: 'invalid payload' }, 400);
    const id = crypto.randomUUID();
    ctx.relayer.set(id, { id, submitted: ctx.now(), hash: keccak256(toHex(id)), payload });
    return c.json({ transactionID: id, state: 'STATE_NEW' });
  });
  relayer.get('/transaction', (c) => {
    const tx = ctx.relayer.get(c.req.query('id') ?? '');
    if (!tx) return c.json({ error: 'transaction not found' }, 404);
    const mined = ctx.now() - tx.submitted >= ctx.config.relayerMineMs;
    return c.json([
      { transactionID: tx.id, state: mined ? 'STATE_MINED' : 'STATE_NEW', ...(mined ? { transactionHash: tx.hash } : {}) },
    ]);
  });
  return relayer;
}
