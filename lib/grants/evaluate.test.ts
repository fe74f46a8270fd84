import { describe, expect, it } from 'vitest';
import {
  describeGrant,
  evaluateGrant,
  type Grant,
  type GrantOrder,
  type GrantRequest,
  type GrantUse,
  type RefPrice,
} from './evaluate';

const NOW = 1_800_000_000_000;
const TOK = '1234567890123456789';
const perps = (over: Partial<Extract<Grant, { venue: 'perps' }>> = {}): Grant => ({
  id: 'g1',
  origin: 'https://trade.example',
  account: '0xabc',
  createdAt: NOW - 1000,
  expiresAt: NOW + 8 * 3_600_000,
  venue: 'perps',
  instruments: [1, 2],
  names: { '1': 'BTC-PERP', '2': 'ETH-PERP' },
  allow: { order: true, cancel: true, leverage: true, market: true, triggers: true },
  maxNotional: '2000',
  dailyNotional: '20000',
  priceBandPct: '2',
  slippagePct: '1',
  maxLeverage: 5,
  ...over,
});
const clob = (over: Partial<Extract<Grant, { venue: 'clob' }>> = {}): Grant => ({
  id: 'g2',
  origin: 'https://trade.example',
  account: '0xabc',
  createdAt: NOW - 1000,
  expiresAt: NOW + 8 * 3_600_000,
  venue: 'clob',
  markets: [TOK],
  allow: { order: true },
  maxNotional: '2000',
  dailyNotional: '20000',
  priceBandPct: '2',
  ...over,
});
const refs: Record<string, RefPrice> = {
  '1': { price: '65000', source: 'mark' },
  '2': { price: '3000', source: 'mark' },
  [TOK]: { price: '0.5', source: 'midpoint' },
};
const ctx = (uses: GrantUse[] = [], now = NOW, ref: (m: string) => RefPrice | undefined = (m) => refs[m]) => ({
  now,
  uses,
  ref,
});
const order = (o: Partial<GrantOrder> = {}): GrantRequest => ({
  kind: 'order',
  venue: 'perps',
  orders: [{ market: '2', buy: true, size: '0.5', price: '3000', ...o }],
});
const clobOrder = (o: Partial<GrantOrder> = {}): GrantRequest => ({
  kind: 'order',
  venue: 'clob',
  orders: [{ market: TOK, buy: true, size: '100', price: '0.5', quote: '50', ...o }],
});

describe('evaluateGrant', () => {
  it('covers an order inside every limit and counts its notional', () => {
    expect(evaluateGrant(perps(), order(), ctx())).toEqual({ ok: true, notional: '1500' });
    expect(evaluateGrant(clob(), clobOrder(), ctx())).toEqual({ ok: true, notional: '50' });
  });

  it('a grant covers only its own venue and its listed instruments / markets', () => {
    expect(evaluateGrant(perps(), clobOrder(), ctx())).toEqual({
      ok: false,
      limit: 'this permission covers only the perps venue',
    });
    expect(evaluateGrant(clob(), order(), ctx())).toEqual({
      ok: false,
      limit: 'this permission covers only the order book',
    });
    expect(evaluateGrant(perps({ instruments: [1] }), order(), ctx())).toEqual({
      ok: false,
      limit: 'ETH-PERP is not in this permission',
    });
    expect(evaluateGrant(clob(), clobOrder({ market: '99' }), ctx())).toEqual({
      ok: false,
      limit: 'market 99 is not in this permission',
    });
    expect(
      evaluateGrant(perps({ instruments: [1] }), { kind: 'leverage', venue: 'perps', market: '2', leverage: 2 }, ctx()),
    ).toMatchObject({ ok: false });
  });

  it('notional is the higher of size × limit and size × reference; the band bounds the limit price', () => {
    const g = perps({ instruments: [1] });
    // A sell of 0.2 BTC at 1: outside the band.
    expect(evaluateGrant(g, order({ market: '1', buy: false, size: '0.2', price: '1' }), ctx())).toEqual({
      ok: false,
      limit: 'price 1 is more than 2% from the mark price 65000',
    });
    // 0.031 BTC at 63 700 (−2 %): 1 974.7 at the limit, 2 015 at the mark.
    expect(evaluateGrant(g, order({ market: '1', buy: false, size: '0.031', price: '63700' }), ctx())).toEqual({
      ok: false,
      limit: 'notional 2015 USDC is above the 2000 USDC allowed per order',
    });
    // A buy above the mark counts at its limit.
    expect(evaluateGrant(g, order({ market: '1', size: '0.03', price: '66300' }), ctx())).toEqual({
      ok: true,
      notional: '1989',
    });
    // Order book: the committed collateral is a floor (a market-style BUY's size is USDC, not shares).
    expect(evaluateGrant(clob(), clobOrder({ size: '10', price: '0.5', quote: '2000.000001' }), ctx())).toMatchObject({
      ok: false,
      limit: 'notional 2000.000001 USDC is above the 2000 USDC allowed per order',
    });
  });

  it('the band: at the edge covered, a hair beyond not, on both sides; the mid is named when there is no mark', () => {
    expect(evaluateGrant(perps(), order({ price: '3060' }), ctx()).ok).toBe(true);
    expect(evaluateGrant(perps(), order({ price: '2940', buy: false }), ctx()).ok).toBe(true);
    expect(evaluateGrant(perps(), order({ price: '3060.000000000000000001' }), ctx())).toEqual({
      ok: false,
      limit: 'price 3060.000000000000000001 is more than 2% from the mark price 3000',
    });
    expect(
      evaluateGrant(
        perps(),
        order({ price: '2939.99' }),
        ctx(undefined, NOW, () => ({ price: '3000', source: 'mid' })),
      ),
    ).toEqual({ ok: false, limit: 'price 2939.99 is more than 2% from the mid price 3000' });
    expect(evaluateGrant(clob(), clobOrder({ price: '0.52' }), ctx()).ok).toBe(false);
    expect(evaluateGrant(clob(), clobOrder({ price: '0.51' }), ctx()).ok).toBe(true);
  });

  it('no reference price: nothing is covered, not even a limit order inside the caps', () => {
    expect(
      evaluateGrant(
        perps(),
        order(),
        ctx([], NOW, () => undefined),
      ),
    ).toEqual({ ok: false, limit: 'the reference price of ETH-PERP is unknown, so the order cannot be checked' });
    expect(
      evaluateGrant(
        perps(),
        order(),
        ctx([], NOW, () => ({ price: '0', source: 'mark' })),
      ).ok,
    ).toBe(false);
  });

  it('per-order cap: at the cap covered, just over not', () => {
    expect(evaluateGrant(perps({ maxNotional: '1500' }), order(), ctx()).ok).toBe(true);
    expect(evaluateGrant(perps({ maxNotional: '1499.999999' }), order(), ctx())).toEqual({
      ok: false,
      limit: 'notional 1500 USDC is above the 1499.999999 USDC allowed per order',
    });
  });

  it('daily cap over a rolling 24 h window: at the cap covered, just over not, old uses leave the window', () => {
    const g = perps({ dailyNotional: '3000' });
    const uses = [{ at: NOW - 24 * 3_600_000 + 1, notional: '1500' }];
    expect(evaluateGrant(g, order(), ctx(uses))).toEqual({ ok: true, notional: '1500' });
    expect(evaluateGrant(g, order({ size: '0.500001' }), ctx(uses))).toEqual({
      ok: false,
      limit: 'the daily notional would reach 3000.003 USDC, above the 3000 USDC allowed',
    });
    expect(evaluateGrant(g, order({ size: '0.6' }), ctx(uses, NOW + 2)).ok).toBe(true);
  });

  it(
    'slippage: a market buy counts at the reference moved up ' +
      'by the allowance; a market sell never below the reference',
    () => {
      // 0.5 ETH market buy: 0.5 × 3000 × 1.01 = 1515.
      expect(evaluateGrant(perps(), order({ price: undefined }), ctx())).toEqual({ ok: true, notional: '1515' });
      expect(evaluateGrant(perps({ maxNotional: '1514.99' }), order({ price: undefined }), ctx())).toEqual({
        ok: false,
        limit: 'notional 1515 USDC is above the 1514.99 USDC allowed per order',
      });
      expect(evaluateGrant(perps({ slippagePct: '2.5' }), order({ price: undefined }), ctx())).toEqual({
        ok: true,
        notional: '1537.5',
      });
      expect(evaluateGrant(perps(), order({ price: undefined, buy: false }), ctx())).toEqual({
        ok: true,
        notional: '1500',
      });
      // Rounded up, never down: 0.000001 × 3000 × 1.01 = 0.00303.
      expect(evaluateGrant(perps(), order({ price: undefined, size: '0.000001' }), ctx())).toEqual({
        ok: true,
        notional: '0.00303',
      });
    },
  );

  it(
    'market and trigger orders are opt-in; a trigger is a market ' +
      'order for "no market orders"; the band bounds the trigger price',
    () => {
      const stop: Partial<GrantOrder> = { price: undefined, buy: false, trigger: { price: '2950', market: true } };
      const noMarket = perps({ allow: { order: true } });
      expect(evaluateGrant(noMarket, order(stop), ctx())).toEqual({
        ok: false,
        limit: 'trigger (stop / take-profit) orders are not allowed',
      });
      expect(evaluateGrant(noMarket, order({ price: undefined }), ctx())).toEqual({
        ok: false,
        limit: 'market orders are not allowed',
      });
      expect(evaluateGrant(perps({ allow: { order: true, market: true } }), order(stop), ctx())).toEqual({
        ok: false,
        limit: 'trigger (stop / take-profit) orders are not allowed',
      });
      // A grant that says triggers but not market orders (the schema refuses it) still refuses them.
      expect(evaluateGrant(perps({ allow: { order: true, triggers: true } }), order(stop), ctx())).toMatchObject({
        ok: false,
      });
      // Allowed: inside the band covered, counted at the higher of trigger and reference (sell: not lowered).
      expect(evaluateGrant(perps(), order(stop), ctx())).toEqual({ ok: true, notional: '1500' });
      expect(evaluateGrant(perps(), order({ ...stop, trigger: { price: '2939', market: true } }), ctx())).toEqual({
        ok: false,
        limit: 'trigger price 2939 is more than 2% from the mark price 3000',
      });
      // A limit trigger: both its limit and its trigger price must be in the band; a buy counts with slippage.
      expect(
        evaluateGrant(perps(), order({ price: '3050', trigger: { price: '3055', market: false } }), ctx()),
      ).toEqual({
        ok: true,
        notional: '1527.5',
      });
      expect(
        evaluateGrant(perps(), order({ price: '3061', trigger: { price: '3055', market: false } }), ctx()).ok,
      ).toBe(false);
      // Post-only grants refuse market and trigger orders (never post-only).
      expect(evaluateGrant(perps({ postOnly: true }), order(stop), ctx())).toEqual({
        ok: false,
        limit: 'orders must be post-only',
      });
    },
  );

  it('cancels reach only orders placed under the grant (by id or client order id)', () => {
    const uses: GrantUse[] = [
      { at: NOW - 1000, notional: '10', seq: 1, orders: [{ oid: 7 }, { oid: 8, coid: 'ab'.repeat(16) }] },
    ];
    const cancel = (oids: number[], coids: string[] = []): GrantRequest => ({
      kind: 'cancel',
      venue: 'perps',
      oids,
      coids,
    });
    expect(evaluateGrant(perps(), cancel([7, 8]), ctx(uses))).toEqual({ ok: true, notional: '0' });
    expect(evaluateGrant(perps(), cancel([], ['ab'.repeat(16)]), ctx(uses)).ok).toBe(true);
    expect(evaluateGrant(perps(), cancel([7, 9]), ctx(uses))).toEqual({
      ok: false,
      limit: 'order 9 was not placed under this permission',
    });
    expect(evaluateGrant(perps(), cancel([], ['cd'.repeat(16)]), ctx(uses)).ok).toBe(false);
    expect(evaluateGrant(perps({ allow: { order: true } }), cancel([7]), ctx(uses))).toEqual({
      ok: false,
      limit: 'cancels are not allowed',
    });
    expect(evaluateGrant(perps(), cancel([]), ctx(uses))).toEqual({
      ok: false,
      limit: 'a cancel must name the orders it cancels',
    });
  });

  it('never-grantable requests, expiry, leverage, post-only, reduce-only, size and rate', () => {
    expect(evaluateGrant(perps(), { kind: 'never', what: 'A withdrawal' }, ctx())).toEqual({
      ok: false,
      limit: 'A withdrawal always needs your approval',
    });
    const g = perps();
    expect(evaluateGrant(g, order(), ctx([], g.expiresAt - 1)).ok).toBe(true);
    expect(evaluateGrant(g, order(), ctx([], g.expiresAt))).toEqual({ ok: false, limit: 'the permission has expired' });
    expect(evaluateGrant(perps(), { kind: 'leverage', venue: 'perps', market: '2', leverage: 5 }, ctx()).ok).toBe(true);
    expect(evaluateGrant(perps(), { kind: 'leverage', venue: 'perps', market: '2', leverage: 6 }, ctx())).toEqual({
      ok: false,
      limit: 'leverage 6× is above the 5× allowed',
    });
    expect(
      evaluateGrant(
        perps({ allow: { order: true } }),
        { kind: 'leverage', venue: 'perps', market: '2', leverage: 1 },
        ctx(),
      ),
    ).toEqual({ ok: false, limit: 'leverage changes are not allowed' });
    expect(evaluateGrant(perps({ postOnly: true }), order(), ctx())).toEqual({
      ok: false,
      limit: 'orders must be post-only',
    });
    expect(evaluateGrant(perps({ postOnly: true }), order({ postOnly: true }), ctx()).ok).toBe(true);
    expect(evaluateGrant(perps({ reduceOnly: true }), order(), ctx())).toEqual({
      ok: false,
      limit: 'orders must be reduce-only',
    });
    expect(evaluateGrant(perps({ maxSize: '0.5' }), order({ size: '0.5' }), ctx()).ok).toBe(true);
    expect(evaluateGrant(perps({ maxSize: '0.5' }), order({ size: '0.50000001' }), ctx())).toEqual({
      ok: false,
      limit: 'size 0.50000001 is above the 0.5 allowed per order',
    });
    const two = [
      { at: NOW - 1000, notional: '0' },
      { at: NOW - 2000, notional: '0' },
    ];
    expect(evaluateGrant(perps({ ratePerMinute: 2 }), order(), ctx(two))).toEqual({
      ok: false,
      limit: 'more than 2 requests in a minute',
    });
    expect(
      evaluateGrant(perps({ ratePerMinute: 2 }), order(), ctx([{ at: NOW - 60_001, notional: '0' }, two[0]!])).ok,
    ).toBe(true);
    // An amount with more decimals than the evaluator keeps is not covered (never rounded to zero).
    expect(evaluateGrant(perps(), order({ size: '0.0000000000000000001' }), ctx()).ok).toBe(false);
  });

  it('a batch is judged order by order and counted as a whole', () => {
    const req: GrantRequest = {
      kind: 'order',
      venue: 'perps',
      orders: [
        { market: '2', buy: true, size: '0.5', price: '3000' },
        { market: '1', buy: true, size: '0.01', price: '65000' },
      ],
    };
    expect(evaluateGrant(perps(), req, ctx())).toEqual({ ok: true, notional: '2150' });
    expect(evaluateGrant(perps({ instruments: [2] }), req, ctx()).ok).toBe(false);
    expect(evaluateGrant(perps({ dailyNotional: '2149' }), req, ctx()).ok).toBe(false);
  });
});

describe('describeGrant', () => {
  it('says the venue, the names, the caps, the band and the reference, and "no market orders" only when true', () => {
    const narrow = perps({ instruments: [1], allow: { order: true, cancel: true } });
    expect(describeGrant(narrow)).toEqual([
      'Perps venue only: BTC-PERP.',
      'May place orders, cancel the orders it placed under this permission. Never: move funds, manage keys, ' +
        'cancel all orders or orders it did not place, change the auto-cancel timer, isolated margin.',
      'Reference price: the mark price (the mid price when the venue shows no mark).',
      'Prices within 2% of the reference price.',
      'At most 2000 USDC notional per order and 20000 USDC per 24 h; ' +
        'an order counts at the higher of its price and the reference price.',
      'No market orders, no trigger (stop / take-profit) orders.',
      "Uses at most half of Countersign's request and action weight at the venue each minute (all sites together); " +
        'the rest is kept for your own closes, cancels and panic.',
      'Until 2027-01-15 16:00 UTC.',
    ]);
    const wide = describeGrant(perps());
    expect(wide).toContain(
      'Market and trigger (stop / take-profit) orders allowed; they count at the reference price ' +
        'moved 1% against you (slippage allowance; a sell never counts below the reference price).',
    );
    expect(wide).toContain('Limit and trigger prices within 2% of the reference price.');
    expect(wide.join(' ')).toContain('set cross-margin leverage up to 5×');
    expect(wide.join(' ')).not.toContain('No market orders');
    expect(describeGrant(perps({ allow: { order: true, market: true } }))).toContain(
      'Market orders allowed, no trigger (stop / take-profit) orders; they count at the reference ' +
        'price moved 1% against you (slippage allowance; a sell never counts below the reference price).',
    );
    const book = describeGrant(clob({ names: { [TOK]: 'Will it rain? — Yes' } }));
    expect(book.slice(0, 4)).toEqual([
      'Order book only: Will it rain? — Yes.',
      'May place orders. Never: move funds, manage keys, cancel all orders or ' +
        'orders it did not place, change the auto-cancel timer, isolated margin.',
      'Reference price: the midpoint.',
      'Prices within 2% of the reference price.',
    ]);
    expect(book.join(' ')).not.toMatch(/market orders|slippage|cancel the orders/);
  });
});
