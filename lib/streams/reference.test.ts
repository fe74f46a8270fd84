/**
 * The market channel's book judges a site's covered order-book order only once the `PONG` of a `PING` sent
 * after the order arrived came: every change the venue sent before it read that `PING` is then in the
 * book. Live, the token dumped on this connection and two sides, too; otherwise (or when the `PONG` is
 * late) it answers nothing and the REST reads judge the order. The perps public stream judges with the
 * pushed mark borne out by the pushed best bid and ask.
 */
import { describe, expect, it, vi } from 'vitest';
import { ClobStreamReference, PerpsStreamReference, STREAM_REF_WAIT_MS } from './reference';
import type { ClobStreamEvent } from './clob';
import type { PerpsStreamEvent } from './perps-frames';

const T = '123456';

const dump = (bid: string, ask: string): ClobStreamEvent => ({
  kind: 'book',
  tokenId: T,
  market: '0xm',
  bids: [[bid, '100']],
  asks: [[ask, '100']],
  at: 0,
});
const change = (side: 'BUY' | 'SELL', price: string, size: string): ClobStreamEvent => ({
  kind: 'price_change',
  market: '0xm',
  changes: [{ tokenId: T, side, price, size }],
  at: 0,
});

/** A live reference with T's book dumped; `ping` counts the PINGs it sends (as the channel reports them). */
function setUp() {
  const r = new ClobStreamReference();
  r.connection(true);
  r.event(dump('0.49', '0.51'));
  const sent = { n: 0 };
  const ping = () => (sent.n++, r.pinged(), true);
  return { r, ping, sent };
}

describe("the market channel as a grant's reference price", () => {
  it('judges an order once the PONG of the PING sent for it came, on the book as it then stands', async () => {
    const { r, ping, sent } = setUp();
    const judged = r.judge(T, ping);
    expect(sent.n).toBe(1);
    r.event(change('BUY', '0.50', '10')); // sent by the venue before it read the PING
    r.ponged();
    expect(await judged).toEqual({ price: '0.505', source: 'midpoint' });
  });

  it('a book change or an earlier PONG heard meanwhile does not judge it: only the PONG of its own PING', async () => {
    vi.useFakeTimers();
    try {
      const { r, ping } = setUp();
      r.pinged(); // the channel's own PING, before the order
      const judged = r.judge(T, ping);
      r.event(change('BUY', '0.50', '10'));
      r.ponged(); // answers the earlier PING
      await vi.advanceTimersByTimeAsync(STREAM_REF_WAIT_MS);
      expect(await judged, 'no PONG of its own in time: REST').toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a moved book that was moved back before the PING is judged as it is now', async () => {
    const { r, ping } = setUp();
    r.event(change('BUY', '0.505', '500')); // the site moves the book from its own account…
    r.event(change('BUY', '0.505', '0')); // …and takes it back before its order
    const judged = r.judge(T, ping);
    r.ponged();
    expect((await judged)?.price).toBe('0.5');
  });

  it(
    'nothing is judged while down, before the dump of this ' +
      'connection, with one side, or when the channel cannot ping',
    async () => {
      const { r, ping } = setUp();
      r.connection(false);
      expect(await r.judge(T, ping)).toBeUndefined();
      r.connection(true);
      expect(await r.judge(T, ping), 'no dump yet on this connection').toBeUndefined();
      r.event(dump('0.30', '0.34'));
      const judged = r.judge(T, ping);
      r.ponged();
      expect((await judged)?.price).toBe('0.32');
      r.event(change('SELL', '0.34', '0'));
      const oneSided = r.judge(T, ping);
      r.ponged();
      expect(await oneSided).toBeUndefined();
      expect(await r.judge(T, () => false), 'the channel could not send the PING').toBeUndefined();
    },
  );

  it('a reconnect while an order waits for its PONG leaves it to the REST reads', async () => {
    const { r, ping } = setUp();
    const judged = r.judge(T, ping);
    r.connection(true); // a new socket: the PING was lost with the old one
    r.event(dump('0.49', '0.51'));
    r.pinged();
    r.ponged(); // a PONG on the new socket answers another PING
    expect(await judged).toBeUndefined();
  });

  it('a token no grant covers any more is forgotten', async () => {
    const { r, ping } = setUp();
    r.retain(new Set());
    expect(await r.judge(T, ping)).toBeUndefined();
  });
});

describe("the perps public stream as a grant's reference price", () => {
  const ticker = (mark: string, mid = '0'): PerpsStreamEvent => ({
    kind: 'ticker',
    at: 0,
    ticker: {
      instrument_id: 1,
      mark_price: mark,
      index_price: mark,
      mid_price: mid,
      last_price: mark,
      funding_rate: '0',
    },
  });
  const bbo = (bid: string, ask: string): PerpsStreamEvent => ({
    kind: 'bbo',
    at: 0,
    iid: 1,
    bid: [bid, '1'],
    ask: [ask, '1'],
  });
  const answered = async () => true;
  const L = 'BTC-PERP (#1)';

  it(
    'judges with the pushed mark borne out by the pushed ' + 'best bid and ask, read after the answer to its own ping',
    async () => {
      const r = new PerpsStreamReference();
      r.connection(true);
      r.event(ticker('65000'));
      expect(await r.judge(1, L, answered), 'no best bid / ask yet').toBeUndefined();
      r.event(bbo('64990', '65010'));
      let release!: (x: boolean) => void;
      const judged = r.judge(1, L, () => new Promise<boolean>((res) => (release = res)));
      r.event(ticker('65005')); // pushed before the venue read the ping
      release(true);
      expect(await judged).toEqual({ price: '65005', source: 'mark' });
      r.event(ticker('70000'));
      expect((await r.judge(1, L, answered))?.conflict, 'a mark the book does not bear out').toMatch(/disagree/);
    },
  );

  it(
    'a ping not answered in time, a resync while waiting, ' + 'or a stream down leaves the order to the REST reads',
    async () => {
      vi.useFakeTimers();
      try {
        const r = new PerpsStreamReference();
        r.connection(true);
        r.event(ticker('65000'));
        r.event(bbo('64990', '65010'));
        const late = r.judge(1, L, () => new Promise<boolean>(() => undefined));
        await vi.advanceTimersByTimeAsync(STREAM_REF_WAIT_MS);
        expect(await late).toBeUndefined();
        let release!: (x: boolean) => void;
        const resynced = r.judge(1, L, () => new Promise<boolean>((res) => (release = res)));
        r.connection(true);
        r.event(ticker('65000'));
        r.event(bbo('64990', '65010'));
        release(true);
        expect(await resynced, 'its ping went with the old socket').toBeUndefined();
        r.connection(false);
        expect(await r.judge(1, L, answered)).toBeUndefined();
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it('an instrument no grant covers any more is forgotten: granted again, it waits for its next push', async () => {
    const r = new PerpsStreamReference();
    r.connection(true);
    r.event(ticker('65000'));
    r.event(bbo('64990', '65010'));
    r.retain(new Set());
    expect(await r.judge(1, L, answered)).toBeUndefined();
  });
});
