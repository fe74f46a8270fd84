import { describe, expect, it } from 'vitest';
import { estimateClobMarket, protectedClobPrice } from './market';

const asks = [
  ['0.5', '100'],
  ['0.51', '100'],
  ['0.6', '1000'],
] as const;

describe('protected order-book market orders', () => {
  it('prices a BUY at the best ask + cap on the tick, a SELL at the best bid − cap, inside [tick, 1 − tick]', () => {
    expect(protectedClobPrice(asks, 'BUY', 300, '0.01')).toBe('0.51');
    expect(protectedClobPrice([['0.5', '1']], 'SELL', 300, '0.01')).toBe('0.49');
    expect(protectedClobPrice([['0.99', '1']], 'BUY', 500, '0.01')).toBe('0.99');
    expect(protectedClobPrice([['0.01', '1']], 'SELL', 500, '0.01')).toBe('0.01');
    expect(protectedClobPrice([], 'BUY', 100, '0.01')).toBeUndefined();
  });

  it('estimates average price and slippage within the limit; a BUY is sized in USDC', () => {
    const e = estimateClobMarket(asks, 'BUY', '100', '0.51');
    // 50 USDC buys 100 at 0.5, 50 more buys 98.04 at 0.51 → avg ≈ 0.505
    expect(e).toMatchObject({ avgPrice: '0.505', complete: true, usdc: '100' });
    // Sized by collateral: more shares than the 196.07 the order signs for at the 0.51 limit.
    expect(Number(e.shares)).toBeCloseTo(198.039215, 5);
    expect(Number(e.slippageBps)).toBeCloseTo(99, 0);
    const thin = estimateClobMarket(asks, 'BUY', '200', '0.51');
    expect(thin).toMatchObject({ usdc: '101', complete: false });
    expect(
      estimateClobMarket(
        [
          ['0.4', '10'],
          ['0.39', '10'],
        ],
        'SELL',
        '15',
        '0.39',
      ),
    ).toMatchObject({ shares: '15', usdc: '5.95', complete: true });
  });
});
