/**
 * The order-book channels through the official client's `subscribe` (`@polymarket/client` 0.2.0; PROTOCOL.md
 * §5.3–§5.4; `@polymarket/clob-client-v2` has no WebSocket code) against the sandbox, with no shim: the market
 * channel's book dump per token id, then price_change and last_trade_price as the official CLOB client places orders;
 * the user channel (the secure client's own API credentials) with the account's order and trade events. Node 20 has no
 * global WebSocket: the test gives the client `ws`'s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { createSecureClient } from '@polymarket/client';
import { ClobClient, OrderType, Side } from '@polymarket/clob-client-v2';
import type { Harness } from '../kits/sandbox';
import { collect, startVenueClient } from './venue-client';

let h: Harness;
let client: Awaited<ReturnType<typeof createSecureClient>>;
let trader: ClobClient;
const CHAIN = 80002;

beforeAll(async () => {
  let key: `0x${string}`;
  ({ h, client, key } = await startVenueClient());
  const account = privateKeyToAccount(key);
  h.ctx.clob.credit(account.address, 1_000_000_000n);
  // The same wallet places orders through the official CLOB client (its derived key is the same account).
  const wallet = createWalletClient({ account, transport: http('http://127.0.0.1:9') });
  const creds = await new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: wallet,
    useServerTime: true,
    throwOnError: true,
  }).deriveApiKey(0);
  trader = new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: wallet,
    creds,
    useServerTime: true,
    throwOnError: true,
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const until = async (pred: () => boolean, what: string, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('official client subscribe against the sandbox channels', () => {
  it('market: a book per token id, then price_change and last_trade_price', async () => {
    const [yes, no] = h.ctx.clob.markets[0]!.tokenIds;
    const handle = await client.subscribe([{ topic: 'market', tokenIds: [yes, no] }]);
    const events = collect(handle);
    await until(() => events.filter((e) => e.type === 'book').length === 2, 'two book dumps');
    expect(
      new Set(events.filter((e) => e.type === 'book').map((e) => ('tokenId' in e.payload ? e.payload.tokenId : ''))),
    ).toEqual(new Set([yes, no]));
    await trader.createAndPostOrder({ tokenID: yes, price: 0.2, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
    await until(() => events.some((e) => e.type === 'price_change'), 'a price_change');
    await trader.createAndPostMarketOrder({ tokenID: yes, amount: 5, side: Side.BUY }, undefined, OrderType.FOK);
    await until(() => events.some((e) => e.type === 'last_trade_price'), 'a last_trade_price');
    await handle.close();
  });

  it('user: the account’s order and trade events with its own API credentials', async () => {
    const [yes] = h.ctx.clob.markets[0]!.tokenIds;
    const handle = await client.subscribe([{ topic: 'user' }]);
    const events = collect(handle);
    await new Promise((r) => setTimeout(r, 100));
    const placed = await trader.createAndPostOrder(
      { tokenID: yes, price: 0.25, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    await until(() => events.some((e) => e.type === 'order'), 'an order event');
    await trader.createAndPostMarketOrder({ tokenID: yes, amount: 5, side: Side.BUY }, undefined, OrderType.FOK);
    await until(() => events.some((e) => e.type === 'trade'), 'a trade event');
    const order = events.find((e) => e.type === 'order');
    expect(order && 'id' in order.payload ? order.payload.id : undefined).toBe(placed.orderID);
    await handle.close();
  });
});
