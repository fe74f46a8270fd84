/**
 * The sandbox fires TP / SL trigger orders when the mark crosses them (untriggered → armed
 * → triggered, per PROTOCOL.md's order statuses) and liquidates an account whose value falls below its
 * maintenance margin — so TP / SL and liquidation warnings are tested by what happens.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOrders, updateLeverage } from '../perps/commands';
import { startHarness, type Harness } from '../../test/kits/sandbox';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

type OrderView = {
  order_id: number;
  status: string;
  filled_quantity: string;
  tpsl?: { kind: string; armed_qty?: string };
};
const orders = async () => (await h.read('orders')) as OrderView[];
const position = async (iid: number) =>
  ((await h.read('portfolio')) as { positions: { instrument_id: number; size: string }[] }).positions.find(
    (p) => p.instrument_id === iid,
  );
const mark = (instrument_id: number, price: string) =>
  fetch(`${h.url}/admin/mark`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instrument_id, price }),
  });

/**
 * A long 0.2 BTC position with a take-profit (67 000) and a stop-loss (64 000) on the whole of it; their order ids and
 * a reader of their state.
 */
async function protectedLong() {
  await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, qty: '0.2', p: '65100', tif: 'ioc' }] }));
  const legs = (await h.send(
    h.proxy,
    createOrders({
      orders: [
        { iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'tp', trp: '67000', market: true } },
        { iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'sl', trp: '64000', market: true } },
      ],
      group: 'position',
    }),
  )) as { oid: number }[];
  const [tp, sl] = legs.map((a) => a.oid);
  const byId = async (id: number | undefined) => (await orders()).find((o) => o.order_id === id);
  return { tp, sl, byId };
}

describe('sandbox: TP / SL triggers', () => {
  it('arms with the position, fires the take-profit when the mark crosses it, and disarms the stop-loss', async () => {
    const acks = (await h.send(
      h.proxy,
      createOrders({
        orders: [
          { iid: 1, buy: true, qty: '0.2', p: '65100', tif: 'ioc' },
          { iid: 1, buy: false, qty: '0.2', ro: true, tr: { tpsl: 'tp', trp: '66000', market: true } },
          { iid: 1, buy: false, qty: '0.2', ro: true, tr: { tpsl: 'sl', trp: '64000', market: true } },
        ],
      }),
    )) as { oid: number }[];
    const [entry, tp, sl] = acks.map((a) => a.oid);
    const byId = async (id: number | undefined) => (await orders()).find((o) => o.order_id === id);
    expect(await position(1)).toMatchObject({ size: '0.2' });
    expect(await byId(tp)).toMatchObject({ status: 'armed', tpsl: { kind: 'tp', armed_qty: '0.2' } });
    expect((await byId(sl))?.status).toBe('armed');
    expect((await byId(entry))?.status).toBe('filled');

    const r = await mark(1, '65900');
    expect(r.status).toBe(200);
    expect((await byId(tp))?.status).toBe('armed'); // not crossed yet

    await mark(1, '66000');
    expect(await byId(tp)).toMatchObject({ status: 'triggered', filled_quantity: '0.2' });
    expect(await position(1)).toBeUndefined();
    expect((await byId(sl))?.status).toBe('untriggered'); // nothing left to protect
    await mark(1, '63000');
    expect((await byId(sl))?.status).toBe('untriggered');
  });

  it("fires a short's stop-loss when the mark rises through it", async () => {
    const acks = (await h.send(
      h.proxy,
      createOrders({
        orders: [
          { iid: 2, buy: false, qty: '2', p: '3100', tif: 'ioc' },
          { iid: 2, buy: true, qty: '2', ro: true, tr: { tpsl: 'sl', trp: '3200', market: true } },
        ],
      }),
    )) as { oid: number }[];
    await mark(2, '3199.95');
    expect((await orders()).find((o) => o.order_id === acks[1]?.oid)?.status).toBe('armed');
    await mark(2, '3200');
    expect((await orders()).find((o) => o.order_id === acks[1]?.oid)?.status).toBe('triggered');
    expect(await position(2)).toBeUndefined();
  });

  it('closes the whole position as it is when a position leg fires, and ends the other leg', async () => {
    const { tp, sl, byId } = await protectedLong();
    expect(await byId(sl)).toMatchObject({
      status: 'armed',
      tpsl: { kind: 'sl', scope: 'position', armed_qty: '0.2' },
    });
    // The position grows after the legs were placed: they protect what it holds, not what it held.
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, qty: '0.1', p: '65100', tif: 'ioc' }] }));
    expect(await byId(sl)).toMatchObject({ status: 'armed', tpsl: { armed_qty: '0.3' } });
    await mark(1, '64000');
    expect(await byId(sl)).toMatchObject({ status: 'triggered', filled_quantity: '0.3' });
    expect(await position(1)).toBeUndefined();
    expect((await byId(tp))?.status).toBe('position_closed');
  });

  it(
    'a position leg that fires into a thin book closes what ' +
      'the book takes and leaves the other leg protecting the rest',
    async () => {
      const { tp, sl, byId } = await protectedLong();
      // The bid side is thin when the stop fires: the resting bids are pulled, one small bid stays (the site's own
      // account).
      const { venue } = h.ctx;
      for (const o of [...venue.book(1).bids]) venue.cancel(venue.findAccount(o.owner)!, o);
      venue.placeOrders(venue.account(h.demo.counterparty.address), [
        { iid: 1, buy: true, qty: '0.05', p: '64000', tif: 'gtc' },
      ]);

      expect((await mark(1, '64000')).status).toBe(200);
      expect(await byId(sl)).toMatchObject({ filled_quantity: '0.05' });
      const left = await position(1);
      expect(left, 'the stop-loss closed only what the book could take').toMatchObject({ size: '0.15' });
      // The position is not gone: the take-profit must still protect it.
      expect((await byId(tp))?.status, 'a leg ends as position_closed only when the position is gone').not.toBe(
        'position_closed',
      );
    },
  );

  it('refuses a zero quantity outside a position group', async () => {
    const { venue } = h.ctx;
    const account = venue.account(h.owner.address);
    expect(() =>
      venue.placeOrders(
        account,
        [{ iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'sl', trp: '64000', market: true } }],
        'order',
      ),
    ).toThrow('invalid_quantity');
    expect(() =>
      venue.placeOrders(
        account,
        [{ iid: 1, buy: false, qty: '0.1', ro: true, tr: { tpsl: 'sl', trp: '64000', market: true } }],
        'position',
      ),
    ).toThrow('invalid_quantity');
  });

  it('refuses a bad mark request', async () => {
    expect((await mark(99, '1')).status).toBe(400);
    expect((await mark(1, '-5')).status).toBe(400);
  });
});

describe('sandbox: liquidation', () => {
  it('closes every position of an account whose value falls below maintenance, and cancels its orders', async () => {
    await h.send(h.proxy, updateLeverage({ iid: 3, lev: 20, cross: true }));
    const w = Number(((await h.read('portfolio')) as { withdrawable: string }).withdrawable);
    // The whole free collateral at 20×, then a resting bid that must be cancelled.
    const qty = (Math.floor(((w * 0.9 * 20) / 151) * 10) / 10).toFixed(1);
    await h.send(h.proxy, createOrders({ orders: [{ iid: 3, buy: true, qty, p: '151', tif: 'ioc' }] }));
    const pos = (await h.read('portfolio')) as { positions: { instrument_id: number; liquidation_price: string }[] };
    const liq = Number(pos.positions.find((p) => p.instrument_id === 3)?.liquidation_price);
    expect(liq).toBeGreaterThan(0);
    await mark(3, (liq + 0.5).toFixed(2));
    expect(await position(3)).toBeDefined();
    await mark(3, (liq - 0.5).toFixed(2));
    expect(await position(3)).toBeUndefined();
    const fills = ((await h.read('fills', { instrument_id: 3 })) as { data: { side: string; price: string }[] }).data;
    expect(fills[0]).toMatchObject({ side: 'short', price: String(Number((liq - 0.5).toFixed(2))) });
  });
});
