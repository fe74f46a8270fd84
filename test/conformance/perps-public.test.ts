/**
 * The official client's perps market-data topics (`@polymarket/client` 0.2.0 `subscribe`: `perps.trades`,
 * `perps.bbo`, `perps.book`, `perps.candles`, `perps.tickers`, `perps.statistics`; PROTOCOL.md §5.2)
 * against the sandbox's public channels on `/perps/v1/ws`, with no shim: each topic delivers at least
 * one event that the client itself parsed (it validates every frame with the bindings' schemas and
 * drops what does not parse), after a trade at the sandbox. Node 20 has no global WebSocket: the
 * client is given `ws`'s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerpsKlineInterval, type createSecureClient } from '@polymarket/client';
import { createOrders } from '../../lib/perps/commands';
import type { Harness } from '../kits/sandbox';
import { collect, startVenueClient } from './venue-client';

let h: Harness;
let client: Awaited<ReturnType<typeof createSecureClient>>;

beforeAll(async () => {
  ({ h, client } = await startVenueClient());
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('official client perps market-data topics against the sandbox', () => {
  it('trades, bbo, book, candles, tickers and statistics each deliver an event the client parsed', async () => {
    const handle = await client.subscribe([
      { topic: 'perps.trades', instrumentId: 1 },
      { topic: 'perps.bbo', instrumentId: 1 },
      { topic: 'perps.book', instrumentId: 1 },
      { topic: 'perps.candles', instrumentId: 1, interval: PerpsKlineInterval.OneMinute },
      { topic: 'perps.tickers' },
      { topic: 'perps.statistics', instrumentId: 1 },
    ]);
    const events = collect(handle);
    const topics = () => new Set<string>(events.map((e) => e.topic));
    const want = ['perps.trades', 'perps.bbo', 'perps.book', 'perps.candles', 'perps.tickers', 'perps.statistics'];
    // A trade at the sandbox (a crossing IOC of the demo account) moves every one of them.
    const end = Date.now() + 10_000;
    while (!want.every((t) => topics().has(t))) {
      if (Date.now() > end)
        throw new Error(
          `missing ${want.filter((t) => !topics().has(t)).join(', ')}; got ${JSON.stringify(events).slice(0, 2_000)}`,
        );
      await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, p: '66000', qty: '0.001', tif: 'ioc' }] }));
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(topics()).toEqual(new Set(want));
    // What the client made of them: camel-cased payloads of the sandbox's book and trades.
    const first = (t: string) => events.find((e) => e.topic === t);
    expect(first('perps.trades')).toMatchObject({
      type: 'trade',
      channel: 'trades::1',
      payload: [{ instrumentId: 1, side: 'long', quantity: '0.001' }],
    });
    expect(first('perps.book')).toMatchObject({
      type: 'book',
      channel: 'book::1',
      payload: {
        instrumentId: 1,
        bids: expect.arrayContaining([expect.objectContaining({ quantity: expect.any(String) })]),
      },
    });
    expect(first('perps.bbo')).toMatchObject({ type: 'bbo', payload: { instrumentId: 1 } });
    expect(first('perps.candles')).toMatchObject({ channel: 'klines::1::1m' });
    expect(first('perps.tickers')).toMatchObject({ type: 'ticker', channel: 'tickers::all' });
    expect(first('perps.statistics')).toMatchObject({
      type: 'statistic',
      channel: 'statistics::1',
      payload: { instrumentId: 1 },
    });
    await handle.close();
  });
});
