/**
 * The official order-book client (`@polymarket/clob-client-v2` 1.1.0) against the sandbox: API keys
 * (create, derive, list, delete), server time, market info, every public read, GTC / GTD / FOK / FAK
 * orders (limit and market, BUY and SELL, post-only, negative-risk), a batch, get order, open orders,
 * trades, every cancel, heartbeats, balance-allowance and closed-only status. Every call must succeed,
 * with the client's own header names (`POLY_*`) and no shim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, type WalletClient } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { AssetType, ClobClient, OrderType, PriceHistoryInterval, Side } from '@polymarket/clob-client-v2';
import { startHarness, type Harness } from '../kits/sandbox';
import * as clob from '@polymarket/bindings/clob';

let h: Harness;
let wallet: WalletClient;
let client: ClobClient;
const CHAIN = 80002;

beforeAll(async () => {
  h = await startHarness({ now: undefined });
  wallet = createWalletClient({
    account: privateKeyToAccount(generatePrivateKey()),
    transport: http('http://127.0.0.1:9'),
  });
  const l1 = new ClobClient({ host: h.clobUrl, chain: CHAIN, signer: wallet, useServerTime: true, throwOnError: true });
  const creds = await l1.createApiKey(0);
  client = new ClobClient({
    host: h.clobUrl,
    chain: CHAIN,
    signer: wallet,
    creds,
    useServerTime: true,
    throwOnError: true,
  });
});
afterAll(async () => {
  await h?.close();
});

const binary = () => h.ctx.clob.markets[0]!;
const negRisk = () => h.ctx.clob.markets.find((m) => m.negRisk)!;

describe('official CLOB client against the sandbox', () => {
  it('reads server time, ok, version and market info', async () => {
    const t = await client.getServerTime();
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(5);
    expect(await client.getOk()).toBeTruthy();
    const info = await client.getClobMarketInfo(binary().conditionId);
    expect(info.t.map((x: { t: string }) => x.t)).toEqual(binary().tokenIds);
    expect(String(info.mts)).toBe(binary().tickSize);
    expect(await client.getTickSize(binary().tokenIds[0])).toBe(binary().tickSize);
    expect(await client.getNegRisk(negRisk().tokenIds[0])).toBe(true);
    expect(typeof (await client.getFeeRateBps(binary().tokenIds[0]))).toBe('number');
  });

  it('answers every public read, single and batch', async () => {
    const [yes, no] = binary().tokenIds;
    const book = await client.getOrderBook(yes);
    expect(book.bids.length).toBeGreaterThan(0);
    expect(
      (
        await client.getOrderBooks([
          { token_id: yes, side: Side.BUY },
          { token_id: no, side: Side.BUY },
        ])
      ).length,
    ).toBe(2);
    expect(Number((await client.getMidpoint(yes)).mid)).toBeGreaterThan(0);
    expect(
      Object.keys(
        await client.getMidpoints([
          { token_id: yes, side: Side.BUY },
          { token_id: no, side: Side.BUY },
        ]),
      ),
    ).toEqual([yes, no]);
    expect(Number((await client.getPrice(yes, 'BUY')).price)).toBeGreaterThan(0);
    expect(Object.keys(await client.getPrices([{ token_id: yes, side: Side.BUY }]))).toEqual([yes]);
    expect(Number((await client.getSpread(yes)).spread)).toBeGreaterThan(0);
    expect(Object.keys(await client.getSpreads([{ token_id: yes, side: Side.BUY }]))).toEqual([yes]);
    expect(await client.getLastTradePrice(yes)).toHaveProperty('price');
    expect(Array.isArray(await client.getLastTradesPrices([{ token_id: yes, side: Side.BUY }]))).toBe(true);
    const history = (await client.getPricesHistory({
      market: yes,
      interval: PriceHistoryInterval.ONE_DAY,
    })) as unknown as { history: { t: number; p: number }[] };
    expect(history.history.length).toBeGreaterThan(0);
  });

  it('manages API keys: derive the same key, list, and read closed-only status', async () => {
    const derived = await new ClobClient({
      host: h.clobUrl,
      chain: CHAIN,
      signer: wallet,
      useServerTime: true,
      throwOnError: true,
    }).deriveApiKey(0);
    expect(derived.key).toBe(client.creds!.key);
    const keys = await client.getApiKeys();
    expect(keys.apiKeys).toContain(client.creds!.key);
    expect(await client.getClosedOnlyMode()).toEqual({ closed_only: false });
  });

  it('places GTC, GTD, post-only and negative-risk limit orders, a batch, and reads them back', async () => {
    const [yes] = binary().tokenIds;
    const gtc = await client.createAndPostOrder(
      { tokenID: yes, price: 0.3, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    expect(gtc).toMatchObject({ success: true, status: 'live' });
    const gtd = await client.createAndPostOrder(
      { tokenID: yes, price: 0.31, size: 10, side: Side.BUY, expiration: Math.floor(Date.now() / 1000) + 3600 },
      undefined,
      OrderType.GTD,
    );
    expect(gtd).toMatchObject({ success: true, status: 'live' });
    const po = await client.createAndPostOrder(
      { tokenID: yes, price: 0.32, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
      true,
    );
    expect(po).toMatchObject({ success: true, status: 'live' });
    const nr = await client.createAndPostOrder(
      { tokenID: negRisk().tokenIds[0], price: 0.2, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    expect(nr).toMatchObject({ success: true, status: 'live' });
    const one = await client.createOrder({ tokenID: yes, price: 0.25, size: 10, side: Side.BUY });
    const two = await client.createOrder({ tokenID: yes, price: 0.26, size: 10, side: Side.BUY });
    const batch = await client.postOrders([
      { order: one, orderType: OrderType.GTC },
      { order: two, orderType: OrderType.GTC },
    ]);
    expect(batch.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
    const got = await client.getOrder(gtc.orderID);
    expect(got).toMatchObject({ id: gtc.orderID, status: 'LIVE', side: 'BUY', price: '0.3' });
    const open = await client.getOpenOrders();
    expect(open.map((o: { id: string }) => o.id)).toEqual(
      expect.arrayContaining([gtc.orderID, gtd.orderID, po.orderID, nr.orderID]),
    );
    expect((await client.getOpenOrders({ asset_id: yes })).every((o: { asset_id: string }) => o.asset_id === yes)).toBe(
      true,
    );
  });

  it('fills market orders sized in USDC (FOK BUY) and in shares (FAK SELL), and lists the trades', async () => {
    const [yes] = binary().tokenIds;
    const buy = await client.createAndPostMarketOrder(
      { tokenID: yes, amount: 10, side: Side.BUY },
      undefined,
      OrderType.FOK,
    );
    expect(buy).toMatchObject({ success: true, status: 'matched' });
    const sell = await client.createAndPostMarketOrder(
      { tokenID: yes, amount: 5, side: Side.SELL },
      undefined,
      OrderType.FAK,
    );
    expect(sell).toMatchObject({ success: true, status: 'matched' });
    // Limit orders on the other side and with the immediate types: a resting SELL, a crossing FOK and FAK BUY.
    const sellRest = await client.createAndPostOrder(
      { tokenID: yes, price: 0.95, size: 5, side: Side.SELL },
      undefined,
      OrderType.GTC,
    );
    expect(sellRest).toMatchObject({ success: true, status: 'live' });
    expect(clob.OrderResponseSchema.safeParse(sellRest).success).toBe(true);
    const fokLimit = await client.postOrder(
      await client.createOrder({ tokenID: yes, price: 0.7, size: 5, side: Side.BUY }),
      OrderType.FOK,
    );
    expect(fokLimit).toMatchObject({ success: true, status: 'matched' });
    const fakLimit = await client.postOrder(
      await client.createOrder({ tokenID: yes, price: 0.7, size: 5, side: Side.BUY }),
      OrderType.FAK,
    );
    expect(fakLimit).toMatchObject({ success: true, status: 'matched' });
    const trades = await client.getTrades();
    expect(trades.length).toBeGreaterThanOrEqual(2);
    expect(trades.every((t: { trader_side: string }) => t.trader_side === 'TAKER' || t.trader_side === 'MAKER')).toBe(
      true,
    );
    const page = await client.getTradesPaginated({ asset_id: yes });
    expect(page.trades.length).toBeGreaterThan(0);
  });

  it('reads balance and allowance for collateral and a conditional token', async () => {
    const c = await client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
    expect(BigInt(c.balance)).toBeGreaterThan(0n);
    const t = await client.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: binary().tokenIds[0] });
    expect(t).toHaveProperty('balance');
  });

  it('cancels one, many, by market, and all', async () => {
    const [yes, no] = binary().tokenIds;
    const place = (tokenID: string, price: number) =>
      client.createAndPostOrder({ tokenID, price, size: 10, side: Side.BUY }, undefined, OrderType.GTC);
    const [a, b, c] = [
      (await place(yes, 0.1)).orderID,
      (await place(yes, 0.11)).orderID,
      (await place(yes, 0.12)).orderID,
    ];
    await place(yes, 0.13);
    await place(no, 0.1);
    const one = await client.cancelOrder({ orderID: a });
    expect(one.canceled).toEqual([a]);
    expect(clob.CancelOrdersResponseSchema.safeParse(one).success).toBe(true);
    expect((await client.cancelOrders([b, c])).canceled).toEqual([b, c]);
    const byMarket = await client.cancelMarketOrders({ asset_id: yes });
    expect(byMarket.canceled.length).toBeGreaterThanOrEqual(1);
    expect((await client.getOpenOrders()).every((o: { asset_id: string }) => o.asset_id !== yes)).toBe(true);
    const all = await client.cancelAll();
    expect(all.canceled.length).toBeGreaterThanOrEqual(1);
    expect(await client.getOpenOrders()).toEqual([]);
  });

  it('keeps orders alive with heartbeats and cancels them when heartbeats lapse', async () => {
    const [yes] = binary().tokenIds;
    const first = await client.postHeartbeat();
    expect(first).toHaveProperty('heartbeat_id');
    const o = await client.createAndPostOrder(
      { tokenID: yes, price: 0.3, size: 10, side: Side.BUY },
      undefined,
      OrderType.GTC,
    );
    await client.postHeartbeat(first.heartbeat_id);
    h.ctx.clob.lapseHeartbeats(Date.now() + 60_000);
    expect((await client.getOrder(o.orderID)).status).toBe('CANCELED');
  });

  it('deletes the API key last', async () => {
    expect(await client.deleteApiKey()).toBeTruthy();
  });
});
