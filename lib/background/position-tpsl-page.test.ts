/**
 * A site protecting the person's whole perps position with take-profit / stop-loss, in the shape the perps
 * SDK's `placePositionTpSl` sends (legs of quantity "0", market, reduce-only, `grp: "position"`): a
 * window always asks — even under a grant that allows trigger orders, since a leg closes a size no grant
 * bounds — and names what will happen in words; once approved the sandbox holds both legs and closes the
 * position at the trigger. A leg the venue's rules refuse is refused at the boundary, naming the field; a
 * leg whose trigger the mark has already crossed is flagged in the window.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, sandboxSuite, waitPending, perpsPosts, btcOnly, pagePathKit } from '../../test/kits/background';
import { createOrders } from '../perps/commands';
import { userRejected } from '../errors/rpc';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, grantOf, mark, settle, codeOf, openOrders } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'position-tpsl',
});

/** The body the SDK's `placePositionTpSl` signs for a long BTC position (exit side: sell). */
const protectLong = (tp: string, sl: string) => ({
  op: {
    type: 'createOrders',
    args: [
      { iid: 1, buy: false, qty: '0', po: false, ro: true, tr: { tpsl: 'tp', trp: tp, market: true } },
      { iid: 1, buy: false, qty: '0', po: false, ro: true, tr: { tpsl: 'sl', trp: sl, market: true } },
    ],
    grp: 'position',
  },
});

const setMark = (price: string) =>
  fetch(`${h.url}/admin/mark`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instrument_id: 1, price }),
  });
const btcSize = () => h.ctx.venue.findAccount(h.demo.owner.address)?.positions.get(1)?.size ?? 0n;

describe('a site protects the whole position with take-profit / stop-loss', () => {
  it(
    'asks in a window under a grant that allows trigger orders, words the legs ' +
      'as closing the whole position, and the sandbox closes it at the trigger',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, { ...btcOnly, allow: { order: true, cancel: true, market: true, triggers: true } });
      const m = Number(await mark(1));
      await h.send(
        h.proxy,
        createOrders({ orders: [{ iid: 1, buy: true, qty: '0.05', p: String(Math.ceil(m * 1.01)), tif: 'ioc' }] }),
      );
      expect(btcSize()).toBeGreaterThan(0n);
      const before = perpsPosts(wire);
      const tp = String(Math.ceil(m * 1.2));
      const sl = String(Math.floor(m * 0.8));
      const answer = settle(bg.page(page).request('perps_sendCommand', protectLong(tp, sl)));
      const [view] = await waitPending(bg);
      expect(view, 'a window, whatever the grant allows').toBeDefined();
      expect(view!.grantable, 'the window offers no grant for it').toBeFalsy();
      expect(view!.title).toBe('Protect a position');
      expect(view!.lines[0]).toMatch(
        /^Take-profit: sell what the whole BTC-PERP \(#1\) position holds at market when the mark reaches /,
      );
      expect(view!.lines[1]).toMatch(/^Stop-loss: sell what the whole BTC-PERP \(#1\) position holds at market/);
      expect(perpsPosts(wire), 'nothing sent before the person approves').toBe(before);
      bg.registry.decide(view!.id, { approve: true, digest: view!.digest });
      const { r, e } = await answer;
      expect(e).toBeUndefined();
      expect(r).toMatchObject([{ status: 'ok' }, { status: 'ok' }]);
      const legs = openOrders().filter((o) => o.trigger?.scope === 'position');
      expect(legs.map((o) => o.trigger?.tpsl).sort()).toEqual(['sl', 'tp']);
      expect((await setMark(sl)).status).toBe(200);
      expect(btcSize(), 'the stop-loss closed what the position held').toBe(0n);
    },
    30_000,
  );

  it('refuses a sized leg in a position group at the boundary, naming the field: no window, nothing sent', async () => {
    const { bg, wire } = await ready();
    const before = perpsPosts(wire);
    const body = protectLong('90000', '50000');
    body.op.args[1] = { ...body.op.args[1]!, qty: '0.05' };
    const { e } = await settle(bg.page(page).request('perps_sendCommand', body));
    expect(codeOf(e)).toBe(-32602);
    expect(String((e as Error).message)).toMatch(/op\.args\[1\]\.qty: must be "0" in a position group/);
    expect(bg.registry.size).toBe(0);
    expect(perpsPosts(wire)).toBe(before);
  });

  it(
    "a leg on the wrong side of the mark (a long's take-profit " +
      'under it) is flagged in the window: it fires at once',
    async () => {
      const { bg } = await ready();
      const m = Number(await mark(1));
      const answer = settle(
        bg
          .page(page)
          .request('perps_sendCommand', protectLong(String(Math.floor(m * 0.9)), String(Math.floor(m * 0.8)))),
      );
      const [view] = await waitPending(bg);
      expect(view!.flags.join(' ')).toMatch(
        /The take-profit at [\d,]+ fires at once: the mark is [\d,.]+, already past it\./,
      );
      expect(view!.flags.join(' ')).not.toMatch(/stop-loss .* fires at once/);
      bg.registry.rejectAll(() => userRejected('closed by the test'));
      await answer;
    },
  );
});
