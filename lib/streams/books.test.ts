/**
 * What the background keeps between stream events: the order-book books (a dump, then each
 * `price_change` sets one level's total, "0" removes it) and the snapshot race — a REST resync read
 * before a stream event but answered after it must not put the order's status back.
 */
import { describe, expect, it } from 'vitest';
import { ClobBooks, Recency } from './books';

describe('ClobBooks', () => {
  it('keeps a token’s book from its dump and price changes, best first; changes before a dump are ignored', () => {
    const b = new ClobBooks();
    expect(
      b.apply({
        kind: 'price_change',
        at: 1,
        market: 'm',
        changes: [{ tokenId: '1', side: 'BUY', price: '0.4', size: '5' }],
      }),
    ).toEqual([]);
    b.apply({
      kind: 'book',
      at: 1,
      tokenId: '1',
      market: 'm',
      bids: [
        ['0.3', '10'],
        ['0.2', '4'],
      ],
      asks: [['0.6', '3']],
    });
    expect(
      b.apply({
        kind: 'price_change',
        at: 2,
        market: 'm',
        changes: [
          { tokenId: '1', side: 'BUY', price: '0.4', size: '5' },
          { tokenId: '1', side: 'SELL', price: '0.6', size: '0' },
        ],
      }),
    ).toEqual(['1']);
    expect(b.view('1')).toEqual({
      bids: [
        ['0.4', '5'],
        ['0.3', '10'],
        ['0.2', '4'],
      ],
      asks: [],
      bestBid: '0.4',
      bestAsk: null,
    });
    b.retain(new Set());
    expect(b.view('1')).toBeUndefined();
  });
});

describe('Recency (the snapshot race)', () => {
  type O = { id: string; status: string };
  it(
    'a snapshot answered after a newer event keeps the event’s ' +
      'state: a filled order stays gone, a new one stays listed',
    () => {
      const r = new Recency<string, O>();
      r.note('old', { id: 'old', status: 'LIVE' }, true); // before the read: the snapshot wins
      const mark = r.mark();
      r.note('a', { id: 'a', status: 'MATCHED' }, false); // filled while the snapshot was on its way
      r.note('b', { id: 'b', status: 'LIVE' }, true); // placed while the snapshot was on its way
      const snapshot: O[] = [
        { id: 'a', status: 'LIVE' },
        { id: 'old', status: 'LIVE' },
        { id: 'c', status: 'LIVE' },
      ];
      expect(r.merge(snapshot, (o) => o.id, mark)).toEqual([
        { id: 'old', status: 'LIVE' },
        { id: 'c', status: 'LIVE' },
        { id: 'b', status: 'LIVE' },
      ]);
    },
  );
  it('without newer events the snapshot is taken as it is', () => {
    const r = new Recency<string, O>();
    r.note('a', { id: 'a', status: 'MATCHED' }, false);
    expect(r.merge([{ id: 'a', status: 'LIVE' }], (o) => o.id, r.mark())).toEqual([{ id: 'a', status: 'LIVE' }]);
  });
});
