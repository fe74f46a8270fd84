/**
 * The order-book order words, pinned per surface by a table of orders: BUY and SELL, each order type, post-only,
 * negative risk, a maker that is not the signer, exact and inexact price ratios, grouped thousands; each surface its
 * exact words. A changed word fails the test naming the surface.
 */
import { describe, expect, it } from 'vitest';
import {
  clobCancelNoticeWords,
  clobFoundOrderWords,
  clobGrantOrderWords,
  clobOrderLine,
  clobOwnFillWords,
  clobTicketWords,
  clobTokenWords,
  clobVenueOrderWords,
  type ClobOrderFacts,
} from './words';

const TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const OWNER = '0x1234567890123456789012345678901234567890';
const WALLET = '0xabcdef0123456789abcdef0123456789abcdef01';

/**
 * One order of the table: as signed (`facts`: amounts in base units) with the words of the approval window's line
 * and Order row (`line`), and the ticket's amounts line (`ticket`); as the exchange reports it (`venue`: size, price,
 * outcome label) with the words of the open orders list and the cancel notification (`listed`), the fill
 * notification and trades list (`fill`), and the audit entry of the order found at the venue (`found`).
 */
type Row = {
  name: string;
  facts: ClobOrderFacts;
  price: string;
  line: string;
  ticket: string;
  venue: { size: string; price: string; outcome: string };
  listed: string;
  fill: string;
  found: string;
};

const order = (side: 'BUY' | 'SELL', makerAmount: string, takerAmount: string, more: object = {}) => ({
  side,
  tokenId: TOKEN,
  makerAmount,
  takerAmount,
  expiration: '0',
  maker: OWNER,
  signer: OWNER,
  ...more,
});

const TABLE: Row[] = [
  {
    name: 'a BUY, good-til-cancelled, at an exact price',
    facts: { order: order('BUY', '5500000', '10000000'), orderType: 'GTC', postOnly: false },
    price: '0.55',
    line: 'Buy 10.00 shares of token 713210…2563 at 0.55 (pay 5.50 USDC), good-til-cancelled',
    ticket: 'You pay 5.50 USDC (5500000 base units) for 10.00 shares (10000000 base units) at 0.55',
    venue: { size: '10', price: '0.55', outcome: 'Yes' },
    listed: 'Buy 10 “Yes” shares (token 713210…2563) at 0.55',
    fill: 'Bought 10 “Yes” shares (token 713210…2563) at 0.55',
    found: 'Buy 10 “Yes” shares (token 713210…2563) at 0.55 (open)',
  },
  {
    name: 'a SELL, good-til-cancelled, post-only',
    facts: { order: order('SELL', '10000000', '6000000'), orderType: 'GTC', postOnly: true },
    price: '0.6',
    line: 'Sell 10.00 shares of token 713210…2563 at 0.60 (receive 6.00 USDC), good-til-cancelled, post-only',
    ticket: 'You pay 10.00 shares (10000000 base units) for 6.00 USDC (6000000 base units) at 0.6',
    venue: { size: '10', price: '0.6', outcome: 'No' },
    listed: 'Sell 10 “No” shares (token 713210…2563) at 0.6',
    fill: 'Sold 10 “No” shares (token 713210…2563) at 0.6',
    found: 'Sell 10 “No” shares (token 713210…2563) at 0.6 (open)',
  },
  {
    name: 'a market BUY, fill-or-kill, whose amounts imply an inexact price',
    facts: { order: order('BUY', '5000000', '7142857'), orderType: 'FOK' },
    price: '0.7',
    line: 'Buy 7.142857 shares of token 713210…2563 at ≈0.70 (pay 5.00 USDC), fill-or-kill',
    ticket: 'You pay 5.00 USDC (5000000 base units) for 7.142857 shares (7142857 base units) at 0.7',
    venue: { size: '7.142857', price: '0.7', outcome: '' },
    listed: 'Buy 7.142857 shares of token 713210…2563 at 0.7',
    fill: 'Bought 7.142857 shares of token 713210…2563 at 0.7',
    found: 'Buy 7.142857 shares of token 713210…2563 at 0.7 (open)',
  },
  {
    name: 'a market SELL, fill-and-kill, on a negative-risk market, at an inexact price',
    facts: { order: order('SELL', '3000000', '1000000'), orderType: 'FAK', negRisk: true },
    price: '0.333',
    line: 'Sell 3.00 shares of token 713210…2563 at ≈0.333333 (receive 1.00 USDC), fill-and-kill, negative-risk market',
    ticket: 'You pay 3.00 shares (3000000 base units) for 1.00 USDC (1000000 base units) at 0.333',
    venue: { size: '3', price: '0.333', outcome: 'Trump' },
    listed: 'Sell 3 “Trump” shares (token 713210…2563) at 0.333',
    fill: 'Sold 3 “Trump” shares (token 713210…2563) at 0.333',
    found: 'Sell 3 “Trump” shares (token 713210…2563) at 0.333 (open)',
  },
  {
    name: 'a BUY, good-til-date, from a deposit wallet, grouped in thousands',
    facts: {
      order: order('BUY', '1500000000', '3000000000', { expiration: '1767225600', maker: WALLET }),
      orderType: 'GTD',
    },
    price: '0.5',
    line:
      'Buy 3,000.00 shares of token 713210…2563 at 0.50 (pay 1,500.00 USDC), ' +
      'good-til-date until 2026-01-01T00:00:00.000Z, maker 0xab…ef01',
    ticket: 'You pay 1,500.00 USDC (1500000000 base units) for 3,000.00 shares (3000000000 base units) at 0.5',
    venue: { size: '3000', price: '0.5', outcome: 'Yes' },
    listed: 'Buy 3,000 “Yes” shares (token 713210…2563) at 0.5',
    fill: 'Bought 3,000 “Yes” shares (token 713210…2563) at 0.5',
    found: 'Buy 3,000 “Yes” shares (token 713210…2563) at 0.5 (open)',
  },
];
const rows = TABLE.map((r) => [r.name, r] as const);
const reported = (r: Row) => ({ side: r.facts.order.side, asset_id: TOKEN, ...r.venue });

describe('the order-book order words, surface by surface', () => {
  it.each(rows)('window line: %s', (_, r) => {
    expect(clobOrderLine(r.facts)).toBe(r.line);
  });

  it.each(rows)('window Order row: %s', (_, r) => {
    // The row gets the order as signed beside its numbers (`ClobOrderNumbers`) and words it as the line.
    const numbers = { ...r.facts, usdc: '0', fee: '0', feeRateBps: 0 };
    expect(clobOrderLine(numbers)).toBe(r.line);
  });

  it.each(rows)('ticket amounts line: %s', (_, r) => {
    const { side, makerAmount, takerAmount } = r.facts.order;
    expect(clobTicketWords({ side, makerAmount, takerAmount, price: r.price })).toBe(r.ticket);
  });

  it.each(rows)('open orders list: %s', (_, r) => {
    expect(clobVenueOrderWords(reported(r))).toBe(r.listed);
  });

  it.each(rows)('notification line (cancel): %s', (_, r) => {
    const o = { ...reported(r), original_size: r.venue.size, size_matched: '0' };
    expect(clobCancelNoticeWords(o)).toBe(r.listed);
    expect(clobCancelNoticeWords({ ...o, size_matched: '2' })).toBe(`${r.listed} (2 had filled)`);
  });

  it.each(rows)('notification line (fill) and trades list: %s', (_, r) => {
    expect(clobOwnFillWords([reported(r)])).toBe(r.fill);
  });

  it.each(rows)('audit entry (order found at the venue): %s', (_, r) => {
    expect(clobFoundOrderWords(reported(r), 'open')).toBe(r.found);
    expect(clobFoundOrderWords(reported(r), 'traded')).toBe(r.found.replace('(open)', '(traded)'));
  });
});

describe('the order-book words of the surfaces beside the table', () => {
  it('notification line (fill): the first orders of a trade, then how many more', () => {
    const own = TABLE.map(reported);
    expect(clobOwnFillWords(own, 2)).toBe(
      'Bought 10 “Yes” shares (token 713210…2563) at 0.55; sold 10 “No” shares (token 713210…2563) at 0.6; ' +
        'and 3 more of your orders',
    );
  });

  it('numbers the exchange reports that are not decimals read as "?"', () => {
    expect(clobVenueOrderWords({ side: 'BUY', size: '1e3', price: 'NaN', asset_id: '11', outcome: '' })).toBe(
      'Buy ? shares of token 11 at ?',
    );
  });

  it('the exchange’s label beside the token id; the id alone when the label is refused, absent or its stand-in', () => {
    expect(clobTokenWords(TOKEN, 'Yes')).toBe('“Yes” shares (token 713210…2563)');
    expect(clobTokenWords('11', 'Y\u202Ees')).toBe('shares of token 11');
    expect(clobTokenWords('11', '')).toBe('shares of token 11');
    expect(clobTokenWords(TOKEN, 'token 713210…2563')).toBe('shares of token 713210…2563');
  });

  it.each([
    [
      'a size cap and post-only',
      { maxSize: '100', postOnly: true },
      ['At most 100 per order.', 'Post-only orders only.'],
    ],
    ['no order limits', {}, []],
  ])('grant words: %s', (_, g, lines) => {
    expect(clobGrantOrderWords(g)).toEqual(lines);
  });
});
