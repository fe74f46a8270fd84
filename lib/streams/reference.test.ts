/**
 * The market channel's book judges a site's covered order-book order only when it has provably caught up
 * to the site's previous answer: live, the token dumped on this connection, a book change or the `PONG`
 * of a `PING` sent after that answer heard since, a frame within `STREAM_REF_FRESH_MS`, two sides.
 * Otherwise it answers nothing and the REST reads judge the order.
 */
import { describe, expect, it, vi } from 'vitest';
import { ClobStreamReference, PerpsStreamReference, STREAM_REF_FRESH_MS, STREAM_REF_WAIT_MS } from './reference';
import type { ClobStreamEvent } from './clob';
import type { PerpsStreamEvent } from './perps-frames';

const T = '123456';
const SITE = 'https://trade.example';
const OTHER = 'https://other.example';

const dump = (bid: string, ask: string): ClobStreamEvent => ({ kind: 'book', tokenId: T, market: '0xm', bids: [[bid, '100']], asks: [[ask, '100']], at: 0 }) as ClobStreamEvent;
const change = (side: 'BUY' | 'SELL', price: string, size: string): ClobStreamEvent => ({ kind: 'price_change', market: '0xm', changes: [{ tokenId: T, side, price, size }], at: 0 }) as ClobStreamEvent;

/** A live reference with T's book dumped and SITE's previous order answered (its PING sent, not answered yet). */
function setUp() {
  const clock = { now: 1_000 };
  const r = new ClobStreamReference(() => clock.now);
  r.connection(true);
  r.event(dump('0.49', '0.51'));
  r.answered(SITE);
  r.pinged();
  return { r, clock };
}

describe('the market channel as a grant\'s reference price', () => {
  it('judges nothing until a frame is heard after the site\'s previous answer: its PING\'s PONG, or a book change', () => {
    const { r } = setUp();
    expect(r.ref(T, SITE), 'nothing heard since the answer').toBeUndefined();
    r.ponged();
    expect(r.ref(T, SITE)).toEqual({ price: '0.5', source: 'midpoint' });
    r.answered(SITE); // the next order was answered: its own PING not sent yet
    r.event(change('BUY', '0.50', '10'));
    expect(r.ref(T, SITE), 'a book change heard since the answer').toEqual({ price: '0.505', source: 'midpoint' });
  });

  it('a PONG answering a PING sent before the answer does not count', () => {
    const clock = { now: 1_000 };
    const r = new ClobStreamReference(() => clock.now);
    r.connection(true);
    r.event(dump('0.49', '0.51'));
    r.pinged(); // the channel's own ping, before the answer
    r.answered(SITE);
    r.pinged(); // the answer's ping
    r.ponged(); // answers the first
    expect(r.ref(T, SITE)).toBeUndefined();
    r.ponged(); // answers the answer's ping
    expect(r.ref(T, SITE)?.price).toBe('0.5');
  });

  it('an origin with no answer yet is judged over REST; marks are per origin', () => {
    const { r } = setUp();
    r.ponged();
    expect(r.ref(T, OTHER)).toBeUndefined();
    expect(r.ref(T, SITE)?.price).toBe('0.5');
  });

  it('a reconnect forgets the books and the marks; a token not dumped on this connection is judged over REST', () => {
    const { r } = setUp();
    r.ponged();
    r.connection(false);
    expect(r.ref(T, SITE)).toBeUndefined();
    r.connection(true);
    r.answered(SITE);
    r.pinged();
    r.ponged();
    expect(r.ref(T, SITE), 'no dump yet on this connection').toBeUndefined();
    r.event(dump('0.30', '0.34'));
    expect(r.ref(T, SITE)?.price).toBe('0.32');
  });

  it(`a channel silent for more than ${STREAM_REF_FRESH_MS} ms judges nothing`, () => {
    const { r, clock } = setUp();
    r.ponged();
    clock.now += STREAM_REF_FRESH_MS + 1;
    expect(r.ref(T, SITE)).toBeUndefined();
  });

  it('a book with one side judges nothing; a token no grant covers any more is forgotten', () => {
    const { r } = setUp();
    r.ponged();
    r.event(change('SELL', '0.51', '0'));
    expect(r.ref(T, SITE)).toBeUndefined();
    r.event(change('SELL', '0.52', '5'));
    expect(r.ref(T, SITE)?.price).toBe('0.505');
    r.retain(new Set());
    expect(r.ref(T, SITE)).toBeUndefined();
  });

  it('a book moved for an instant (a bid placed, then cancelled) is the reference only while it stands: the next order is judged on the book as it is', () => {
    const { r } = setUp();
    r.ponged();
    r.event(change('BUY', '0.505', '500'));
    expect(r.ref(T, SITE)?.price).toBe('0.5075');
    r.event(change('BUY', '0.505', '0'));
    expect(r.ref(T, SITE)?.price).toBe('0.5');
  });

  it(`an order that comes before the frame waits for it at most ${STREAM_REF_WAIT_MS} ms, then is judged over REST`, async () => {
    vi.useFakeTimers();
    try {
      const clock = { now: 1_000 };
      const r = new ClobStreamReference(() => clock.now);
      r.connection(true);
      r.event(dump('0.49', '0.51'));
      r.answered(SITE);
      r.pinged();
      const heard = r.next(T, SITE);
      r.ponged();
      expect((await heard)?.price, 'the PONG came within the wait').toBe('0.5');
      r.answered(SITE);
      r.pinged();
      const late = r.next(T, SITE);
      clock.now += STREAM_REF_WAIT_MS;
      await vi.advanceTimersByTimeAsync(STREAM_REF_WAIT_MS);
      expect(await late, 'no frame within the wait').toBeUndefined();
      expect(await r.next(T, OTHER), 'no answer yet for this origin: no wait').toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the perps public stream as a grant\'s reference price', () => {
  const ticker = (mark: string, mid = '0'): PerpsStreamEvent => ({ kind: 'ticker', at: 0, ticker: { instrument_id: 1, mark_price: mark, index_price: mark, mid_price: mid, last_price: mark, funding_rate: '0' } });
  const bbo = (bid: string, ask: string): PerpsStreamEvent => ({ kind: 'bbo', at: 0, iid: 1, bid: [bid, '1'], ask: [ask, '1'] });

  it('judges with the pushed mark borne out by the pushed best bid and ask, once both came on this connection', () => {
    const r = new PerpsStreamReference();
    r.connection(true);
    r.event(ticker('65000'));
    expect(r.ref(1, 'BTC-PERP (#1)'), 'no best bid / ask yet').toBeUndefined();
    r.event(bbo('64990', '65010'));
    expect(r.ref(1, 'BTC-PERP (#1)')).toEqual({ price: '65000', source: 'mark' });
    r.event(ticker('70000'));
    expect(r.ref(1, 'BTC-PERP (#1)')?.conflict, 'a mark the book does not bear out').toMatch(/disagree/);
  });

  it('a reconnect, a resync or a stream down forgets what was pushed', () => {
    const r = new PerpsStreamReference();
    r.connection(true);
    r.event(ticker('65000'));
    r.event(bbo('64990', '65010'));
    r.connection(true); // resynced
    expect(r.ref(1, 'BTC-PERP (#1)')).toBeUndefined();
    r.event(ticker('65000'));
    r.event(bbo('64990', '65010'));
    r.connection(false);
    expect(r.ref(1, 'BTC-PERP (#1)')).toBeUndefined();
  });
});
