import { describe, expect, it } from 'vitest';
import { clobFee, clobPreview, createClobStore, postResultText } from './clob';
import { fakeCall, FakeFailure } from './testkit';

const account = {
  address: '0x00000000000000000000000000000000000000a1',
  label: '',
  proxies: [],
  hasClobCredentials: true,
};
const market = (n: number) => ({
  question: `Q${n}?`,
  slug: `q${n}`,
  tokenIds: [`${n}1`, `${n}2`],
  outcomes: ['Yes', 'No'],
  negRisk: false,
});
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

/** A data-service position row as `data.portfolio` answers it (token ids are decimal strings). */
const position = (tokenId: string) => ({
  token_id: tokenId,
  title: 'Market',
  outcome: 'Yes',
  current_size: '10',
  avg_price: '0.5',
  current_price: '0.5',
  current_value: '5',
  unrealized_pnl: '0',
});

describe('clobPreview / clobFee', () => {
  it('computes what a BUY pays and its fee on the USDC side', () => {
    const p = clobPreview(BOOK as never, { side: 'BUY', price: '0.5', size: '10', orderType: 'GTC' });
    expect(p.amounts).toMatchObject({ makerAmount: '5000000', takerAmount: '10000000' });
    expect(clobFee(p.amounts!, 'BUY', 100)).toBe('50000');
    expect(clobFee(p.amounts!, 'SELL', 100)).toBe('100000');
  });
  it('names the field of a price above 1, and waits for a book', () => {
    expect(clobPreview(BOOK as never, { side: 'BUY', price: '1.5', size: '10', orderType: 'GTC' }).problem).toMatch(
      /^price: /,
    );
    expect(clobPreview(undefined, { side: 'BUY', price: '0.5', size: '10', orderType: 'GTC' })).toEqual({});
  });
  it('says what happened to each posted order', () => {
    expect(postResultText({ ok: true, orderID: '0x1234567890abcdef', status: 'live' })).toBe(
      'Order 0x12345678… is resting on the book',
    );
    expect(postResultText({ ok: true, orderID: '0x1234567890abcdef', status: 'matched' })).toBe(
      'Order 0x12345678… matched',
    );
    expect(postResultText({ ok: false, error: 'not enough balance' })).toBe('Refused: not enough balance');
  });
});

describe('createClobStore', () => {
  it('pages the catalogue search with its cursor and starts over on a new search', async () => {
    const { call, calls } = fakeCall({
      'catalogue.markets': (p) =>
        p.cursor ? { markets: [market(3)], next_cursor: null } : { markets: [market(1), market(2)], next_cursor: 'c2' },
    });
    const s = createClobStore(account, call);
    await s.search('');
    expect(s.cursor.value).toBe('c2');
    await s.search('', true);
    expect(s.markets.value.map((m) => m.slug)).toEqual(['q1', 'q2', 'q3']);
    expect(s.cursor.value).toBeNull();
    await s.search('btc');
    expect(s.markets.value.map((m) => m.slug)).toEqual(['q1', 'q2']);
    expect(calls.map((c) => c.payload)).toEqual([{}, { cursor: 'c2' }, { q: 'btc' }]);
  });

  it('appends the next page of portfolio positions', async () => {
    const { call } = fakeCall({
      'data.portfolio': (p) => ({
        positions: [position(p.cursor ? '2' : '1')],
        value: '12.5',
        next_cursor: p.cursor ? null : 'n',
      }),
    });
    const s = createClobStore(account, call);
    await s.loadPortfolio();
    await s.loadPortfolio(true);
    expect(s.positions.value.map((p) => p.token_id)).toEqual(['1', '2']);
    expect(s.posCursor.value).toBeNull();
    expect(s.value.value).toBe('12.5');
  });

  it('reads the book of the chosen outcome', async () => {
    const { call, calls } = fakeCall({ 'clob.book': () => BOOK });
    const s = createClobStore(account, call);
    expect(await s.loadBook()).toBeUndefined();
    s.choose(market(7));
    s.outcome.value = 1;
    await s.loadBook();
    expect(calls.at(-1)?.payload).toEqual({ tokenId: '72' });
    expect(s.info.value?.bestAsk).toBe('0.52');
  });

  it('posts an order, shows the answers and re-reads open orders; shows a refusal as the error', async () => {
    let fail = false;
    const { call, calls } = fakeCall({
      'clob.postOrders': () => {
        if (fail) throw new FakeFailure({ name: 'ClobError', shortMessage: 'The exchange is in cancel-only mode.' });
        return [{ ok: true, orderID: '0xabcdef0123456789', status: 'live' }];
      },
      'clob.openOrders': () => ({
        data: [
          {
            id: 'o1',
            status: 'LIVE',
            side: 'BUY',
            price: '0.5',
            original_size: '10',
            size_matched: '0',
            outcome: 'Yes',
            asset_id: '1',
          },
        ],
      }),
      'data.portfolio': () => ({ positions: [], value: null, next_cursor: null }),
      'clob.trades': () => [],
    });
    const s = createClobStore(account, call);
    s.choose(market(1));
    await s.post({ side: 'BUY', price: '0.5', size: '10', orderType: 'GTD', postOnly: true, gtdHours: '2' });
    expect(s.results.value).toEqual(['Order 0xabcdef01… is resting on the book']);
    expect(s.open.value.map((o) => o.id)).toEqual(['o1']);
    const posted = calls.find((c) => c.type === 'clob.postOrders')?.payload as {
      orders: { expiration: number; postOnly: boolean; tokenId: string }[];
    };
    expect(posted.orders[0]).toMatchObject({ tokenId: '11', postOnly: true });
    expect(posted.orders[0]!.expiration - Math.floor(Date.now() / 1000)).toBeGreaterThan(7_190);
    fail = true;
    await s.post({ side: 'BUY', price: '0.5', size: '10', orderType: 'GTC', postOnly: false, gtdHours: '24' });
    expect(s.results.value).toEqual([]);
    expect(s.error.value).toBe('The exchange is in cancel-only mode.');
    expect(s.busy.value).toBe(false);
  });
});

describe('protected order-book market orders', () => {
  it('an FOK without a typed price goes at the best ask + the cap (on the tick), with the estimate shown', async () => {
    const info = {
      tickSize: '0.01',
      minSize: '5',
      negRisk: false,
      bestBid: '0.48',
      bestAsk: '0.5',
      bids: [['0.48', '100']] as [string, string][],
      asks: [
        ['0.5', '100'],
        ['0.52', '100'],
      ] as [string, string][],
      feeRateBps: 0,
    };
    expect(clobPreview(info, { side: 'BUY', price: '', size: '10', orderType: 'FOK' }, 300).price).toBe('0.51');
    // the default 1 % cap on a 0.01 tick: 0.505 rounds down to the best ask itself
    expect(clobPreview(info, { side: 'BUY', price: '', size: '10', orderType: 'FOK' }).price).toBe('0.5');
    expect(clobPreview(info, { side: 'BUY', price: '', size: '10', orderType: 'GTC' }).price).toBeUndefined();
    expect(clobPreview(info, { side: 'SELL', price: '', size: '10', orderType: 'FAK' }, 500).price).toBe('0.46');
    const p = clobPreview(info, { side: 'BUY', price: '', size: '10', orderType: 'FOK' });
    expect(p).toMatchObject({ price: '0.5', estimate: { avgPrice: '0.5', complete: true } });
    expect(clobPreview(info, { side: 'BUY', price: '', size: '80', orderType: 'FOK' }).estimate?.complete).toBe(false);
  });
});
