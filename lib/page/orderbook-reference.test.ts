/**
 * The order-book reference price a grant's band is judged against is the venue's midpoint at the check:
 * the midpoint comes from the order book itself, which anyone — the site too, from an account of its
 * own — can move for an instant. A read that settled is not reused for a later order (only checks made
 * while one read is in flight share it), so a midpoint moved for one read does not widen the band of
 * the orders that follow it.
 */
import { describe, expect, it } from 'vitest';
import { PageReads } from './reads';
import type { ProviderDeps } from './context';

/** A venue whose order book for every token is `book` (mid = (bid + ask) / 2), counting the reads. */
function venue(book: { bid: string; ask: string }) {
  const reads = { n: 0 };
  const mid = () => ((Number(book.bid) + Number(book.ask)) / 2).toFixed(3);
  const service = {
    reads: {
      clobMid: async () => (reads.n++, mid()),
      clobTop: async () => ({ bid: book.bid, ask: book.ask }),
    },
  };
  return {
    reads,
    pageReads: new PageReads({ service, db: undefined } as unknown as Pick<ProviderDeps, 'service' | 'db'>),
  };
}

describe('the order-book reference price of a grant check', () => {
  it(
    'a midpoint moved for one read (a bid placed, read, cancelled) is ' +
      'not the reference of the next order, even within the same second',
    async () => {
      const book = { bid: '0.49', ask: '0.51' };
      const { pageReads } = venue(book);
      Object.assign(book, { bid: '0.69', ask: '0.71' }); // moved for an instant
      expect((await pageReads.clobRef('123'))?.price).toBe('0.700');
      Object.assign(book, { bid: '0.49', ask: '0.51' }); // back
      expect((await pageReads.clobRef('123'))?.price, 'the next order is judged against the midpoint now').toBe(
        '0.500',
      );
    },
  );

  it('checks made while one read is in flight share it', async () => {
    const { pageReads, reads } = venue({ bid: '0.49', ask: '0.51' });
    const refs = await Promise.all([pageReads.clobRef('123'), pageReads.clobRef('123'), pageReads.clobRef('123')]);
    expect(refs.map((r) => r?.price)).toEqual(['0.500', '0.500', '0.500']);
    expect(reads.n).toBe(1);
  });
});
