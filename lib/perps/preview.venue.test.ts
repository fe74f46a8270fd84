/**
 * The order summary before the click against the sandbox venue's records after it. The
 * sandbox runs in-process (`startHarness`); the summary reads only what the venue's reads answer
 * (instruments, book, portfolio, fees, config) and shares no code with its engine. Sizes exact; prices,
 * fees, margins and liquidation prices within 0.1 % (margins through the withdrawable read).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { createOrders, updateLeverage, type PerpsOrderInput } from './commands';
import { summarizeOrder } from './summary';
import { estimateMarket, maxOrderSize } from './risk';
import type { Book, Instrument, Portfolio } from './wire';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

type Fill = { order_id: number; fee: string; pnl: string; quantity: string; price: string };
const portfolio = async () => (await h.read('portfolio')) as Portfolio;
const reads = async (iid: number) => {
  const instruments = (await h.read('instruments')) as Instrument[];
  const fees = (await h.read('fees')) as { fee_schedule: { taker_fee_rate: string; maker_fee_rate: string }[] };
  const [config] = (await h.read('config', { instrument_id: iid })) as { leverage: number }[];
  const f = fees.fee_schedule[0];
  if (!f || !config) throw new Error('reads');
  const instrument = instruments.find((i) => i.instrument_id === iid);
  if (!instrument) throw new Error('instrument');
  return {
    instrument,
    book: (await h.read('book', { instrument_id: iid, depth: 10 })) as Book,
    portfolio: await portfolio(),
    fees: { taker: f.taker_fee_rate, maker: f.maker_fee_rate },
    leverage: config.leverage,
  };
};
/** A protected market order item: IOC at the best level ± 1 % on the tick. */
const market = async (
  iid: number,
  buy: boolean,
  qty: string,
  extra: Partial<PerpsOrderInput> = {},
): Promise<PerpsOrderInput> => {
  const r = await reads(iid);
  const best = (buy ? r.book.asks : r.book.bids)[0]?.[0] ?? '0';
  return {
    iid,
    buy,
    qty,
    p: estimateMarket([[best, '1']], buy, '1', 100, r.instrument.tick_size ?? '0.01')?.limit ?? best,
    tif: 'ioc',
    ...extra,
  };
};
const near = (got: string | number | null | undefined, want: string | number, rel = 0.001) => {
  const g = Number(got);
  const w = Number(want);
  expect(Math.abs(g - w), `${g} vs ${w}`).toBeLessThanOrEqual(Math.max(Math.abs(w) * rel, 0.01));
};

/**
 * Summarises `order` from the venue's reads, sends it, and checks the summary against the venue's
 * records: position size (exact), entry and liquidation price, the fills' fee and realised PnL, and the
 * change of withdrawable = margin added − margin released + fee − realised PnL.
 */
async function check(
  order: PerpsOrderInput,
  opts: { resting?: boolean } = {},
): Promise<NonNullable<ReturnType<typeof summarizeOrder>>> {
  const r = await reads(order.iid);
  const s = summarizeOrder(order, r);
  if (!s) throw new Error('no summary');
  const before = r.portfolio;
  const pos0 = before.positions.find((p) => p.instrument_id === order.iid);
  const [ack] = (await h.send(h.proxy, createOrders({ orders: [order] }))) as { oid: number }[];
  const after = await portfolio();
  const pos1 = after.positions.find((p) => p.instrument_id === order.iid);
  const fills = ((await h.read('fills', { instrument_id: order.iid })) as { data: Fill[] }).data.filter(
    (f) => f.order_id === ack?.oid,
  );
  if (opts.resting) {
    expect(s.rests).toBe(true);
    expect(fills).toHaveLength(0);
    near(Number(before.withdrawable) - Number(after.withdrawable), s.preview.marginRequired);
    return s;
  }
  expect(pos1?.size ?? '0').toBe(s.preview.newSize);
  if (pos1) near(pos1.entry_price, s.preview.newEntry);
  const fee = fills.reduce((a, f) => a + Number(f.fee), 0);
  near(fee, s.preview.fee);
  near(
    fills.reduce((a, f) => a + Number(f.pnl), 0),
    s.preview.realizedPnl,
  );
  if (s.preview.liquidationPrice === null) expect(Number(pos1?.liquidation_price ?? 0)).toBe(0);
  else near(pos1?.liquidation_price ?? 0, s.preview.liquidationPrice);
  // Margin released by the reduced part (at the old entry), from the before read.
  const closing =
    pos0 && Number(pos0.size) > 0 !== order.buy ? Math.min(Number(order.qty), Math.abs(Number(pos0.size))) : 0;
  const released = pos0 ? (closing * Number(pos0.entry_price)) / r.leverage : 0;
  near(
    Number(before.withdrawable) - Number(after.withdrawable),
    Number(s.preview.marginRequired) - released + Number(s.preview.fee) - Number(s.preview.realizedPnl),
  );
  return s;
}

describe('the summary before the click is what the venue records after it', () => {
  it('a market long walking levels: average entry, fee, margin, liquidation', async () => {
    const s = await check(await market(1, true, '0.6'));
    expect(Number(s.slippageBps)).toBeGreaterThan(0); // 0.25 + 0.25 + 0.1 over three levels
  });

  it('adding to it', async () => {
    await check(await market(1, true, '0.2'));
  });

  it('reducing it realises PnL and needs no margin', async () => {
    const s = await check(await market(1, false, '0.3'));
    expect(s.preview.marginRequired).toBe('0');
  });

  it('a flip that ends smaller than it started takes the margin of the new side', async () => {
    await check(await market(2, false, '5'));
    const s = await check(await market(2, true, '8'));
    expect(s.preview.flips).toBe(true);
    expect(Number(s.preview.marginRequired)).toBeGreaterThan(0);
  });

  it('a short at high leverage with another position open', async () => {
    await h.send(h.proxy, updateLeverage({ iid: 3, lev: 20, cross: true }));
    const s = await check(await market(3, false, '100'));
    expect(s.preview.liquidationPrice).not.toBeNull();
  });

  it('a limit at low leverage rests and holds its margin', async () => {
    await h.send(h.proxy, updateLeverage({ iid: 2, lev: 2, cross: true }));
    await check({ iid: 2, buy: true, qty: '1', p: '3000', tif: 'gtc' }, { resting: true });
  });

  it('post-only rests at the maker rate', async () => {
    const s = await check({ iid: 1, buy: false, qty: '0.01', p: '70000', tif: 'gtc', po: true }, { resting: true });
    expect(s.preview).toMatchObject({ feeRate: '0.0001', feeUpTo: false });
  });

  it('the 100 % preset at the protected limit is accepted for margin', async () => {
    const r = await reads(3);
    const item = await market(3, true, '0.1');
    const qty = maxOrderSize({
      withdrawable: r.portfolio.withdrawable,
      price: item.p ?? '0',
      leverage: r.leverage,
      feeRate: r.fees.taker,
      lot: '0.1',
    });
    const s = summarizeOrder({ ...item, qty }, r);
    expect(s?.preview.insufficientMargin).toBe(false);
    const more = summarizeOrder({ ...item, qty: String(Number(qty) + 5) }, r);
    expect(more?.preview.insufficientMargin).toBe(true);
    await expect(h.send(h.proxy, createOrders({ orders: [{ ...item, qty }] }))).resolves.toBeTruthy();
  });

  it('closing a position reduce-only with the cap', async () => {
    const pos = (await portfolio()).positions.find((p) => p.instrument_id === 2);
    if (!pos) throw new Error('no ETH position');
    const size = pos.size.replace('-', '');
    const s = await check(await market(2, pos.size.startsWith('-'), size, { ro: true }));
    expect(s.preview.newSize).toBe('0');
    expect(s.preview.marginCheck).toBe('0');
  });
});
