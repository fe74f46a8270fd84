/**
 * The popup's order-book store fed by the background's pushes: the user channel's order and
 * trade events change the open orders and trades with no REST read, the market channel's book of the
 * shown token changes the ladder, another account's push changes nothing, and a REST read of the open
 * orders that answers after a newer pushed event keeps the event's state (the snapshot race).
 */
import { describe, expect, it } from 'vitest';
import { createClobStore } from './clob';
import { fakeCall } from './testkit';

const ACCOUNT = '0x00000000000000000000000000000000000000a1';
const account = { address: ACCOUNT, label: '', proxies: [], hasClobCredentials: true };
const MARKET = { question: 'Q?', slug: 'q', tokenIds: ['11', '12'], outcomes: ['Yes', 'No'], negRisk: false };
const BOOK = {
  tickSize: '0.01',
  minSize: '5',
  negRisk: false,
  bestBid: '0.48',
  bestAsk: '0.52',
  bids: [['0.48', '100']],
  asks: [['0.52', '100']],
  feeRateBps: 100,
};
const row = (id: string, status: string) => ({
  id,
  status,
  side: 'BUY',
  price: '0.5',
  original_size: '10',
  size_matched: status === 'MATCHED' ? '10' : '0',
  outcome: 'Yes',
  asset_id: '11',
});
const trade = {
  id: 't1',
  match_time: '1700000000',
  trader_side: 'MAKER',
  own: [{ order_id: 'o1', side: 'BUY', size: '10', price: '0.5', asset_id: '11', outcome: 'Yes' }],
};

function setup(openOrders: () => Promise<unknown> | unknown = () => ({ data: [] })) {
  const { call, calls } = fakeCall({
    'catalogue.markets': () => ({ markets: [MARKET], next_cursor: null }),
    'clob.openOrders': () => openOrders(),
    'data.portfolio': () => ({ positions: [], value: null, next_cursor: null }),
    'clob.trades': () => [],
    'clob.book': () => BOOK,
    'streams.watch': () => ({ perpsBook: null, perpsAccount: null }),
  });
  let push: (m: unknown) => void = () => undefined;
  const store = createClobStore(account, call, (fn) => {
    push = fn;
    return () => (push = () => undefined);
  });
  const reads = () =>
    calls.filter((c) => c.type === 'clob.openOrders' || c.type === 'clob.trades' || c.type === 'clob.book').length;
  return { store, calls, reads, push: (m: unknown) => push(m) };
}
const settle = () => new Promise((r) => setTimeout(r, 10));

describe('order-book store with the live channels', () => {
  it(
    'shows a pushed order, its fill and the trade, and the ' + 'pushed book of the shown token, without a REST read',
    async () => {
      const s = setup();
      const stop = s.store.start();
      s.store.choose(MARKET);
      await s.store.loadBook();
      await settle();
      expect(s.calls.some((c) => c.type === 'streams.watch' && c.payload.clobToken === '11')).toBe(true);
      const before = s.reads();
      s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'clobOrder', order: row('o1', 'LIVE') } });
      expect(s.store.open.value.map((o) => o.id)).toEqual(['o1']);
      s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'clobOrder', order: row('o1', 'MATCHED') } });
      s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'clobTrade', trade } });
      expect(s.store.open.value).toEqual([]);
      expect(s.store.trades.value.map((t) => t.id)).toEqual(['t1']);
      s.push({
        type: 'streams.market',
        push: {
          kind: 'clobBook',
          tokenId: '11',
          bids: [
            ['0.5', '10'],
            ['0.48', '100'],
          ],
          asks: [['0.52', '100']],
          bestBid: '0.5',
          bestAsk: '0.52',
        },
      });
      expect(s.store.info.value).toMatchObject({
        bestBid: '0.5',
        bids: [
          ['0.5', '10'],
          ['0.48', '100'],
        ],
        tickSize: '0.01',
      });
      s.push({
        type: 'streams.market',
        push: { kind: 'clobBook', tokenId: '12', bids: [], asks: [], bestBid: null, bestAsk: null },
      });
      s.push({
        type: 'streams.push',
        account: '0x00000000000000000000000000000000000000b2',
        push: { kind: 'clobOrder', order: row('x', 'LIVE') },
      });
      expect(s.store.info.value?.bestBid).toBe('0.5');
      expect(s.store.open.value).toEqual([]);
      expect(s.reads()).toBe(before);
      stop();
    },
  );

  it('a REST read of the open orders answered after a newer pushed event does not put the order back', async () => {
    let answer: (v: unknown) => void = () => undefined;
    const s = setup(() => new Promise((r) => (answer = r)));
    s.store.start();
    await settle();
    answer({ data: [] }); // the start-up read
    const reading = s.store.loadOpen();
    await settle();
    // The order filled while the read was on its way; the read still lists it as live.
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'clobOrder', order: row('o1', 'MATCHED') } });
    answer({ data: [row('o1', 'LIVE'), row('o2', 'LIVE')] });
    await reading;
    expect(s.store.open.value.map((o) => o.id)).toEqual(['o2']);
  });
});
