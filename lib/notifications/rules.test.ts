/**
 * The notification rules, pure: a fill names instrument, side, size and average price and
 * says filled or partly filled; venue and dead-man cancels say which (a person's own cancel raises
 * nothing); the liquidation rule fires once per crossing; the stream-down rule waits N seconds and a
 * live grant; every kind can be switched off; no notification carries anything but market data. An
 * order-book fill names the person's own order — side, size, price and token — in the role it played
 * (the exchange's top-level trade fields are the taker's); a burst of fills or cancels reads as one.
 */
import { describe, expect, it } from 'vitest';
import type { StreamPush } from '../messaging/streams';
import { DEFAULT_NOTIFICATION_PREFS, type NotificationPrefs } from './prefs';
import { createNotificationRules } from './rules';
import { BURST_MS, createNoticeBursts } from './bursts';
import { ownClobTrade, type ClobVenueTrade } from '../clob/trades';

const ACCOUNT = '0x1111111111111111111111111111111111111111';
const P: NotificationPrefs = DEFAULT_NOTIFICATION_PREFS;
const rules = () => createNotificationRules((iid) => (iid === 1 ? { symbol: 'BTC-PERP', tick: '0.5' } : undefined));
const msg = (push: StreamPush['push']): StreamPush => ({ type: 'streams.push', account: ACCOUNT, push });
const order = (o: { oid: number; status: string; fill?: string; qty?: string; buy?: boolean; price?: string }) =>
  msg({
    kind: 'order',
    order: {
      order_id: o.oid,
      instrument_id: 1,
      buy: o.buy ?? true,
      price: o.price ?? '65000',
      quantity: o.qty ?? '0.004',
      filled_quantity: o.fill ?? '0',
      resting_quantity: '0',
      status: o.status,
    },
  });
const fill = (oid: number, price: string, quantity: string, tid = 1) => ({
  trade_id: tid,
  order_id: oid,
  instrument_id: 1,
  side: 'long' as const,
  price,
  quantity,
  fee: '0.1',
  pnl: '0',
  taker: true,
  timestamp: 1,
});
const position = (size: string, positionValue: string, liq: string) => ({
  instrument_id: 1,
  symbol: 'BTC-PERP',
  size,
  entry_price: '65000',
  leverage: 10,
  cross: true,
  initial_margin: '1',
  maintenance_margin: '1',
  position_value: positionValue,
  liquidation_price: liq,
  unrealized_pnl: '0',
  return_on_equity: '0',
  cumulative_funding: '0',
});
const portfolio = (positions: ReturnType<typeof position>[]) =>
  msg({
    kind: 'portfolio',
    portfolio: {
      positions,
      margin: {
        total_account_value: '1',
        total_initial_margin: '1',
        total_maintenance_margin: '1',
        total_position_value: '1',
      },
      withdrawable: '1',
    },
  });

describe('fills', () => {
  it('names instrument, side, size and average price, and says partly filled then filled', () => {
    const r = rules();
    r.onPush(order({ oid: 7, status: 'partial', fill: '0.003' }), P, 0);
    const [a] = r.onPush(
      msg({ kind: 'fills', fills: [fill(7, '65000', '0.001', 1), fill(7, '65010', '0.002', 2)] }),
      P,
      0,
    );
    expect(a).toMatchObject({
      kind: 'fill',
      title: 'Order partly filled',
      message: 'Buy 0.003 BTC-PERP (#1) at an average ≈65,006.66666666 (0.003 of 0.004 filled).',
    });
    r.onPush(order({ oid: 7, status: 'filled', fill: '0.004' }), P, 0);
    const [b] = r.onPush(msg({ kind: 'fills', fills: [fill(7, '65020', '0.001', 3)] }), P, 0);
    expect(b).toMatchObject({
      title: 'Order filled',
      message: 'Buy 0.001 BTC-PERP (#1) at an average 65,020.0 (0.004 of 0.004 filled).',
    });
    expect(a?.id).not.toBe(b?.id);
  });

  it('a sell of an instrument not known yet is named by its id', () => {
    const r = rules();
    const [n] = r.onPush(
      msg({ kind: 'fills', fills: [{ ...fill(9, '3100', '0.5'), instrument_id: 2, side: 'short' }] }),
      P,
      0,
    );
    expect(n?.message).toBe('Sell 0.5 instrument #2 at an average 3,100.');
  });

  it('switched off: nothing', () => {
    expect(
      rules().onPush(msg({ kind: 'fills', fills: [fill(7, '65000', '0.001')] }), { ...P, fills: false }, 0),
    ).toEqual([]);
  });
});

describe('cancels', () => {
  it(
    'the dead-man and the venue say which; once per order; ' + 'a person’s own cancel and an IOC ending raise nothing',
    () => {
      const r = rules();
      const [dm] = r.onPush(order({ oid: 1, status: 'auto_cancelled' }), P, 0);
      expect(dm).toMatchObject({ kind: 'cancel', title: 'Order cancelled by the dead-man switch' });
      expect(dm?.message).toContain('Buy 0.004 BTC-PERP (#1) at 65,000.0');
      expect(r.onPush(order({ oid: 1, status: 'auto_cancelled' }), P, 0)).toEqual([]);
      const [venue] = r.onPush(order({ oid: 2, status: 'stp_cancelled', buy: false, fill: '0.001' }), P, 0);
      expect(venue).toMatchObject({
        title: 'Order cancelled by the venue',
        message: 'Sell 0.004 BTC-PERP (#1) at 65,000.0 (0.001 had filled): self-trade prevention.',
      });
      expect(r.onPush(order({ oid: 3, status: 'cancelled' }), P, 0)).toEqual([]);
      expect(r.onPush(order({ oid: 4, status: 'ioc_expired' }), P, 0)).toEqual([]);
      expect(r.onPush(order({ oid: 5, status: 'open' }), P, 0)).toEqual([]);
    },
  );

  it('switched off: nothing', () => {
    expect(rules().onPush(order({ oid: 1, status: 'auto_cancelled' }), { ...P, cancels: false }, 0)).toEqual([]);
  });
});

describe('liquidation distance', () => {
  // Mark = position value / |size|: 0.1 BTC worth 6 500 → mark 65 000.
  it('fires once when a position crosses inside the distance, again only after it went back out', () => {
    const r = rules();
    expect(r.onPush(portfolio([position('0.1', '6500', '50000')]), P, 0)).toEqual([]); // 23 % away
    const [n] = r.onPush(portfolio([position('0.1', '6500', '60000')]), P, 0); // 7.7 % away
    expect(n).toMatchObject({
      kind: 'liquidation',
      title: 'Position near liquidation',
      message: 'Long 0.1 BTC-PERP (#1): mark 65,000.0 is 7.7 % from the liquidation price 60,000.0.',
    });
    expect(r.onPush(portfolio([position('0.1', '6400', '60000')]), P, 0)).toEqual([]); // still inside: no repeat
    expect(r.onPush(portfolio([position('0.1', '7000', '60000')]), P, 0)).toEqual([]); // 14 %: out again
    expect(r.onPush(portfolio([position('0.1', '6500', '60000')]), P, 0)).toHaveLength(1); // a new crossing
  });

  it('a short, the setting’s distance, a resync counts, a closed position re-arms', () => {
    const r = rules();
    // 7.7 % > 5 %
    expect(r.onPush(portfolio([position('-0.1', '6500', '70000')]), { ...P, liquidationPct: 5 }, 0)).toEqual([]);
    const resync = msg({
      kind: 'resync',
      openOrders: [],
      portfolio:
        portfolio([position('-0.1', '6500', '68000')]).push.kind === 'portfolio'
          ? {
              positions: [position('-0.1', '6500', '68000')],
              margin: {
                total_account_value: '1',
                total_initial_margin: '1',
                total_maintenance_margin: '1',
                total_position_value: '1',
              },
              withdrawable: '1',
            }
          : never(),
    });
    const [n] = r.onPush(resync, { ...P, liquidationPct: 5 }, 0);
    expect(n?.message).toMatch(/^Short 0\.1 BTC-PERP \(#1\): mark 65,000\.0 is 4\.6 %/);
    expect(r.onPush(portfolio([]), P, 0)).toEqual([]);
    expect(r.onPush(portfolio([position('-0.1', '6500', '68000')]), { ...P, liquidationPct: 5 }, 0)).toHaveLength(1);
  });

  it('switched off: nothing (and no notice later for the same crossing)', () => {
    const r = rules();
    expect(r.onPush(portfolio([position('0.1', '6500', '60000')]), { ...P, liquidation: false }, 0)).toEqual([]);
    expect(r.onPush(portfolio([position('0.1', '6500', '60000')]), P, 0)).toEqual([]);
  });
});

describe('stream down', () => {
  const status = (state: 'live' | 'connecting' | 'down') => msg({ kind: 'status', state, lastEventAt: null });

  it('fires after N seconds down while a grant is live, once per outage', () => {
    const r = rules();
    r.onPush(status('live'), P, 0);
    expect(r.streamDownDueAt(P)).toBeUndefined();
    r.onPush(status('down'), P, 1_000);
    r.onPush(status('connecting'), P, 2_000);
    expect(r.streamDownDueAt(P)).toBe(31_000);
    expect(r.checkStreamDown(P, 30_999, true)).toBeUndefined();
    expect(r.checkStreamDown(P, 40_000, false)).toBeUndefined(); // no grant live: not (yet)
    expect(r.checkStreamDown(P, 41_000, true)).toMatchObject({
      kind: 'stream',
      title: 'Live stream down',
      message: expect.stringContaining('40 s'),
    });
    expect(r.checkStreamDown(P, 50_000, true)).toBeUndefined();
    expect(r.streamDownDueAt(P)).toBeUndefined();
    r.onPush(status('live'), P, 60_000);
    r.onPush(status('down'), P, 70_000);
    expect(r.checkStreamDown({ ...P, streamDownSeconds: 5 }, 75_000, true)).toBeDefined();
  });

  it('back live before N seconds: nothing; switched off: nothing', () => {
    const r = rules();
    r.onPush(status('down'), P, 0);
    r.onPush(status('live'), P, 10_000);
    expect(r.checkStreamDown(P, 60_000, true)).toBeUndefined();
    r.onPush(status('down'), P, 100_000);
    expect(r.checkStreamDown({ ...P, streamDown: false }, 200_000, true)).toBeUndefined();
  });
});

function never(): never {
  throw new Error('unreachable');
}

describe('order-book orders (the user channel)', () => {
  const YES = '11';
  const clobOrder = (id: string, status: string, matched = '0') =>
    msg({
      kind: 'clobOrder',
      order: {
        id,
        status,
        side: 'BUY',
        price: '0.52',
        original_size: '10',
        size_matched: matched,
        outcome: 'Yes',
        asset_id: YES,
      },
    });
  const clobTrade = (id: string, side: 'BUY' | 'SELL' = 'BUY') =>
    msg({
      kind: 'clobTrade',
      trade: {
        id,
        match_time: '1700000000',
        trader_side: 'MAKER',
        own: [{ order_id: 'o1', side, size: '4', price: '0.52', asset_id: YES, outcome: 'Yes' }],
      },
    });

  it(
    'a trade is notified once, though the channel repeats ' + 'it as matched, mined and confirmed; switched off, none',
    () => {
      const r = createNotificationRules(
        () => undefined,
        () => false,
      );
      const [n] = r.onPush(clobTrade('t1'), P, 0);
      expect(n).toMatchObject({
        kind: 'fill',
        title: 'Order-book order filled',
        message: 'Bought 4 “Yes” shares (token 11) at 0.52 (maker).',
      });
      expect(r.onPush(clobTrade('t1'), P, 0)).toEqual([]);
      expect(r.onPush(clobTrade('t2', 'SELL'), { ...P, fills: false }, 0)).toEqual([]);
    },
  );

  it(
    'a cancel Countersign did not send is notified once, naming the ' +
      'likely causes; its own cancel and a live order raise nothing',
    () => {
      const ours = new Set(['mine']);
      const r = createNotificationRules(
        () => undefined,
        (id) => ours.has(id),
      );
      expect(r.onPush(clobOrder('o1', 'LIVE'), P, 0)).toEqual([]);
      expect(r.onPush(clobOrder('mine', 'CANCELED'), P, 0)).toEqual([]);
      const [n] = r.onPush(clobOrder('o1', 'CANCELED', '3'), P, 0);
      expect(n).toMatchObject({ kind: 'cancel', title: 'Order-book order cancelled outside Countersign' });
      expect(n?.message).toBe(
        'Buy 10 “Yes” shares (token 11) at 0.52 (3 had filled): cancelled by ' +
          'the venue (a lapsed heartbeat, the market closing) or by another client.',
      );
      expect(r.onPush(clobOrder('o1', 'CANCELED', '3'), P, 0)).toEqual([]);
      expect(r.onPush(clobOrder('o2', 'CANCELED'), { ...P, cancels: false }, 0)).toEqual([]);
    },
  );
});

describe('order-book fills: the person’s own order, in the role it played', () => {
  const YES = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
  const NO = '52114319501245915516055106046884209969926127482827954674443846427813813222426';
  const ME = '0x1111111111111111111111111111111111111111';
  /** The exchange's report of a match (PROTOCOL.md §5.4): the top level is the taker's order — buy 15 "Yes" at 0.62. */
  const venueTrade = (makers: ClobVenueTrade['maker_orders'], trader_side?: 'TAKER' | 'MAKER'): ClobVenueTrade => ({
    id: 'match-1',
    match_time: '1700000000',
    ...(trader_side ? { trader_side } : {}),
    taker_order_id: '0xtaker',
    side: 'BUY',
    size: '15',
    price: '0.62',
    asset_id: YES,
    outcome: 'Yes',
    maker_orders: makers,
  });
  const mySell = {
    order_id: '0xmine',
    maker_address: ME,
    byAccountKey: true,
    side: 'SELL' as const,
    matched_amount: '10',
    price: '0.6',
    asset_id: YES,
    outcome: 'Yes',
  };
  const theirSell = {
    order_id: '0xtheirs',
    maker_address: '0x2222222222222222222222222222222222222222',
    byAccountKey: false,
    side: 'SELL' as const,
    matched_amount: '5',
    price: '0.62',
    asset_id: YES,
    outcome: 'Yes',
  };
  const fillOf = (t: ClobVenueTrade) =>
    createNotificationRules(
      () => undefined,
      () => false,
    ).onPush(msg({ kind: 'clobTrade', trade: ownClobTrade(t, [ME]) }), P, 0);

  it(
    'the person’s resting sell is the maker: the notice says ' +
      'sold 10 “Yes” at 0.60, not the taker’s buy of 15 at 0.62',
    () => {
      const [n] = fillOf(venueTrade([theirSell, mySell], 'MAKER'));
      expect(n?.message).toBe(`Sold 10 “Yes” shares (token 713210…2563) at 0.6 (maker).`);
    },
  );

  it(
    'a maker order for the other outcome (the exchange minting ' +
      'both sides) reads as the person’s buy of “No” at its own price',
    () => {
      const myBuyNo = {
        ...mySell,
        side: 'BUY' as const,
        matched_amount: '10',
        price: '0.38',
        asset_id: NO,
        outcome: 'No',
        byAccountKey: false,
        maker_address: ME.toUpperCase().replace('0X', '0x'),
      };
      const [n] = fillOf(venueTrade([myBuyNo], 'MAKER'));
      expect(n?.message).toBe(`Bought 10 “No” shares (token 521143…2426) at 0.38 (maker).`);
    },
  );

  it('a trade that says maker but names none of the person’s orders says so and shows no figures', () => {
    const [n] = fillOf(venueTrade([theirSell], 'MAKER'));
    expect(n).toMatchObject({ kind: 'fill', title: 'Order-book trade without your figures' });
    expect(n?.message).not.toMatch(/\d/);
    expect(n?.burst).toBeUndefined();
  });

  it(
    'as taker the top-level figures are the person’s; an outcome ' +
      'label out of the venue-text rules leaves the token id alone',
    () => {
      const [n] = fillOf({ ...venueTrade([theirSell], 'TAKER'), outcome: 'Y\u202Ees' });
      expect(n?.message).toBe(`Bought 15 shares of token 713210…2563 at 0.62 (taker).`);
    },
  );
});

describe('bursts (createNoticeBursts)', () => {
  const cancel = (r: ReturnType<typeof createNotificationRules>, id: string) =>
    r.onPush(
      msg({
        kind: 'clobOrder',
        order: {
          id,
          status: 'CANCELED',
          side: 'SELL',
          price: '0.6',
          original_size: '10',
          size_matched: '0',
          outcome: 'Yes',
          asset_id: '11',
        },
      }),
      P,
      0,
    );

  it('20 cancels by another client at once read as one notification naming 20', () => {
    const r = createNotificationRules(
      () => undefined,
      () => false,
    );
    const b = createNoticeBursts();
    for (let i = 0; i < 20; i++)
      for (const n of cancel(r, `o${i}`)) if (n.burst) b.add({ ...n, burst: n.burst }, 5_000 + i);
    expect(b.dueAt()).toBe(5_000 + BURST_MS);
    expect(b.flush(5_000 + BURST_MS - 1)).toEqual([]);
    const out = b.flush(5_000 + BURST_MS);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ kind: 'cancel', title: '20 order-book orders cancelled outside Countersign' });
    expect(out[0]?.message).toBe(
      'Sell 10 “Yes” shares (token 11) at 0.6; Sell 10 “Yes” shares (token 11) ' +
        'at 0.6; Sell 10 “Yes” shares (token 11) at 0.6; and 17 more: cancelled by ' +
        'the venue (a lapsed heartbeat, the market closing) or by another client.',
    );
    expect(b.dueAt()).toBeUndefined();
  });

  it('a single event reads as it always did; kinds and windows are kept apart', () => {
    const r = createNotificationRules(
      () => undefined,
      () => false,
    );
    const b = createNoticeBursts();
    const [one] = cancel(r, 'a');
    const [perpsFill] = r.onPush(msg({ kind: 'fills', fills: [fill(7, '65000', '0.001')] }), P, 0);
    for (const n of [one, perpsFill]) if (n?.burst) b.add({ ...n, burst: n.burst }, 0);
    const out = b.flush(BURST_MS);
    expect(out.map((n) => n.title)).toEqual(['Order-book order cancelled outside Countersign', 'Order filled']);
    expect(out[0]).toEqual({ id: one?.id, kind: 'cancel', title: one?.title, message: one?.message });
    // A cancel after the window closed opens a new one.
    for (const n of cancel(r, 'b')) if (n.burst) b.add({ ...n, burst: n.burst }, 2_000);
    expect(b.flush(2_999)).toEqual([]);
    expect(b.flush(3_000)).toHaveLength(1);
  });
});
