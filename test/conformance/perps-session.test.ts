/**
 * The official perps client (`@polymarket/client` 0.2.0) runs its session against the sandbox with no
 * shim (PROTOCOL.md §5.1): `openPerpsSession` creates a proxy over REST (wallet-signed on the
 * venue's domain), reads the credentials with `POLYMARKET-*` headers and connects the WebSocket (auth,
 * sub); then placeOrder resting and crossing (each waits for its `orders` event after the
 * acknowledgement), cancels by id and by client order id, leverage, the fills arriving as events, and
 * take-profit / stop-loss on the whole position (`placePositionTpSl`: legs of quantity "0" in group
 * "position"), which the sandbox fires by closing what the position holds.
 * Node 20 has no global WebSocket: the test gives the client the `ws` one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderSide, PerpsTimeInForce, type PerpsSession, type PerpsSessionEvent } from '@polymarket/client';
import type { Harness } from '../kits/sandbox';
import { startVenueClient } from './venue-client';

let h: Harness;
let session: PerpsSession;
const events: PerpsSessionEvent[] = [];
const COID = '0123456789abcdef0123456789abcdef';

beforeAll(async () => {
  let client: Awaited<ReturnType<typeof startVenueClient>>['client'];
  ({ h, client } = await startVenueClient());
  session = await client.openPerpsSession({ expiresIn: 3_600_000, label: 'conformance' });
  void (async () => {
    for await (const e of session) events.push(e);
  })();
}, 60_000);
afterAll(async () => {
  await session?.close();
  await h?.close();
});

const until = async (pred: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out; events: ${JSON.stringify(events).slice(0, 1_500)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('official perps session against the sandbox', () => {
  it('places a resting GTC order and cancels it by id', async () => {
    const { order } = await session.placeOrder({
      instrumentId: 1,
      side: OrderSide.BUY,
      price: '60000',
      quantity: '0.001',
      timeInForce: PerpsTimeInForce.GTC,
    });
    expect(order).toMatchObject({ instrumentId: 1, status: 'open', quantity: '0.001' });
    const cancelled = await session.cancelOrder({ orderId: order.id });
    expect(cancelled).toMatchObject({ status: 'ok' });
    expect((await session.fetchOpenOrders()).map((o) => o.id)).not.toContain(order.id);
  });

  it('places an order with a client order id and cancels it by that id', async () => {
    const { order } = await session.placeOrder({
      instrumentId: 1,
      side: OrderSide.BUY,
      price: '60000',
      quantity: '0.001',
      timeInForce: PerpsTimeInForce.GTC,
      clientOrderId: COID,
    });
    expect(order.clientOrderId).toBe(COID);
    expect(await session.cancelOrders({ clientOrderIds: [COID] })).toMatchObject([{ status: 'ok' }]);
  });

  it('updates leverage', async () => {
    expect(await session.updateLeverage({ instrumentId: 2, leverage: 5, crossMargin: false })).toMatchObject({
      leverage: 5,
    });
  });

  it('crosses the book with an IOC order, and the fill, portfolio and balance arrive as events', async () => {
    const { order } = await session.placeOrder({
      instrumentId: 1,
      side: OrderSide.BUY,
      price: '66000',
      quantity: '0.002',
      timeInForce: PerpsTimeInForce.IOC,
    });
    expect(order).toMatchObject({ status: 'filled', filledQuantity: '0.002' });
    await until(() => events.some((e) => e.type === 'fill') && events.some((e) => e.type === 'portfolio'));
    const fill = events.find((e) => e.type === 'fill');
    expect(fill && 'payload' in fill ? fill.payload : undefined).toMatchObject([
      { orderId: order.id, quantity: '0.002', taker: true },
    ]);
    expect(events.some((e) => e.type === 'resync')).toBe(false);
    const { positions } = await session.fetchPortfolio();
    expect(positions.find((p) => p.instrumentId === 1)?.size).toBe('0.002');
  });

  it('protects the whole position with placePositionTpSl, and the sandbox closes it at the trigger', async () => {
    const { tpSl } = await session.placePositionTpSl({
      instrumentId: 1,
      takeProfit: { triggerPrice: '90000' },
      stopLoss: { triggerPrice: '50000' },
    });
    const open = await session.fetchOpenOrders();
    const leg = (id: number | undefined) => open.find((o) => o.id === id);
    expect(leg(tpSl.takeProfit?.orderId)).toMatchObject({
      status: 'armed',
      quantity: '0',
      reduceOnly: true,
      tpSl: { kind: 'tp', scope: 'position', armedQuantity: '0.002' },
    });
    expect(leg(tpSl.stopLoss?.orderId)).toMatchObject({
      status: 'armed',
      tpSl: { kind: 'sl', scope: 'position', triggerPrice: '50000' },
    });
    const mark = (price: string) =>
      fetch(`${h.url}/admin/mark`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ instrument_id: 1, price }),
      });
    expect((await mark('50000')).status).toBe(200);
    const { positions } = await session.fetchPortfolio();
    expect(positions.find((p) => p.instrumentId === 1)).toBeUndefined();
  });
});
