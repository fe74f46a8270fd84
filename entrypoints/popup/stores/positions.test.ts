import { describe, expect, it, vi } from 'vitest';
import { createPerpsStore } from './perps';
import { closeOrder, createPositionsStore, marginRatioPct, protectOrder, withPushedFills } from './positions';
import { fakeCall } from './testkit';

const SHORT = {
  instrument_id: 2,
  symbol: 'ETH-PERP',
  size: '-1.5',
  entry_price: '3000',
  leverage: 5,
  cross: true,
  initial_margin: '900',
  maintenance_margin: '45',
  position_value: '4500',
  liquidation_price: '3500',
  unrealized_pnl: '0',
  return_on_equity: '0',
  cumulative_funding: '0',
};
const fill = (t: number) => ({
  trade_id: t,
  order_id: t,
  instrument_id: 2,
  side: 'long' as const,
  price: '1',
  quantity: '1',
  fee: '0',
  pnl: '0',
  taker: true,
  timestamp: t,
});

function setup() {
  const { call, calls } = fakeCall({
    'perps.read': (p) => {
      const q = (p.query ?? {}) as Record<string, number>;
      if (p.name === 'fills')
        return q.end_timestamp === undefined
          ? { data: [fill(300), fill(200)], more: true }
          : { data: [fill(q.end_timestamp - 50)], more: false };
      if (p.name === 'equity' || p.name === 'pnl') return { data: [[1, p.name === 'pnl' ? '-5' : '100']] };
      if (p.name === 'fundingPayments') return { data: [] };
      if (p.name === 'book') return { bids: [['2999', '5']], asks: [['3001', '5']] };
      return [];
    },
  });
  const perps = createPerpsStore('0xabc', call);
  perps.instruments.value = [
    {
      instrument_id: 2,
      symbol: 'ETH-PERP',
      price_decimals: 2,
      quantity_decimals: 2,
      max_leverage: 50,
      tick_size: '0.05',
      lot_size: '0.01',
    },
  ];
  perps.fees.value = { taker: '0.0005', maker: '0.0001' };
  perps.portfolio.value = {
    positions: [SHORT],
    margin: {
      total_account_value: '10000',
      total_initial_margin: '900',
      total_maintenance_margin: '45',
      total_position_value: '4500',
    },
    withdrawable: '9100',
  };
  const sent: unknown[] = [];
  const s = createPositionsStore(perps, async (cmd) => {
    sent.push(cmd.body);
    return {};
  });
  return { s, calls, sent, perps };
}

describe('positions helpers', () => {
  it('computes the margin ratio from maintenance margin and account value', () => {
    const margin = {
      total_account_value: '2000',
      total_initial_margin: '0',
      total_maintenance_margin: '50',
      total_position_value: '0',
    };
    expect(marginRatioPct({ positions: [], margin, withdrawable: '0' })).toBeCloseTo(2.5);
    expect(marginRatioPct({ positions: [], margin: { ...margin, total_account_value: '0' }, withdrawable: '0' })).toBe(
      0,
    );
    expect(marginRatioPct(undefined)).toBe(0);
  });
  it('closes a short by buying its whole size reduce-only', () => {
    expect(closeOrder(SHORT, '3030').body).toMatchObject({
      type: 'createOrders',
      args: [{ buy: true, qty: '1.5', p: '3030', tif: 'ioc', ro: true }],
    });
  });
  it("protects a short with buy legs on the whole position, as the SDK's placePositionTpSl signs them", () => {
    expect(protectOrder(SHORT, '2800', '3200').body).toEqual({
      type: 'createOrders',
      args: [
        {
          iid: SHORT.instrument_id,
          buy: true,
          qty: '0',
          po: false,
          ro: true,
          tr: { tpsl: 'tp', trp: '2800', market: true },
        },
        {
          iid: SHORT.instrument_id,
          buy: true,
          qty: '0',
          po: false,
          ro: true,
          tr: { tpsl: 'sl', trp: '3200', market: true },
        },
      ],
      grp: 'position',
    });
    expect(protectOrder(SHORT, '', '3200').body).toMatchObject({ args: [{ tr: { tpsl: 'sl' } }], grp: 'position' });
  });
});

describe('createPositionsStore', () => {
  it('refuses to protect a short with a stop-loss under the mark, in words, and sends nothing', async () => {
    const { s, sent, perps } = setup();
    perps.tickers.value = [{ instrument_id: 2, mark_price: '3010' } as never];
    await s.protect(SHORT, '', '3000');
    expect(s.error.value).toBe('Stop-loss must be above 3010 for a short.');
    expect(sent).toEqual([]);
    await s.protect(SHORT, '2900', '3100');
    expect(s.error.value).toBeUndefined();
    expect(sent).toMatchObject([
      {
        grp: 'position',
        args: [
          { buy: true, tr: { tpsl: 'tp', trp: '2900' } },
          { buy: true, tr: { tpsl: 'sl', trp: '3100' } },
        ],
      },
    ]);
    expect(s.notice.value).toBe('Protected the whole ETH-PERP (#2) position: take-profit 2900, stop-loss 3100');
  });

  it('pages fills by time: the next page ends just before the last fill shown', async () => {
    const { s, calls } = setup();
    await s.loadFills();
    expect(s.more.value).toBe(true);
    await s.moreFills();
    expect(calls.at(-1)?.payload).toMatchObject({ name: 'fills', query: { end_timestamp: 199 } });
    expect(s.fills.value.map((f) => f.timestamp)).toEqual([300, 200, 149]);
    expect(s.more.value).toBe(false);
  });

  it('adds the fills the live stream pushes at the top of the list, once each, keeping the read ones', async () => {
    const { s, perps } = setup();
    const stop = s.start();
    await vi.waitFor(() => expect(s.fills.value.map((f) => f.timestamp)).toEqual([300, 200]));
    // The stream pushes a new fill (the perps store collects pushes newest first).
    perps.fills.value = [fill(400)];
    expect(s.fills.value.map((f) => f.timestamp)).toEqual([400, 300, 200]);
    // Pushed again with a newer one, and one the read already showed: each appears once.
    perps.fills.value = [fill(500), fill(400), fill(300)];
    expect(s.fills.value.map((f) => f.timestamp)).toEqual([500, 400, 300, 200]);
    // A re-read of the first page keeps the pushed fills it does not hold yet.
    await s.loadFills();
    expect(s.fills.value.map((f) => f.timestamp)).toEqual([500, 400, 300, 200]);
    stop();
    perps.fills.value = [fill(600), ...perps.fills.value];
    expect(s.fills.value[0]?.timestamp).toBe(500);
  });

  it(
    'withPushedFills: new fills first, newest first; same ' + 'trade and order once; the same list when nothing is new',
    () => {
      const shown = [fill(300), fill(200)];
      expect(withPushedFills(shown, [fill(300)])).toBe(shown);
      expect(withPushedFills(shown, [fill(350), fill(400), fill(400)]).map((f) => f.timestamp)).toEqual([
        400, 350, 300, 200,
      ]);
      // A self-trade: the same trade id on two orders is two fills.
      expect(withPushedFills([], [{ ...fill(1), order_id: 2 }, fill(1)])).toHaveLength(2);
    },
  );

  it('reads the chosen series over the chosen range', async () => {
    const { s, calls } = setup();
    await s.chart({ series: 'pnl', range: '7d' });
    const q = calls.at(-1)?.payload.query as { interval: string; start_timestamp: number; end_timestamp: number };
    expect(q.interval).toBe('4h');
    expect(q.end_timestamp - q.start_timestamp).toBe(7 * 86_400_000);
    expect(s.points.value).toEqual([[1, '-5']]);
  });

  it('closes a position after a preview and one confirmation, says so, and reads the fills again', async () => {
    const { s, sent } = setup();
    await s.close(SHORT);
    // First step: a preview — size, estimated price, fee, realised PnL — and nothing sent.
    expect(sent).toHaveLength(0);
    expect(s.closing.value?.preview).toMatchObject({ size: '1.5', limit: '3031', complete: true });
    // Buying back 1.5 at 3001 (entry 3000): fee 1.5 × 3001 × 5 bp, realised PnL −1.5.
    expect(Number(s.closing.value?.preview.fee)).toBeCloseTo(2.25075, 4);
    expect(Number(s.closing.value?.preview.realizedPnl)).toBeCloseTo(-1.5, 6);
    s.cancelClose();
    expect(s.closing.value).toBeUndefined();
    await s.close(SHORT);
    await s.confirmClose();
    expect(sent).toHaveLength(1);
    // Protected: an IOC limit at the best ask + 1 % on the tick, never an unbounded market order.
    expect(sent[0]).toMatchObject({ args: [{ buy: true, qty: '1.5', p: '3031', tif: 'ioc', ro: true }] });
    expect(s.notice.value).toBe('Closed ETH-PERP (#2)');
    expect(s.fills.value).toHaveLength(2);
  });
});
