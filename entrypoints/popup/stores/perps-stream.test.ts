/**
 * The popup's perps store fed by the background's stream: while `streams.status` says
 * live, the portfolio and open orders come from pushes and are not polled; pushed orders and fills show
 * at once; another account's or a malformed push changes nothing; when the stream is down polling resumes.
 */
import { describe, expect, it } from 'vitest';
import { createPerpsStore } from './perps';
import { beginFirstWatch } from './first-watch';
import { fakeCall } from './testkit';

const ACCOUNT = '0x00000000000000000000000000000000000000aa';
const OTHER = '0x00000000000000000000000000000000000000bb';
const BTC = { instrument_id: 1, symbol: 'BTC-PERP', price_decimals: 1, quantity_decimals: 3, max_leverage: 50 };
const PORTFOLIO = {
  positions: [],
  margin: {
    total_account_value: '10000',
    total_initial_margin: '0',
    total_maintenance_margin: '0',
    total_position_value: '0',
  },
  withdrawable: '10000',
};
const order = (oid: number, status: string) => ({
  order_id: oid,
  instrument_id: 1,
  buy: true,
  price: '101',
  quantity: '0.01',
  filled_quantity: status === 'filled' ? '0.01' : '0',
  resting_quantity: status === 'open' ? '0.01' : '0',
  status,
});
const fill = {
  trade_id: 9,
  order_id: 7,
  instrument_id: 1,
  side: 'long',
  price: '101',
  quantity: '0.01',
  fee: '0.5',
  pnl: '0',
  taker: true,
  timestamp: 1,
};

function setup(
  state: 'live' | 'down',
  held: { book: { bids: [string, string][]; asks: [string, string][] }; ageMs: number } | null = null,
  marketState: 'live' | 'down' = 'down',
  heldAccount: { portfolio: unknown; openOrders: unknown[] } | null = null,
) {
  const reads: Record<string, unknown> = {
    instruments: [BTC],
    fees: { fee_schedule: [{ taker_fee_rate: '0.0005', maker_fee_rate: '0.0002' }] },
    tickers: [],
    book: { bids: [], asks: [] },
    portfolio: PORTFOLIO,
    openOrders: [],
    statistics: [],
  };
  const stream = { state };
  const { call, calls } = fakeCall({
    'perps.read': (p) => reads[String(p.name)],
    'streams.status': () => ({
      streams: [{ venue: 'perps', account: ACCOUNT, state: stream.state, lastEventAt: null }],
      market: { perps: marketState, clob: 'down' },
    }),
    'streams.watch': (p) => ({ perpsBook: held, perpsAccount: p.account === ACCOUNT ? heldAccount : null }),
  });
  let push: (m: unknown) => void = () => undefined;
  const store = createPerpsStore(ACCOUNT, call, (fn) => {
    push = fn;
    return () => (push = () => undefined);
  });
  const accountReads = () =>
    calls.filter((c) => c.type === 'perps.read' && (c.payload.name === 'portfolio' || c.payload.name === 'openOrders'))
      .length;
  const bookReads = () => calls.filter((c) => c.type === 'perps.read' && c.payload.name === 'book').length;
  return { store, push: (m: unknown) => push(m), accountReads, bookReads, stream, calls };
}

describe('perps store with the live stream', () => {
  it('does not poll the portfolio and open orders while live, and shows pushed orders and fills at once', async () => {
    const s = setup('live');
    await s.store.start();
    expect(s.store.live.value).toBe(true);
    await s.store.refresh();
    expect(s.accountReads()).toBe(0);
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'order', order: order(7, 'accepted') } });
    expect(s.store.openOrders.value.map((o) => o.order_id)).toEqual([7]);
    const waiting = s.store.orderPushed(7, 1_000);
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'order', order: order(7, 'filled') } });
    expect(await waiting).toMatchObject({ order_id: 7, status: 'filled' });
    expect(s.store.openOrders.value).toEqual([]);
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'fills', fills: [fill] } });
    expect(s.store.fills.value).toEqual([fill]);
    // Another account's push, and a malformed one, change nothing.
    s.push({ type: 'streams.push', account: OTHER, push: { kind: 'fills', fills: [{ ...fill, trade_id: 10 }] } });
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'fills', fills: [{ ...fill, price: 5 }] } });
    expect(s.store.fills.value).toEqual([fill]);
    s.store.stop();
  });

  it("opens on the account the background's live session holds: no portfolio or open-orders read at open", async () => {
    const rich = { ...PORTFOLIO, withdrawable: '12345' };
    const s = setup('live', null, 'down', { portfolio: rich, openOrders: [order(5, 'open')] });
    s.store.iid.value = 1;
    await s.store.start();
    expect(s.store.portfolio.value?.withdrawable).toBe('12345');
    expect(s.store.openOrders.value.map((o) => o.order_id)).toEqual([5]);
    expect(s.accountReads()).toBe(0);
    s.store.stop();
    // Without it (no live session of this account), the account is read over REST at open.
    const t = setup('down', null, 'down', null);
    t.store.iid.value = 1;
    await t.store.start();
    expect(t.accountReads()).toBeGreaterThan(0);
    t.store.stop();
  });

  it(
    'takes the watch begun with the start hint (before the first render) ' +
      'instead of asking again, for that account and instrument only',
    async () => {
      const rich = { ...PORTFOLIO, withdrawable: '777' };
      const s = setup('live', null, 'down', { portfolio: rich, openOrders: [] });
      const hint = Promise.resolve({
        status: {
          activeAccount: ACCOUNT,
          accounts: [{ address: ACCOUNT, proxies: [{ expiry: Date.now() + 60_000 }] }],
        },
      });
      const early = fakeCall({
        'streams.watch': (p) => ({
          perpsBook: null,
          perpsAccount: p.account === ACCOUNT && p.perpsIid === 1 ? { portfolio: rich, openOrders: [] } : null,
        }),
      });
      void beginFirstWatch(hint, 1, early.call);
      s.store.iid.value = 1;
      await s.store.start();
      expect(early.calls.filter((c) => c.type === 'streams.watch')).toHaveLength(1);
      expect(s.calls.filter((c) => c.type === 'streams.watch')).toHaveLength(0);
      expect(s.store.portfolio.value?.withdrawable).toBe('777');
      expect(s.accountReads()).toBe(0);
      s.store.stop();
      // Begun for another instrument (or no live proxy): the store asks itself.
      const t = setup('live', null, 'down', { portfolio: rich, openOrders: [] });
      void beginFirstWatch(hint, 2, early.call);
      t.store.iid.value = 1;
      await t.store.start();
      expect(t.calls.filter((c) => c.type === 'streams.watch').length).toBeGreaterThan(0);
      t.store.stop();
    },
  );

  it(
    'takes the boot script’s reply for the same account and ' +
      'instrument, parsed by the contract; asks itself otherwise',
    async () => {
      const rich = { ...PORTFOLIO, withdrawable: '888' };
      const hint = Promise.resolve({
        status: {
          activeAccount: ACCOUNT,
          accounts: [{ address: ACCOUNT, proxies: [{ expiry: Date.now() + 60_000 }] }],
        },
      });
      const boot = (account: string, iid: number, result: unknown) =>
        Promise.resolve({ account, iid, reply: Promise.resolve({ reply: { ok: true, result }, at: Date.now() }) });
      const fresh = { perpsBook: null, perpsAccount: { portfolio: rich, openOrders: [] } };
      const nobody = fakeCall({});
      // The same account and instrument: taken, nothing asked again.
      const s = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
      void beginFirstWatch(hint, 1, nobody.call, boot(ACCOUNT, 1, fresh));
      s.store.iid.value = 1;
      await s.store.start();
      expect(nobody.calls).toEqual([]);
      expect(s.calls.filter((c) => c.type === 'streams.watch')).toHaveLength(0);
      expect(s.store.portfolio.value?.withdrawable).toBe('888');
      s.store.stop();
      // Another account or instrument than the checked hint names: the store's first watch asks afresh.
      for (const [account, iid] of [
        [OTHER, 1],
        [ACCOUNT, 2],
      ] as const) {
        const early = fakeCall({ 'streams.watch': () => fresh });
        void beginFirstWatch(hint, 1, early.call, boot(account, iid, fresh));
        const t = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
        t.store.iid.value = 1;
        await t.store.start();
        expect(early.calls.filter((c) => c.type === 'streams.watch')).toHaveLength(1);
        expect(t.store.portfolio.value?.withdrawable).toBe('888');
        t.store.stop();
      }
      // A reply of another shape is refused like any answer: the store asks itself.
      const u = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
      void beginFirstWatch(hint, 1, nobody.call, boot(ACCOUNT, 1, { perpsBook: 'a book' }));
      u.store.iid.value = 1;
      await u.store.start();
      expect(u.calls.filter((c) => c.type === 'streams.watch').length).toBeGreaterThan(0);
      expect(u.store.portfolio.value?.withdrawable).toBe('10000');
      u.store.stop();
    },
  );

  it(
    'at open shows the first watch’s answer before it asks its other reads; an answer still ' +
      'missing after 30 ms holds them back no longer, and a store stopped meanwhile asks nothing',
    async () => {
      const hint = Promise.resolve({
        status: {
          activeAccount: ACCOUNT,
          accounts: [{ address: ACCOUNT, proxies: [{ expiry: Date.now() + 60_000 }] }],
        },
      });
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const asked = (calls: { type: string }[]) => calls.filter((c) => c.type !== 'streams.watch').map((c) => c.type);
      let answer: (r: { reply: unknown; at: number }) => void = () => undefined;
      const reply = new Promise<{ reply: unknown; at: number }>((r) => (answer = r));
      const s = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
      void beginFirstWatch(hint, 1, fakeCall({}).call, Promise.resolve({ account: ACCOUNT, iid: 1, reply }));
      s.store.iid.value = 1;
      const started = s.store.start();
      await sleep(5);
      expect(asked(s.calls)).toEqual([]);
      answer({
        reply: {
          ok: true,
          result: {
            perpsBook: null,
            perpsAccount: { portfolio: { ...PORTFOLIO, withdrawable: '555' }, openOrders: [] },
          },
        },
        at: Date.now(),
      });
      await started;
      expect(s.store.portfolio.value?.withdrawable).toBe('555');
      expect(asked(s.calls)).toEqual(expect.arrayContaining(['streams.status', 'perps.read']));
      s.store.stop();
      // An answer that does not come: the reads go after 30 ms.
      const never = () => Promise.resolve({ account: ACCOUNT, iid: 1, reply: new Promise<never>(() => undefined) });
      const t = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
      void beginFirstWatch(hint, 1, fakeCall({}).call, never());
      t.store.iid.value = 1;
      void t.store.start();
      await sleep(10);
      expect(asked(t.calls)).toEqual([]);
      await sleep(40);
      expect(t.calls.some((c) => c.type === 'perps.read' && c.payload.name === 'instruments')).toBe(true);
      t.store.stop();
      // Stopped (the popup closed) while waiting: nothing is asked, nothing keeps polling.
      const u = setup('live', null, 'down', { portfolio: PORTFOLIO, openOrders: [] });
      void beginFirstWatch(hint, 1, fakeCall({}).call, never());
      u.store.iid.value = 1;
      void u.store.start();
      await sleep(5);
      u.store.stop();
      await sleep(2_100);
      expect(asked(u.calls)).toEqual([]);
    },
  );

  it(
    'counts the time an early answer waited in its book’s ' +
      'age: a book that got older than 1 s meanwhile shows stale',
    async () => {
      const hint = Promise.resolve({
        status: {
          activeAccount: ACCOUNT,
          accounts: [{ address: ACCOUNT, proxies: [{ expiry: Date.now() + 60_000 }] }],
        },
      });
      const book = { bids: [['100', '1']] as [string, string][], asks: [['101', '1']] as [string, string][] };
      const answered = (at: number) =>
        Promise.resolve({
          account: ACCOUNT,
          iid: 1,
          reply: Promise.resolve({
            reply: { ok: true, result: { perpsBook: { book, ageMs: 600 }, perpsAccount: null } },
            at,
          }),
        });
      const open = async (at: number) => {
        const s = setup('down', null);
        void beginFirstWatch(hint, 1, fakeCall({}).call, answered(at));
        s.store.iid.value = 1;
        await s.store.start();
        s.store.stop();
        return { bid: s.store.book.value?.bids[0]?.[0], bookReads: s.bookReads() };
      };
      // 600 ms old when answered, shown at once: fresh, no REST book read.
      expect(await open(Date.now())).toEqual({ bid: '100', bookReads: 0 });
      // The same answer 500 ms ago: 1.1 s old now — stale, so the REST book is read and replaces it.
      expect(await open(Date.now() - 500)).toEqual({ bid: undefined, bookReads: 1 });
    },
  );

  it("an order-book-only account (no perps proxy) still gets the header's badge for its user channel", async () => {
    const { call } = fakeCall({
      'perps.read': (p) =>
        p.name === 'instruments'
          ? [BTC]
          : p.name === 'fees'
            ? { fee_schedule: [] }
            : p.name === 'book'
              ? { bids: [], asks: [] }
              : [],
      'streams.status': () => ({
        streams: [{ venue: 'clob', account: ACCOUNT, state: 'live', lastEventAt: null }],
        market: { perps: 'down', clob: 'down' },
      }),
      'streams.watch': () => ({ perpsBook: null, perpsAccount: null }),
    });
    const store = createPerpsStore(undefined, call, () => () => undefined, ACCOUNT);
    await store.start();
    expect(store.venues.value).toEqual([{ venue: 'clob', live: true }]);
    expect(store.live.value).toBe(false);
    store.stop();
    const without = createPerpsStore(undefined, call, () => () => undefined);
    await without.start();
    expect(without.venues.value).toEqual([]);
    without.stop();
  });

  it('polls over REST when the stream is down, and a pushed status switches between the two', async () => {
    const s = setup('down');
    await s.store.start();
    expect(s.store.live.value).toBe(false);
    const before = s.accountReads();
    expect(before).toBeGreaterThan(0);
    await s.store.refresh();
    expect(s.accountReads()).toBe(before + 2);
    s.push({ type: 'streams.push', account: ACCOUNT, push: { kind: 'status', state: 'live', lastEventAt: 1 } });
    await s.store.refresh();
    expect(s.accountReads()).toBe(before + 2);
    expect(await s.store.orderPushed(99, 10)).toBeUndefined();
    s.store.stop();
  });

  it(
    'opens on the background’s book when at most 1 s old (no REST book ' +
      'read), and polls no book or tickers while the public stream is live',
    async () => {
      const held = {
        book: { bids: [['100', '1']] as [string, string][], asks: [['101', '1']] as [string, string][] },
        ageMs: 300,
      };
      const s = setup('live', held, 'live');
      s.store.iid.value = 1;
      await s.store.start();
      expect(s.store.book.value).toEqual(held.book);
      expect(s.store.bookStale.value).toBe(false);
      expect(s.bookReads()).toBe(0);
      await s.store.refresh();
      expect(s.bookReads()).toBe(0);
      s.push({
        type: 'streams.market',
        push: { kind: 'perpsBook', iid: 1, book: { bids: [['100.5', '2']], asks: [['101', '1']] }, at: 1 },
      });
      expect(s.store.book.value?.bids).toEqual([['100.5', '2']]);
      s.push({ type: 'streams.market', push: { kind: 'perpsBook', iid: 2, book: { bids: [], asks: [] }, at: 1 } });
      expect(s.store.book.value?.bids).toEqual([['100.5', '2']]);
      s.store.stop();
    },
  );

  it('shows an older held book marked stale until the REST book arrives', async () => {
    const s = setup('down', { book: { bids: [['99', '1']], asks: [['102', '1']] }, ageMs: 5_000 });
    s.store.iid.value = 1;
    const shown: [boolean, string | undefined][] = [];
    const unwatch = s.store.bookStale.subscribe((stale) => shown.push([stale, s.store.book.value?.bids[0]?.[0]]));
    await s.store.start();
    unwatch();
    expect(shown).toContainEqual([true, '99']);
    expect(s.bookReads()).toBeGreaterThan(0);
    expect(s.store.bookStale.value).toBe(false);
    expect(s.store.book.value).toEqual({ bids: [], asks: [] });
    s.store.stop();
  });
});
