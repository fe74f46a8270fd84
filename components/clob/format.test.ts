import { describe, expect, it } from 'vitest';
import { tradeTime, tradeWords } from './ClobAccount';

describe('tradeTime', () => {
  it('shows a trade time (Unix seconds) as UTC month-day hour:minute', () => {
    expect(tradeTime('1700000000')).toBe('11-14 22:13');
  });
});

describe('tradeWords', () => {
  const t = { id: 'm1', match_time: '1700000000' };
  it('reads the person’s own order in the trade, the exchange’s label beside the token id, and the role', () => {
    expect(
      tradeWords({
        ...t,
        trader_side: 'MAKER',
        own: [{ side: 'SELL', size: '10', price: '0.6', asset_id: '11', outcome: 'Yes' }],
      }),
    ).toBe('11-14 22:13 · Sold 10 “Yes” shares (token 11) at 0.6 · maker');
    expect(
      tradeWords({
        ...t,
        trader_side: 'TAKER',
        own: [{ side: 'BUY', size: '5', price: '0.4', asset_id: '12', outcome: '' }],
      }),
    ).toBe('11-14 22:13 · Bought 5 shares of token 12 at 0.4 · taker');
  });

  it('a trade naming none of the person’s orders says so, with no figures', () => {
    expect(tradeWords({ ...t, trader_side: 'MAKER', own: [] })).toBe(
      '11-14 22:13 · maker: the exchange named none of your orders in this trade',
    );
  });
});
