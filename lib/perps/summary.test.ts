/**
 * `summarizeOrder` on crafted reads: a crossing GTC limit larger than the visible book within its limit
 * is priced at the book for the part that fills now and at its limit for the rest; every figure formats
 * without overflow or exponent notation.
 */
import { describe, expect, it } from 'vitest';
import { summarizeOrder } from './summary';
import type { Book, Instrument, Portfolio } from './wire';

const instrument = {
  instrument_id: 1,
  symbol: 'BTC-PERP',
  price_decimals: 1,
  quantity_decimals: 3,
  max_leverage: 20,
  tick_size: '0.5',
  lot_size: '0.001',
} as unknown as Instrument;
const flat = {
  positions: [],
  margin: { total_account_value: '100000' },
  withdrawable: '100000',
} as unknown as Portfolio;
const fees = { taker: '0.0005', maker: '0.0002' };
const thin = {
  bids: [['49990', '0.1']],
  asks: [
    ['50000', '0.1'],
    ['50010', '0.1'],
  ],
} as unknown as Book;
const sum = (o: object, book: Book = thin, portfolio: Portfolio = flat) =>
  summarizeOrder({ iid: 1, ...o } as never, { instrument, book, portfolio, fees, leverage: 10 });

describe('summarizeOrder: a crossing GTC limit the visible book fills in part', () => {
  it('a buy prices what fills now at the book and the rest at its limit, for every number', () => {
    const s = sum({ buy: true, qty: '1', p: '500000', tif: 'gtc' })!;
    // 0.1 @ 50 000 + 0.1 @ 50 010 now; 0.8 rests at 500 000.
    expect(s).toMatchObject({
      rests: false,
      fillable: '0.2',
      avgPrice: '50005',
      slippageBps: '1',
      rest: { qty: '0.8', price: '500000' },
    });
    const worst = 0.1 * 50_000 + 0.1 * 50_010 + 0.8 * 500_000;
    expect(Number(s.preview.notional)).toBeCloseTo(worst, 1);
    expect(Number(s.preview.marginRequired)).toBeCloseTo(worst / 10, 1);
    expect(s.preview).toMatchObject({ feeRate: '0.0005', feeUpTo: true, newSize: '1', marginCheck: '50000' });
    expect(Number(s.preview.fee)).toBeCloseTo(worst * 0.0005, 3);
    expect(Number(s.preview.newEntry)).toBeCloseTo(worst, 0);
    // A long entered at the worst price liquidates far above the visible book.
    expect(Number(s.preview.liquidationPrice)).toBeGreaterThan(300_000);
  });

  it('a sell prices the rest at its (low) limit', () => {
    const s = sum({ buy: false, qty: '1', p: '1000', tif: 'gtc' })!;
    expect(s).toMatchObject({
      fillable: '0.1',
      avgPrice: '49990',
      rest: { qty: '0.9', price: '1000' },
      preview: { newSize: '-1', feeUpTo: true },
    });
    expect(Number(s.preview.notional)).toBeCloseTo(0.1 * 49_990 + 0.9 * 1000, 1);
  });

  it('only the levels within the limit fill now; the rest rests at the limit, not at a level beyond it', () => {
    const s = sum({ buy: true, qty: '1', p: '50005', tif: 'gtc' })!;
    expect(s).toMatchObject({ fillable: '0.1', avgPrice: '50000', rest: { qty: '0.9', price: '50005' } });
    expect(Number(s.preview.notional)).toBeCloseTo(0.1 * 50_000 + 0.9 * 50_005, 1);
  });

  it('a reduction that flips takes the new side at the resting limit', () => {
    const portfolio = {
      ...flat,
      positions: [
        { instrument_id: 1, size: '0.5', entry_price: '40000', position_value: '25000', maintenance_margin: '625' },
      ],
    } as unknown as Portfolio;
    const s = sum({ buy: false, qty: '1', p: '1000', tif: 'gtc' }, thin, portfolio)!;
    // 0.1 closes at 49 990, 0.4 more closes at 1 000 (the rest), 0.5 opens short at 1 000.
    expect(s.preview).toMatchObject({ flips: true, newSize: '-0.5', newEntry: '1000' });
    expect(Number(s.preview.realizedPnl)).toBeCloseTo(0.1 * 9_990 + 0.4 * (1000 - 40_000), 1);
  });

  it('unchanged: a crossing limit the book fills whole, an IOC (the rest is cancelled), a resting limit', () => {
    const whole = sum({ buy: true, qty: '0.2', p: '500000', tif: 'gtc' })!;
    expect(whole).toMatchObject({ fillable: '0.2', rest: null, preview: { notional: '10001', newEntry: '50005' } });
    const ioc = sum({ buy: true, qty: '1', p: '500000', tif: 'ioc' })!;
    expect(ioc).toMatchObject({ fillable: '0.2', rest: null, preview: { notional: '50005', feeUpTo: false } });
    const resting = sum({ buy: true, qty: '1', p: '40000', tif: 'gtc' })!;
    expect(resting).toMatchObject({ rests: true, rest: null, preview: { notional: '40000', marginRequired: '4000' } });
  });
});

describe('summarizeOrder: the worst case a person is shown', () => {
  it(
    'a crossing GTC buy (limit 10× the book) on a thin book: the notional counts the ' +
      "unfilled rest at the limit it rests / fills at, not at the visible book's price",
    () => {
      const book = { bids: [['49990', '1']], asks: [['50000', '0.1']] } as unknown as Book;
      const s = summarizeOrder({ iid: 1, buy: true, qty: '1', p: '500000', tif: 'gtc' } as never, {
        instrument,
        book,
        portfolio: flat,
        fees,
        leverage: 10,
      });
      expect(s).toBeDefined();
      // 0.1 fills now near 50 000; the other 0.9 rests at 500 000 and fills there against any seller: at most 0.1×50
      // 000 + 0.9×500 000.
      const worst = 0.1 * 50_000 + 0.9 * 500_000;
      expect(
        Number(s!.preview.notional),
        `notional shown ${s!.preview.notional} USDC, the order can cost ${worst}`,
      ).toBeGreaterThanOrEqual(worst * 0.99);
    },
  );

  it('a huge quantity formats without overflow or exponent notation', () => {
    const book = { bids: [['49990', '1']], asks: [['50000', '1']] } as unknown as Book;
    const s = summarizeOrder(
      { iid: 1, buy: true, qty: '123456789012345.678', p: '49000', tif: 'gtc', po: true } as never,
      { instrument, book, portfolio: flat, fees, leverage: 10 },
    );
    expect(s).toBeDefined();
    for (const x of [s!.preview.notional, s!.preview.marginRequired, s!.preview.fee])
      expect(x).not.toMatch(/e|Infinity|NaN/i);
    expect(Number(s!.preview.notional)).toBeGreaterThan(6e18);
  });
});
