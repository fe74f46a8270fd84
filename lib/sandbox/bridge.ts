/**
 * Sandbox bridge (`/bridge`; seed `order-book-exchange-api.md` "Relayer and bridge"): `GET /supported-assets`
 * (`{ supportedAssets: [] }`, the settings' connection check reads it) and `POST /withdraw`. Without `amount` it is the
 * venue's deposit-address withdraw (see `depositAddressWithdraw`: the deposit wallet is the source, its collateral
 * moves by a relayer batch). With `amount` (base units) it is the older direct form, authorised by L1 headers of
 * `address` (ClobAuth on the exchange chain, nonce 0), debiting the order book's collateral. Both are recorded (`GET
 * /admin/withdrawals`).
 */
import { Hono, type Context } from 'hono';
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
    if (b.amount === undefined) return depositAddressWithdraw(ctx, c, b);
    const l1 = await verifyL1(ctx, c, 0);
    if (!l1) return c.json({ error: L1_ERROR }, 401);
    const address = l1.address;
    if (typeof b.address !== 'string' || b.address.toLowerCase() !== address.toLowerCase())
      return c.json({ error: 'address mismatch' }, 400);
    if (typeof b.amount !== 'string' || !/^[1-9]\d{0,30}$/.test(b.amount))
      return c.json({ error: 'invalid amount' }, 400);
    if (typeof b.recipientAddr !== 'string' || !isAddress(b.recipientAddr, { strict: false }))
      return c.json({ error: 'invalid recipientAddr' }, 400);
    if (typeof b.toChainId !== 'number' || !Number.isSafeInteger(b.toChainId))
      return c.json({ error: 'invalid toChainId' }, 400);
    const amount = BigInt(b.amount);
    if (venue.balanceOf(address) < amount) return c.json({ error: 'not enough balance' }, 400);
    venue.credit(address, -amount);
    const id = crypto.randomUUID();
    ctx.bridgeWithdrawals.push({
      id,
      address,
      amount: b.amount,
      toChainId: b.toChainId,
      recipient: b.recipientAddr,
      at: ctx.now(),
    });
    return c.json({ id, status: 'pending' });
  });
  // The venue's public list read (docs.polymarket.com Bridge API); the sandbox bridges nothing in: an empty list.
  bridge.get('/supported-assets', (c) => c.json({ supportedAssets: [] }));
  return bridge;
}

/**
 * The venue's withdraw (no amount): `{ address, toChainId, toTokenAddress, recipientAddr }` answers
 * `{ address: { evm }, note }`, a deposit address on the exchange chain; collateral `address` sends there
 * (for a deposit wallet, a relayer `WALLET` batch with an ERC-20 `transfer`, as `transferErc20` of
 * `@polymarket/client` does) is forwarded to `recipientAddr` and recorded when mined. `address` must be
 * a deployed deposit wallet of the sandbox relayer.
 */
function depositAddressWithdraw(ctx: SandboxContext, c: Context, b: Record<string, unknown>) {
  const isAddr = (x: unknown): x is string => typeof x === 'string' && isAddress(x, { strict: false });
  if (!isAddr(b.address)) return c.json({ error: 'invalid address' }, 400);
  if (!isAddr(b.recipientAddr)) return c.json({ error: 'invalid recipientAddr' }, 400);
  if (!isAddr(b.toTokenAddress)) return c.json({ error: 'invalid toTokenAddress' }, 400);
  if (typeof b.toChainId !== 'number' || !Number.isSafeInteger(b.toChainId) || b.toChainId <= 0)
    return c.json({ error: 'invalid toChainId' }, 400);
  if (!ctx.relayerChain.wallets.get(b.address.toLowerCase())?.deployed)
    return c.json({ error: 'address is not a deployed wallet' }, 400);
  const evm = ctx.relayerChain.bridgeAddressFor({
    wallet: b.address.toLowerCase(),
    toChainId: b.toChainId,
    toToken: b.toTokenAddress.toLowerCase(),
    recipient: b.recipientAddr.toLowerCase(),
  });
  return c.json({
    address: { evm },
    note: 'Send USDC on the exchange chain to this address; it is bridged to recipientAddr.',
  });
}
