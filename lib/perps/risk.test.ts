import { describe, expect, it } from 'vitest';
import {
  contractsForUsdc,
  decimalsOf,
  estimateMarket,
  liquidationPriceFor,
  maxOrderSize,
  positionAfter,
  previewOrder,
} from './risk';

const fees = { taker: '0.0005', maker: '0.0001' };
const base = {
  leverage: 10,
  fees,
  liquidity: 'taker' as const,
  markPrice: '65000',
  maxLeverage: 50,
  accountValue: '100000',
  withdrawable: '100000',
};

describe('previewOrder', () => {
  it('a first long: notional, margin, fee and a liquidation price where equity meets maintenance', () => {
    const p = previewOrder({ ...base, buy: true, qty: '2', price: '65000' });
    expect(p).toMatchObject({
      notional: '130000',
      marginRequired: '13000',
      marginCheck: '13000',
      fee: '65',
      newSize: '2',
      newEntry: '65000',
      grows: true,
      flips: false,
      insufficientMargin: false,
      liquidationEstimated: true,
    });
    // R = 100000 − 65 = 99935; P = (2·65000 − 99935) / (2 − 0.01·2) = 15184.34…
    expect(p.liquidationPrice).toBe('15184.35');
  });

  it('a short has its liquidation price above the entry', () => {
    const p = previewOrder({
      ...base,
      accountValue: '10000',
      withdrawable: '10000',
      buy: false,
      qty: '1',
      price: '65000',
    });
    expect(Number(p.liquidationPrice)).toBeGreaterThan(65000);
  });

  it('no liquidation price when the collateral covers the whole position', () => {
    expect(previewOrder({ ...base, buy: true, qty: '0.1', price: '65000' }).liquidationPrice).toBeNull();
  });

  it('a flip that ends smaller than it started needs the margin of the new side', () => {
    // ETH short 5 → buy 8 at 3121.5, 25×: long 3 → 3 × 3121.5 ÷ 25 = 374.58
    const p = previewOrder({
      ...base,
      leverage: 25,
      markPrice: '3121.5',
      buy: true,
      qty: '8',
      price: '3121.5',
      position: { size: '-5', entryPrice: '3100' },
    });
    expect(p).toMatchObject({ flips: true, grows: false, newSize: '3', newEntry: '3121.5', marginRequired: '374.58' });
    // the short's 5 are closed at a loss of 5 × 21.5
    expect(p.realizedPnl).toBe('-107.5');
    // the venue accepts it only with the whole quantity's margin free
    expect(p.marginCheck).toBe('998.88');
  });

  it('a flip that grows needs the whole new side; a reduction needs none and realises PnL', () => {
    const position = { size: '1', entryPrice: '60000' };
    const flip = previewOrder({ ...base, buy: false, qty: '3', price: '65000', position });
    expect(flip).toMatchObject({
      flips: true,
      grows: true,
      newSize: '-2',
      newEntry: '65000',
      marginRequired: '13000',
      realizedPnl: '5000',
    });
    const reduce = previewOrder({ ...base, buy: false, qty: '0.5', price: '65000', position });
    expect(reduce).toMatchObject({
      flips: false,
      grows: false,
      newSize: '0.5',
      newEntry: '60000',
      marginRequired: '0',
      realizedPnl: '2500',
    });
  });

  it('adding averages the entry and needs margin for the added part only', () => {
    const p = previewOrder({
      ...base,
      buy: true,
      qty: '1',
      price: '66000',
      position: { size: '1', entryPrice: '64000' },
    });
    expect(p).toMatchObject({ newSize: '2', newEntry: '65000', marginRequired: '6600', realizedPnl: '0' });
  });

  it("the leverage is the one passed (the venue's), so 5× margin is 4× the 20× figure", () => {
    const at5 = previewOrder({
      ...base,
      leverage: 5,
      buy: true,
      qty: '10',
      price: '150.05',
      markPrice: '150.05',
      maxLeverage: 20,
    });
    expect(at5.marginRequired).toBe('300.1');
  });

  it('a resting limit holds quantity × price ÷ leverage, even one that reduces', () => {
    const p = previewOrder({
      ...base,
      liquidity: 'maker',
      resting: true,
      buy: false,
      qty: '1',
      price: '70000',
      position: { size: '2', entryPrice: '60000' },
    });
    expect(p.marginRequired).toBe('7000');
  });

  it('post-only pays the maker rate; a GTC limit shows "up to" the taker rate', () => {
    const po = previewOrder({ ...base, liquidity: 'maker', buy: true, qty: '1', price: '65000' });
    expect(po).toMatchObject({ fee: '6.5', feeRate: '0.0001', feeUpTo: false });
    const gtc = previewOrder({ ...base, liquidity: 'either', buy: true, qty: '1', price: '65000' });
    expect(gtc).toMatchObject({ fee: '32.5', feeRate: '0.0005', feeUpTo: true });
    expect(previewOrder({ ...base, buy: true, qty: '1', price: '65000' })).toMatchObject({
      feeRate: '0.0005',
      feeUpTo: false,
    });
  });

  it('reduce-only needs no margin, is clamped to the position, and is invalid with nothing to reduce', () => {
    const close = previewOrder({
      ...base,
      withdrawable: '0',
      reduceOnly: true,
      buy: false,
      qty: '5',
      price: '65000',
      position: { size: '2', entryPrice: '60000' },
    });
    expect(close).toMatchObject({
      newSize: '0',
      marginCheck: '0',
      insufficientMargin: false,
      realizedPnl: '10000',
      liquidationPrice: null,
      fee: '65',
    });
    expect(
      previewOrder({
        ...base,
        reduceOnly: true,
        buy: true,
        qty: '1',
        price: '65000',
        position: { size: '2', entryPrice: '60000' },
      }).reduceOnlyInvalid,
    ).toBe(true);
  });

  it('a market order is checked for margin at its protected limit, not the expected price', () => {
    const p = previewOrder({
      ...base,
      withdrawable: '6550',
      buy: true,
      qty: '1',
      price: '65000',
      marginPrice: '65650',
    });
    expect(p).toMatchObject({ marginRequired: '6500', marginCheck: '6565', insufficientMargin: true });
  });

  it("prices come out at the tick's decimals", () => {
    const p = previewOrder({
      ...base,
      priceDecimals: 1,
      accountValue: '10000',
      buy: true,
      qty: '3',
      price: '65005.83333333',
    });
    expect(p.newEntry).toBe('65005.8');
    expect(p.liquidationPrice?.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(1);
    expect(decimalsOf('0.5')).toBe(1);
    expect(decimalsOf('0.001')).toBe(3);
    expect(decimalsOf('1')).toBe(0);
  });

  it("uses the portfolio's maintenance rate when given", () => {
    const a = previewOrder({ ...base, accountValue: '20000', buy: true, qty: '1', price: '65000' });
    const b = previewOrder({
      ...base,
      accountValue: '20000',
      buy: true,
      qty: '1',
      price: '65000',
      maintenanceRate: '0.05',
    });
    expect(Number(b.liquidationPrice)).toBeGreaterThan(Number(a.liquidationPrice));
  });

  it('never uses binary floats: 0.1 + 0.2 style sizes stay exact', () => {
    expect(previewOrder({ ...base, buy: true, qty: '0.3', price: '0.1', markPrice: '0.1' }).notional).toBe('0.03');
  });
});

describe('sizes', () => {
  it('max size at 100% and 25% of the free collateral, rounded down to the lot', () => {
    // per contract: 65000/10 + 65000·0.0005 = 6532.5 → 100000 / 6532.5 = 15.308… → 15.308 at lot 0.001
    expect(
      maxOrderSize({ withdrawable: '100000', price: '65000', leverage: 10, feeRate: '0.0005', lot: '0.001' }),
    ).toBe('15.308');
    expect(
      maxOrderSize({
        withdrawable: '100000',
        price: '65000',
        leverage: 10,
        feeRate: '0.0005',
        lot: '0.001',
        fraction: '0.25',
      }),
    ).toBe('3.827');
  });

  it('the 100 % size passes the margin check at the same margin price', () => {
    for (const [w, px, lev] of [
      ['1234.56', '65650', 10],
      ['999.99', '3152.7', 25],
      ['50', '151.51', 5],
    ] as const) {
      const qty = maxOrderSize({ withdrawable: w, price: px, leverage: lev, feeRate: '0.0005', lot: '0.001' });
      const p = previewOrder({ ...base, withdrawable: w, leverage: lev, buy: true, qty, price: px });
      expect(p.insufficientMargin).toBe(false);
    }
  });

  it('converts USDC to contracts at the lot', () => {
    expect(contractsForUsdc('1000', '3120.5', '0.01')).toBe('0.32');
  });

  it('positionAfter averages on growth, keeps entry on reduction, takes the price on a flip', () => {
    expect(positionAfter({ size: '1', entryPrice: '100' }, 100_000_000n, 200_00000000n)).toEqual({
      size: 200_000_000n,
      entry: 150_00000000n,
    });
    expect(liquidationPriceFor(0n, 0n, 0n, 1_000_000n)).toBeNull();
  });
});

describe('protected market orders', () => {
  const asks = [
    ['100', '1'],
    ['100.5', '1'],
    ['101', '1'],
    ['102', '5'],
  ] as const;
  it('the limit is the reference ± cap on the tick, inside the cap', () => {
    const limit = (ref: string, buy: boolean) => estimateMarket([[ref, '1']], buy, '1', 100, '0.5')?.limit;
    expect(limit('100', true)).toBe('101');
    expect(limit('100.3', true)).toBe('101');
    expect(limit('100.3', false)).toBe('99.5');
  });

  it('walks the visible book within the limit: average, slippage, and what cannot fill', () => {
    const e = estimateMarket(asks, true, '2', 100, '0.25');
    expect(e).toMatchObject({
      limit: '101',
      reference: '100',
      fillable: '2',
      avgPrice: '100.25',
      slippageBps: '25',
      complete: true,
    });
    const thin = estimateMarket(asks, true, '5', 100, '0.25');
    expect(thin).toMatchObject({ fillable: '3', avgPrice: '100.5', complete: false });
    expect(estimateMarket([], true, '1', 100, '0.5')).toBeUndefined();
    // averages come out at the tick's decimals
    expect(estimateMarket(asks, true, '2', 100, '0.5')?.avgPrice).toBe('100.3');
    const sell = estimateMarket(
      [
        ['100', '1'],
        ['99.5', '1'],
        ['98', '9'],
      ],
      false,
      '3',
      100,
      '0.5',
    );
    expect(sell).toMatchObject({ limit: '99', fillable: '2', avgPrice: '99.8', slippageBps: '25', complete: false });
  });
});
