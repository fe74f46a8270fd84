import { describe, expect, it } from 'vitest';
import { contractsForUsdc, liquidationPriceFor, maxOrderSize, positionAfter, previewOrder } from './risk';

const base = { leverage: 10, feeRate: '0.0005', markPrice: '65000', maxLeverage: 50, accountValue: '100000', withdrawable: '100000' };

describe('previewOrder', () => {
  it('a first long: notional, margin, fee and a liquidation price where equity meets maintenance', () => {
    const p = previewOrder({ ...base, buy: true, qty: '2', price: '65000' });
    expect(p).toMatchObject({ notional: '130000', marginRequired: '13000', fee: '65', newSize: '2', newEntry: '65000', grows: true, flips: false, insufficientMargin: false });
    // R = 100000 − 65 = 99935; P = (2·65000 − 99935)·100 / (2·100 − 2) = 15184.34…
    expect(p.liquidationPrice).toBe('15184.34');
  });

  it('a short has its liquidation price above the entry', () => {
    const p = previewOrder({ ...base, accountValue: '10000', withdrawable: '10000', buy: false, qty: '1', price: '65000' });
    expect(Number(p.liquidationPrice)).toBeGreaterThan(65000);
  });

  it('no liquidation price when the collateral covers the whole position', () => {
    expect(previewOrder({ ...base, buy: true, qty: '0.1', price: '65000' }).liquidationPrice).toBeNull();
  });

  it('flags a flip and needs margin only for the new side; a pure reduction needs none', () => {
    const position = { size: '1', entryPrice: '60000' };
    const flip = previewOrder({ ...base, buy: false, qty: '3', price: '65000', position });
    expect(flip).toMatchObject({ flips: true, grows: true, newSize: '-2', newEntry: '65000', marginRequired: '13000' });
    const reduce = previewOrder({ ...base, buy: false, qty: '0.5', price: '65000', position });
    expect(reduce).toMatchObject({ flips: false, grows: false, newSize: '0.5', newEntry: '60000', marginRequired: '0' });
  });

  it('says when the margin and fee exceed the free collateral', () => {
    expect(previewOrder({ ...base, withdrawable: '100', buy: true, qty: '1', price: '65000' }).insufficientMargin).toBe(true);
  });

  it('never uses binary floats: 0.1 + 0.2 style sizes stay exact', () => {
    expect(previewOrder({ ...base, buy: true, qty: '0.3', price: '0.1', markPrice: '0.1' }).notional).toBe('0.03');
  });
});

describe('sizes', () => {
  it('max size at 100% and 25% of the free collateral, rounded down to the lot', () => {
    // per contract: 65000/10 + 65000·0.0005 = 6532.5 → 100000 / 6532.5 = 15.308… → 15.308 at lot 0.001
    expect(maxOrderSize({ withdrawable: '100000', price: '65000', leverage: 10, feeRate: '0.0005', lot: '0.001' })).toBe('15.308');
    expect(maxOrderSize({ withdrawable: '100000', price: '65000', leverage: 10, feeRate: '0.0005', lot: '0.001', fraction: '0.25' })).toBe('3.827');
  });

  it('converts USDC to contracts at the lot', () => {
    expect(contractsForUsdc('1000', '3120.5', '0.01')).toBe('0.32');
  });

  it('positionAfter averages on growth, keeps entry on reduction, takes the price on a flip', () => {
    expect(positionAfter({ size: '1', entryPrice: '100' }, 100_000_000n, 200_00000000n)).toEqual({ size: 200_000_000n, entry: 150_00000000n });
    expect(liquidationPriceFor(0n, 0n, 0n, 10)).toBeNull();
  });
});
