import { describe, expect, it } from 'vitest';
import { orderRequestAmounts, toMarketOrderAmounts, toOrderAmounts } from './amounts';
import { InvalidFieldError } from '../validation';

describe('toOrderAmounts', () => {
  it('BUY pays size × price collateral for size tokens (6-decimal base units)', () => {
    expect(toOrderAmounts({ side: 'BUY', price: '0.56', size: '21.04', tickSize: '0.01' })).toEqual({
      makerAmount: '11782400',
      takerAmount: '21040000',
      price: '0.56',
      size: '21.04',
    });
  });

  it('SELL gives size tokens for size × price collateral', () => {
    expect(toOrderAmounts({ side: 'SELL', price: '0.56', size: '21.04', tickSize: '0.01' })).toMatchObject({
      makerAmount: '21040000',
      takerAmount: '11782400',
    });
  });

  it('rounds the size down to 2 decimals and the price to the nearest tick', () => {
    expect(toOrderAmounts({ side: 'BUY', price: '0.5649', size: '10.129', tickSize: '0.01' })).toEqual({
      makerAmount: '5667200', // 10.12 × 0.56 = 5.6672
      takerAmount: '10120000',
      price: '0.56',
      size: '10.12',
    });
    expect(toOrderAmounts({ side: 'BUY', price: '0.565', size: '1', tickSize: '0.01' }).price).toBe('0.57');
  });

  it.each([
    ['0.1', '0.3', '3', '900000'],
    ['0.01', '0.37', '3', '1110000'],
    ['0.001', '0.123', '7.77', '955710'],
    ['0.0001', '0.0123', '7.77', '95571'],
    ['0.005', '0.125', '2', '250000'],
    ['0.0025', '0.0125', '2', '25000'],
  ])('tick %s: price %s × size %s = %s base units, exact', (tickSize, price, size, maker) => {
    expect(toOrderAmounts({ side: 'BUY', price, size, tickSize }).makerAmount).toBe(maker);
  });

  it('snaps to multiples of a non-decimal tick (0.005)', () => {
    expect(toOrderAmounts({ side: 'BUY', price: '0.123', size: '1', tickSize: '0.005' }).price).toBe('0.125');
    expect(toOrderAmounts({ side: 'BUY', price: '0.122', size: '1', tickSize: '0.005' }).price).toBe('0.120');
  });

  it('is exact where binary floats are not (0.1 × 3 and 0.29 × 100)', () => {
    expect(toOrderAmounts({ side: 'BUY', price: '0.1', size: '3', tickSize: '0.1' }).makerAmount).toBe('300000');
    expect(toOrderAmounts({ side: 'BUY', price: '0.29', size: '100', tickSize: '0.01' }).makerAmount).toBe('29000000');
  });

  it.each([
    [{ price: '0.001' }, 'price'],
    [{ price: '1' }, 'price'],
    [{ price: '0.995' }, 'price'],
    [{ size: '0.001' }, 'size'],
    [{ size: '1e2' }, 'size'],
    [{ price: 0.5 }, 'price'],
    [{ tickSize: '0.00001' }, 'tickSize'],
    [{ tickSize: '1' }, 'tickSize'],
    [{ side: 'buy' }, 'side'],
  ])('rejects %o naming %s', (patch, field) => {
    try {
      toOrderAmounts({ side: 'BUY', price: '0.5', size: '10', tickSize: '0.01', ...(patch as object) } as never);
      throw new Error('expected a rejection');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidFieldError);
      expect((err as InvalidFieldError).field).toBe(field);
    }
  });
});

describe('toMarketOrderAmounts', () => {
  it('BUY spends collateral, rounds the price down and truncates the shares', () => {
    expect(toMarketOrderAmounts({ side: 'BUY', amount: '10', price: '0.339', tickSize: '0.01' })).toEqual({
      makerAmount: '10000000',
      takerAmount: '30303000', // 10 / 0.33 = 30.3030… → 30.3030
      price: '0.33',
      size: '30.3030',
    });
  });

  it('SELL sells shares for shares × price', () => {
    expect(toMarketOrderAmounts({ side: 'SELL', amount: '5.555', price: '0.5', tickSize: '0.1' })).toMatchObject({
      makerAmount: '5550000',
      takerAmount: '2775000',
    });
  });
});

describe('orderRequestAmounts', () => {
  it('rounds a market-style SELL price down to the tick, like the official client (PROTOCOL.md §3.4)', () => {
    expect(
      orderRequestAmounts({ side: 'SELL', price: '0.615', size: '12.5', orderType: 'FAK', tickSize: '0.01' }),
    ).toMatchObject({ makerAmount: '12500000', takerAmount: '7625000', price: '0.61' });
    // A limit SELL at the same price still rounds to the nearest tick.
    expect(
      orderRequestAmounts({ side: 'SELL', price: '0.615', size: '12.5', orderType: 'GTC', tickSize: '0.01' }),
    ).toMatchObject({ takerAmount: '7750000', price: '0.62' });
  });
});

describe('a price outside [tick, 1 − tick] as asked is refused with the range named, never rounded into it', () => {
  it.each([
    [
      'a limit SELL at 0.93 on a 0.1 tick',
      () => toOrderAmounts({ side: 'SELL', price: '0.93', size: '10', tickSize: '0.1' }),
      '0.1 and 0.9',
    ],
    [
      'a limit BUY at 0.04 on a 0.1 tick',
      () => toOrderAmounts({ side: 'BUY', price: '0.04', size: '10', tickSize: '0.1' }),
      '0.1 and 0.9',
    ],
    [
      'a market BUY at 0.999 on a 0.01 tick',
      () => toMarketOrderAmounts({ side: 'BUY', amount: '10', price: '0.999', tickSize: '0.01' }),
      '0.01 and 0.99',
    ],
    [
      'a market SELL at 0.0099 on a 0.01 tick',
      () => toMarketOrderAmounts({ side: 'SELL', amount: '10', price: '0.0099', tickSize: '0.01' }),
      '0.01 and 0.99',
    ],
  ])('%s', (_name, build, range) => {
    expect(build).toThrow(expect.objectContaining({ field: 'price' }));
    expect(build).toThrow(new RegExp(`between ${range.replace(/\./g, '\\.')}`));
  });

  it("the range's own ends, and an in-range price off the tick, are signed (rounded to the tick)", () => {
    expect(toOrderAmounts({ side: 'SELL', price: '0.9', size: '10', tickSize: '0.1' }).price).toBe('0.9');
    expect(toOrderAmounts({ side: 'BUY', price: '0.01', size: '10', tickSize: '0.01' }).price).toBe('0.01');
    expect(toOrderAmounts({ side: 'BUY', price: '0.987', size: '10', tickSize: '0.01' }).price).toBe('0.99');
    expect(toMarketOrderAmounts({ side: 'BUY', amount: '10', price: '0.989', tickSize: '0.01' }).price).toBe('0.98');
  });
});
