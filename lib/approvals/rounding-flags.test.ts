/**
 * The window's words when rounding to the exchange's step changed an order-book order: every order type,
 * price and size, against the amounts the order signs (`orderRequestAmounts` at the tick reported).
 */
import { describe, expect, it } from 'vitest';
import { clobRoundingFlags } from './rounding-flags';
import { orderRequestAmounts } from '../clob/amounts';
import type { ClobArtifact } from '../signer/artifact';

type AskedClobOrder = { side: 'BUY' | 'SELL'; price: string; size: string; orderType: 'GTC' | 'GTD' | 'FOK' | 'FAK' };

/** An artifact holding the orders as `prepareClob` builds them at `tickSize` (only the fields the flags read). */
function built(asked: readonly AskedClobOrder[], tickSize: string): ClobArtifact {
  return {
    orders: asked.map((o) => {
      const { makerAmount, takerAmount } = orderRequestAmounts({ ...o, tickSize });
      return { tickSize, body: { orderType: o.orderType, order: { side: o.side, makerAmount, takerAmount } } };
    }),
  } as unknown as ClobArtifact;
}

const flagsOf = (o: AskedClobOrder, tick: string) => clobRoundingFlags([o], built([o], tick));

describe('clobRoundingFlags', () => {
  it.each(['GTC', 'GTD', 'FOK', 'FAK'] as const)(
    'a %s order on the tick and at 2 decimals is signed as asked: no flag, either side',
    (orderType) => {
      expect(flagsOf({ side: 'BUY', price: '0.51', size: '10', orderType }, '0.01')).toEqual([]);
      expect(flagsOf({ side: 'SELL', price: '0.51', size: '10.25', orderType }, '0.01')).toEqual([]);
    },
  );

  it.each([
    ['GTC', '0.46'],
    ['GTD', '0.46'],
    ['FOK', '0.54'],
    ['FAK', '0.54'],
  ] as const)(
    'a %s price off the tick the exchange reports is flagged with the price asked, the price signed and the tick',
    (orderType, price) => {
      // Limit orders round to the nearest tick, FOK / FAK down: both sign 0.50 here.
      expect(flagsOf({ side: 'BUY', price, size: '10', orderType }, '0.1')).toEqual([
        `The price asked, ${price}, is signed as 0.50 at the tick 0.1 the exchange reports.`,
      ]);
    },
  );

  it('a FOK SELL price off the tick is flagged with the price the exchange reads (rounded down)', () => {
    expect(flagsOf({ side: 'SELL', price: '0.555', size: '10', orderType: 'FOK' }, '0.01')).toEqual([
      'The price asked, 0.555, is signed as 0.55 at the tick 0.01 the exchange reports.',
    ]);
  });

  it('a size past 2 decimals is flagged: shares for a limit order, USDC for a FOK BUY', () => {
    expect(flagsOf({ side: 'BUY', price: '0.5', size: '10.005', orderType: 'GTC' }, '0.01')).toEqual([
      'The size asked, 10.005, is signed as 10.00 shares (the exchange takes 2 decimals).',
    ]);
    expect(flagsOf({ side: 'BUY', price: '0.5', size: '7.129', orderType: 'FAK' }, '0.01')).toEqual([
      'The size asked, 7.129, is signed as 7.12 USDC (the exchange takes 2 decimals).',
    ]);
  });

  it('in a batch, each flag names its order', () => {
    const asked: AskedClobOrder[] = [
      { side: 'BUY', price: '0.5', size: '10', orderType: 'GTC' },
      { side: 'BUY', price: '0.42', size: '10', orderType: 'GTC' },
    ];
    expect(clobRoundingFlags(asked, built(asked, '0.1'))).toEqual([
      'Order 2: the price asked, 0.42, is signed as 0.40 at the tick 0.1 the exchange reports.',
    ]);
  });
});
