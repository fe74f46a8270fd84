/**
 * A leg protecting the whole position that fires into a thin book (anyone, the site too from its own venue
 * account, can be the only bid when it fires) closes part of the position; the rest of its market order
 * is cancelled, and the other leg keeps protecting what the position still holds: it ends with
 * `position_closed` only once the position is gone (`PerpsVenue.endPositionLegs`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOrders } from '../perps/commands';
import { startHarness, type Harness } from '../../test/kits/sandbox';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

type OrderView = { order_id: number; status: string; filled_quantity: string; tpsl?: { kind: string; scope?: string; armed_qty?: string } };
const orders = async () => (await h.read('orders')) as OrderView[];
const position = async (iid: number) => ((await h.read('portfolio')) as { positions: { instrument_id: number; size: string }[] }).positions.find((p) => p.instrument_id === iid);
const mark = (instrument_id: number, price: string) => fetch(`${h.url}/admin/mark`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instrument_id, price }) });

describe('a whole-position leg that fires into a thin book', () => {
  it('leaves the sibling leg protecting what the position still holds (it ends only once the position is gone)', async () => {
    await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, qty: '0.2', p: '65100', tif: 'ioc' }] }));
    const legs = (await h.send(h.proxy, createOrders({
      orders: [
        { iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'tp', trp: '67000', market: true } },
        { iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'sl', trp: '64000', market: true } },
      ],
      group: 'position',
    }))) as { oid: number }[];
    const [tp, sl] = legs.map((a) => a.oid);
    const byId = async (id: number | undefined) => (await orders()).find((o) => o.order_id === id);
    expect(await byId(sl)).toMatchObject({ status: 'armed', tpsl: { scope: 'position', armed_qty: '0.2' } });

    // The bid side is thin when the stop fires: the resting bids are pulled, one small bid stays (the site's own account).
    const { venue } = h.ctx;
    for (const o of [...venue.book(1).bids]) venue.cancel(venue.findAccount(o.owner)!, o);
    venue.placeOrders(venue.account(h.demo.counterparty.address), [{ iid: 1, buy: true, qty: '0.05', p: '64000', tif: 'gtc' }]);

    expect((await mark(1, '64000')).status).toBe(200);
    expect(await byId(sl)).toMatchObject({ filled_quantity: '0.05' });
    const left = await position(1);
    expect(left, 'the stop-loss closed only what the book could take').toMatchObject({ size: '0.15' });
    // The position is not gone: the take-profit must still protect it.
    expect((await byId(tp))?.status, 'a leg ends as position_closed only when the position is gone').not.toBe('position_closed');
  });
});
