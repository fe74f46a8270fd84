/**
 * Sandbox bridge (`/bridge`; seed `order-book-exchange-api.md` "Relayer and bridge"): `GET /supported-assets`
 * (`{ supportedAssets: [] }`, the settings' connection check reads it) and `POST /withdraw`
 * with body `{ address, toChainId, toTokenAddress, recipientAddr, amount }` (amount in base units),
 * authorised by L1 headers of `address` (ClobAuth on the exchange chain, nonce 0); debits the order
 * book's collateral and records the withdrawal (`GET /admin/withdrawals`).
 */
import { Hono } from 'hono';
import * as v from 'valibot';
import { isAddress } from 'viem';
import type { SandboxContext } from './context';
import { jsonBody } from './http';
import { L1_ERROR, verifyL1 } from './clob/exchange';

/** The bridge app of `ctx` (paths relative to its `/bridge` mount). */
export function bridgeRoutes(ctx: SandboxContext): Hono {
  const bridge = new Hono();
  const venue = ctx.clob;
  bridge.post('/withdraw', async (c) => {
    const parsed = v.safeParse(v.record(v.string(), v.unknown()), await jsonBody(c));
    if (!parsed.success) return c.json({ error: 'invalid json' }, 400);
    const b = parsed.output;
    const l1 = await verifyL1(ctx, c, 0);
    if (!l1) return c.json({ error: L1_ERROR }, 401);
    const address = l1.address;
    if (typeof b.address !== 'string' || b.address.toLowerCase() !== address.toLowerCase()) return c.json({ error: 'address mismatch' }, 400);
    if (typeof b.amount !== 'string' || !/^[1-9]\d{0,30}$/.test(b.amount)) return c.json({ error: 'invalid amount' }, 400);
    if (typeof b.recipientAddr !== 'string' || !isAddress(b.recipientAddr, { strict: false })) return c.json({ error: 'invalid recipientAddr' }, 400);
    if (typeof b.toChainId !== 'number' || !Number.isSafeInteger(b.toChainId)) return c.json({ error: 'invalid toChainId' }, 400);
    const amount = BigInt(b.amount);
    if (venue.balanceOf(address) < amount) return c.json({ error: 'not enough balance' }, 400);
    venue.credit(address, -amount);
    const id = crypto.randomUUID();
    ctx.bridgeWithdrawals.push({ id, address, amount: b.amount, toChainId: b.toChainId, recipient: b.recipientAddr, at: ctx.now() });
    return c.json({ id, status: 'pending' });
  });
  // The venue's public list read (docs.polymarket.com Bridge API); the sandbox bridges nothing in: an empty list.
  bridge.get('/supported-assets', (c) => c.json({ supportedAssets: [] }));
  return bridge;
}
