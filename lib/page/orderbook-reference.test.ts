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

describe("the market channel's reference of an order-book request", () => {
  /** Page reads over a market channel that counts its PINGs and answers `mid` for every token; no REST read. */
  function channel(mid: string) {
    const pings: string[] = [];
    const grantBooks = {
      ref: async (tokenId: string) => (pings.push(tokenId), { price: mid, source: 'midpoint' as const }),
    };
    const service = { reads: { clobMid: () => Promise.reject(new Error('no REST read expected')) } };
    const reads = new PageReads({ service, db: undefined, grantBooks } as unknown as Pick<
      ProviderDeps,
      'service' | 'db' | 'grantBooks'
    >);
    return { reads, pings };
  }

  it('starts as the request arrives, once per token, and the grant check takes that reference', async () => {
    const { reads, pings } = channel('0.500');
    const started = reads.startClobRefs(['1', '2', '1']);
    expect(pings, 'a PING per token named').toEqual(['1', '2']);
    expect((await reads.clobRef('1', started))?.price).toBe('0.500');
    expect((await reads.clobRef('2', started))?.price).toBe('0.500');
    expect(pings, 'the check sent no second PING').toEqual(['1', '2']);
    await reads.clobRef('3', started);
    expect(pings, 'a token the request did not name gets its own PING at the check').toEqual(['1', '2', '3']);
  });
});
