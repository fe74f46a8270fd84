import { describe, expect, it } from 'vitest';
import { evaluateGrant, type Grant, type GrantOrder, type GrantRequest, type GrantUse } from './evaluate';

const NOW = 1_800_000_000_000;
const grant = (over: Partial<Grant> = {}): Grant => ({
  id: 'g1',
  origin: 'https://trade.example',
  account: '0xabc',
  createdAt: NOW - 1000,
  expiresAt: NOW + 8 * 3_600_000,
  allow: { order: true, cancel: true, leverage: true },
  ...over,
});
const mids: Record<string, string> = { '1': '65000', '2': '3000', tok: '0.5' };
const ctx = (uses: GrantUse[] = [], now = NOW) => ({ now, uses, mid: (m: string) => mids[m] });
const order = (o: Partial<GrantOrder> = {}, venue: 'perps' | 'clob' = 'perps'): GrantRequest => ({ kind: 'order', venue, orders: [{ market: '2', buy: true, size: '0.5', price: '3000', ...o }] });

describe('evaluateGrant', () => {
  it('covers an order inside every limit and counts its notional', () => {
    expect(evaluateGrant(grant({ instruments: [1, 2], maxNotional: '2000', dailyNotional: '20000' }), order(), ctx())).toEqual({ ok: true, notional: '1500' });
  });

  it('never covers fund-moving commands, whatever the grant allows', () => {
    expect(evaluateGrant(grant(), { kind: 'never', what: 'A withdrawal' }, ctx())).toEqual({ ok: false, limit: 'A withdrawal always needs your approval' });
  });

  it('expiry: covered a millisecond before, not at the expiry', () => {
    const g = grant();
    expect(evaluateGrant(g, order(), ctx([], g.expiresAt - 1)).ok).toBe(true);
    expect(evaluateGrant(g, order(), ctx([], g.expiresAt))).toEqual({ ok: false, limit: 'the permission has expired' });
  });

  it('kinds: orders, cancels and leverage each need their permission', () => {
    const g = grant({ allow: { order: false, cancel: false, leverage: false } });
    expect(evaluateGrant(g, order(), ctx())).toMatchObject({ ok: false, limit: 'placing orders is not allowed' });
    expect(evaluateGrant(g, { kind: 'cancel' }, ctx())).toMatchObject({ ok: false, limit: 'cancels are not allowed' });
    expect(evaluateGrant(g, { kind: 'leverage', market: '2', leverage: 3 }, ctx())).toMatchObject({ ok: false, limit: 'leverage changes are not allowed' });
  });

  it('instruments and markets', () => {
    expect(evaluateGrant(grant({ instruments: [2] }), order({ market: '1' }), ctx())).toMatchObject({ ok: false, limit: 'instrument 1 is not allowed' });
    expect(evaluateGrant(grant({ markets: ['tok'] }), order({ market: 'tok', price: '0.5', size: '10' }, 'clob'), ctx()).ok).toBe(true);
    expect(evaluateGrant(grant({ markets: ['tok'] }), order({ market: 'other', price: '0.5', size: '10' }, 'clob'), ctx()).ok).toBe(false);
  });

  it('max size: at the limit covered, just over not', () => {
    expect(evaluateGrant(grant({ maxSize: '0.5' }), order({ size: '0.5' }), ctx()).ok).toBe(true);
    expect(evaluateGrant(grant({ maxSize: '0.5' }), order({ size: '0.50000001' }), ctx())).toMatchObject({ ok: false, limit: 'size 0.50000001 is above the 0.5 allowed per order' });
  });

  it('max notional per order: at the limit covered, just over not; a market order uses the mid', () => {
    expect(evaluateGrant(grant({ maxNotional: '1500' }), order(), ctx()).ok).toBe(true);
    expect(evaluateGrant(grant({ maxNotional: '1499.99' }), order(), ctx())).toMatchObject({ ok: false, limit: 'notional 1500 USDC is above the 1499.99 USDC allowed per order' });
    expect(evaluateGrant(grant({ maxNotional: '1499' }), order({ price: undefined }), ctx()).ok).toBe(false);
  });

  it('daily notional over a rolling 24 h window', () => {
    const g = grant({ dailyNotional: '3000' });
    const uses = [{ at: NOW - 24 * 3_600_000 + 1, notional: '1500' }];
    expect(evaluateGrant(g, order(), ctx(uses)).ok).toBe(true); // 1500 + 1500 = 3000: at the limit
    expect(evaluateGrant(g, order({ size: '0.50001' }), ctx(uses)).ok).toBe(false); // just over
    expect(evaluateGrant(g, order({ size: '1' }), ctx(uses, NOW + 2)).ok).toBe(true); // the old use has left the window
  });

  it('max leverage', () => {
    expect(evaluateGrant(grant({ maxLeverage: 5 }), { kind: 'leverage', market: '2', leverage: 5 }, ctx()).ok).toBe(true);
    expect(evaluateGrant(grant({ maxLeverage: 5 }), { kind: 'leverage', market: '2', leverage: 6 }, ctx())).toMatchObject({ ok: false, limit: 'leverage 6× is above the 5× allowed' });
  });

  it('price band around the mid: at the edge covered, beyond not, market orders refused', () => {
    const g = grant({ priceBandPct: '2' });
    expect(evaluateGrant(g, order({ price: '3060' }), ctx()).ok).toBe(true);
    expect(evaluateGrant(g, order({ price: '2940' }), ctx()).ok).toBe(true);
    expect(evaluateGrant(g, order({ price: '3060.05' }), ctx())).toMatchObject({ ok: false, limit: 'price 3060.05 is more than 2% from the mid 3000' });
    expect(evaluateGrant(g, order({ price: undefined }), ctx()).ok).toBe(false);
  });

  it('post-only and reduce-only requirements', () => {
    expect(evaluateGrant(grant({ postOnly: true }), order(), ctx())).toMatchObject({ ok: false, limit: 'orders must be post-only' });
    expect(evaluateGrant(grant({ postOnly: true }), order({ postOnly: true }), ctx()).ok).toBe(true);
    expect(evaluateGrant(grant({ reduceOnly: true }), order(), ctx())).toMatchObject({ ok: false, limit: 'orders must be reduce-only' });
  });

  it('rate limit over a rolling minute', () => {
    const g = grant({ ratePerMinute: 2 });
    expect(evaluateGrant(g, { kind: 'cancel' }, ctx([{ at: NOW - 1000, notional: '0' }])).ok).toBe(true);
    expect(evaluateGrant(g, { kind: 'cancel' }, ctx([{ at: NOW - 1000, notional: '0' }, { at: NOW - 2000, notional: '0' }])).ok).toBe(false);
    expect(evaluateGrant(g, { kind: 'cancel' }, ctx([{ at: NOW - 60_001, notional: '0' }, { at: NOW - 2000, notional: '0' }])).ok).toBe(true);
  });

  it('a batch is judged order by order and counted as a whole', () => {
    const req: GrantRequest = { kind: 'order', venue: 'perps', orders: [{ market: '2', buy: true, size: '0.5', price: '3000' }, { market: '1', buy: true, size: '0.01', price: '65000' }] };
    expect(evaluateGrant(grant(), req, ctx())).toEqual({ ok: true, notional: '2150' });
    expect(evaluateGrant(grant({ instruments: [2] }), req, ctx()).ok).toBe(false);
  });
});
