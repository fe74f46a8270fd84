/**
 * The notification rules, pure: a fill names instrument, side, size and average price and
 * says filled or partly filled; venue and dead-man cancels say which (a person's own cancel raises
 * nothing); the liquidation rule fires once per crossing; the stream-down rule waits N seconds and a
 * live grant; every kind can be switched off; no notification carries anything but market data.
 */
import { describe, expect, it } from 'vitest';
import type { StreamPush } from '../messaging/streams';
import { DEFAULT_NOTIFICATION_PREFS, type NotificationPrefs } from './prefs';
import { createNotificationRules } from './rules';

const ACCOUNT = '0x1111111111111111111111111111111111111111';
const P: NotificationPrefs = DEFAULT_NOTIFICATION_PREFS;
const rules = () => createNotificationRules((iid) => (iid === 1 ? { symbol: 'BTC-PERP', tick: '0.5' } : undefined));
const msg = (push: StreamPush['push']): StreamPush => ({ type: 'streams.push', account: ACCOUNT, push });
const order = (o: { oid: number; status: string; fill?: string; qty?: string; buy?: boolean; price?: string }) =>
  msg({ kind: 'order', order: { order_id: o.oid, instrument_id: 1, buy: o.buy ?? true, price: o.price ?? '65000', quantity: o.qty ?? '0.004', filled_quantity: o.fill ?? '0', resting_quantity: '0', status: o.status } });
const fill = (oid: number, price: string, quantity: string, tid = 1) => ({ trade_id: tid, order_id: oid, instrument_id: 1, side: 'long' as const, price, quantity, fee: '0.1', pnl: '0', taker: true, timestamp: 1 });
const position = (size: string, positionValue: string, liq: string) => ({
  instrument_id: 1, symbol: 'BTC-PERP', size, entry_price: '65000', leverage: 10, cross: true, initial_margin: '1', maintenance_margin: '1',
  position_value: positionValue, liquidation_price: liq, unrealized_pnl: '0', return_on_equity: '0', cumulative_funding: '0',
});
const portfolio = (positions: ReturnType<typeof position>[]) => msg({ kind: 'portfolio', portfolio: { positions, margin: { total_account_value: '1', total_initial_margin: '1', total_maintenance_margin: '1', total_position_value: '1' }, withdrawable: '1' } });

describe('fills', () => {
  it('names instrument, side, size and average price, and says partly filled then filled', () => {
    const r = rules();
    r.onPush(order({ oid: 7, status: 'partial', fill: '0.003' }), P, 0);
    const [a] = r.onPush(msg({ kind: 'fills', fills: [fill(7, '65000', '0.001', 1), fill(7, '65010', '0.002', 2)] }), P, 0);
    expect(a).toMatchObject({ kind: 'fill', title: 'Order partly filled', message: 'Buy 0.003 BTC-PERP (#1) at an average ≈65,006.66666666 (0.003 of 0.004 filled).' });
    r.onPush(order({ oid: 7, status: 'filled', fill: '0.004' }), P, 0);
    const [b] = r.onPush(msg({ kind: 'fills', fills: [fill(7, '65020', '0.001', 3)] }), P, 0);
    expect(b).toMatchObject({ title: 'Order filled', message: 'Buy 0.001 BTC-PERP (#1) at an average 65,020.0 (0.004 of 0.004 filled).' });
    expect(a?.id).not.toBe(b?.id);
  });

  it('a sell of an instrument not known yet is named by its id', () => {
    const r = rules();
    const [n] = r.onPush(msg({ kind: 'fills', fills: [{ ...fill(9, '3100', '0.5'), instrument_id: 2, side: 'short' }] }), P, 0);
    expect(n?.message).toBe('Sell 0.5 instrument #2 at an average 3,100.');
  });

  it('switched off: nothing', () => {
    expect(rules().onPush(msg({ kind: 'fills', fills: [fill(7, '65000', '0.001')] }), { ...P, fills: false }, 0)).toEqual([]);
  });
});

describe('cancels', () => {
  it('the dead-man and the venue say which; once per order; a person’s own cancel and an IOC ending raise nothing', () => {
    const r = rules();
    const [dm] = r.onPush(order({ oid: 1, status: 'auto_cancelled' }), P, 0);
    expect(dm).toMatchObject({ kind: 'cancel', title: 'Order cancelled by the dead-man switch' });
    expect(dm?.message).toContain('Buy 0.004 BTC-PERP (#1) at 65,000.0');
    expect(r.onPush(order({ oid: 1, status: 'auto_cancelled' }), P, 0)).toEqual([]);
    const [venue] = r.onPush(order({ oid: 2, status: 'stp_cancelled', buy: false, fill: '0.001' }), P, 0);
    expect(venue).toMatchObject({ title: 'Order cancelled by the venue', message: 'Sell 0.004 BTC-PERP (#1) at 65,000.0 (0.001 had filled): self-trade prevention.' });
    expect(r.onPush(order({ oid: 3, status: 'cancelled' }), P, 0)).toEqual([]);
    expect(r.onPush(order({ oid: 4, status: 'ioc_expired' }), P, 0)).toEqual([]);
    expect(r.onPush(order({ oid: 5, status: 'open' }), P, 0)).toEqual([]);
  });

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
    expect(n).toMatchObject({ kind: 'liquidation', title: 'Position near liquidation', message: 'Long 0.1 BTC-PERP (#1): mark 65,000.0 is 7.7 % from the liquidation price 60,000.0.' });
    expect(r.onPush(portfolio([position('0.1', '6400', '60000')]), P, 0)).toEqual([]); // still inside: no repeat
    expect(r.onPush(portfolio([position('0.1', '7000', '60000')]), P, 0)).toEqual([]); // 14 %: out again
    expect(r.onPush(portfolio([position('0.1', '6500', '60000')]), P, 0)).toHaveLength(1); // a new crossing
  });

  it('a short, the setting’s distance, a resync counts, a closed position re-arms', () => {
    const r = rules();
    expect(r.onPush(portfolio([position('-0.1', '6500', '70000')]), { ...P, liquidationPct: 5 }, 0)).toEqual([]); // 7.7 % > 5 %
    const resync = msg({ kind: 'resync', openOrders: [], portfolio: portfolio([position('-0.1', '6500', '68000')]).push.kind === 'portfolio' ? { positions: [position('-0.1', '6500', '68000')], margin: { total_account_value: '1', total_initial_margin: '1', total_maintenance_margin: '1', total_position_value: '1' }, withdrawable: '1' } : never() });
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
    expect(r.checkStreamDown(P, 41_000, true)).toMatchObject({ kind: 'stream', title: 'Live stream down', message: expect.stringContaining('40 s') });
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
  const clobOrder = (id: string, status: string, matched = '0') => msg({ kind: 'clobOrder', order: { id, status, side: 'BUY', price: '0.52', original_size: '10', size_matched: matched, outcome: 'Yes', asset_id: '11' } });
  const clobTrade = (id: string, side: 'BUY' | 'SELL' = 'BUY') => msg({ kind: 'clobTrade', trade: { id, side, size: '4', price: '0.52', outcome: 'Yes', match_time: '1700000000', trader_side: 'MAKER' } });

  it('a trade is notified once, though the channel repeats it as matched, mined and confirmed; switched off, none', () => {
    const r = createNotificationRules(() => undefined, () => false);
    const [n] = r.onPush(clobTrade('t1'), P, 0);
    expect(n).toMatchObject({ kind: 'fill', title: 'Order-book order filled', message: 'Bought 4 “Yes” shares at 0.52 (maker).' });
    expect(r.onPush(clobTrade('t1'), P, 0)).toEqual([]);
    expect(r.onPush(clobTrade('t2', 'SELL'), { ...P, fills: false }, 0)).toEqual([]);
  });

  it('a cancel Countersign did not send is notified once, naming the likely causes; its own cancel and a live order raise nothing', () => {
    const ours = new Set(['mine']);
    const r = createNotificationRules(() => undefined, (id) => ours.has(id));
    expect(r.onPush(clobOrder('o1', 'LIVE'), P, 0)).toEqual([]);
    expect(r.onPush(clobOrder('mine', 'CANCELED'), P, 0)).toEqual([]);
    const [n] = r.onPush(clobOrder('o1', 'CANCELED', '3'), P, 0);
    expect(n).toMatchObject({ kind: 'cancel', title: 'Order-book order cancelled outside Countersign' });
    expect(n?.message).toBe('Buy 10 “Yes” shares at 0.52 (3 had filled): cancelled by the venue (a lapsed heartbeat, the market closing) or by another client.');
    expect(r.onPush(clobOrder('o1', 'CANCELED', '3'), P, 0)).toEqual([]);
    expect(r.onPush(clobOrder('o2', 'CANCELED'), { ...P, cancels: false }, 0)).toEqual([]);
  });
});
