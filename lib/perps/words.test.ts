/**
 * The perps order words, pinned per surface by a table of orders: each row an order (both sides, limit and market,
 * each time in force, post-only, reduce-only, take-profit and stop-loss, a leg protecting the whole position, off-step
 * size and price, grouped thousands), each surface its exact words. A changed word fails the test naming the surface.
 */
import { describe, expect, it } from 'vitest';
import { createOrders, type PerpsOrderInput } from './commands';
import { summarizeCommand, type SummaryReader } from './summary';
import type { Instrument } from './wire';
import {
  describePerpsCommand,
  perpsCancelNoticeWords,
  perpsCommandOrderWords,
  perpsFillNoticeWords,
  perpsFoundOrderWords,
  perpsGrantOrderWords,
  perpsMarketLimitWords,
  perpsOpenOrderWords,
  perpsOrderWords,
  perpsTicketTriggerWords,
  perpsTicketWords,
  type VenueOrder,
} from './words';
import { instrumentLabel } from '../validation/venue-text';

const INSTRUMENTS: Instrument[] = [
  {
    instrument_id: 1,
    symbol: 'BTC-PERP',
    price_decimals: 1,
    quantity_decimals: 3,
    max_leverage: 50,
    tick_size: '0.5',
    lot_size: '0.001',
  },
  {
    instrument_id: 2,
    symbol: 'ETH-PERP',
    price_decimals: 2,
    quantity_decimals: 2,
    max_leverage: 20,
    tick_size: '0.01',
    lot_size: '0.01',
  },
];
const symbol = (iid: number) => instrumentLabel(iid, INSTRUMENTS.find((i) => i.instrument_id === iid)?.symbol);
const steps = (iid: number) => {
  const i = INSTRUMENTS.find((x) => x.instrument_id === iid);
  return { tick: i?.tick_size ?? '', lot: i?.lot_size ?? '' };
};

/**
 * One order of the table and its words on every surface (`null`: the surface never shows such an order). `window`:
 * the approval window's line when the venue's steps are unknown (with them it is `row`); `row`: its
 * "Order" row (or trigger line) with `notes`; `ticket`: the ticket's summary of the order typed; `open`: the open
 * orders list; `cancel`: the cancel notification's line; `found`: the audit entry of the order found at the venue.
 */
type Row = {
  name: string;
  order: PerpsOrderInput;
  group?: 'position';
  window: string;
  row: string;
  notes?: string[];
  ticket: string | null;
  open: string;
  cancel: string;
  found: string;
};

const W = ' — request weight 1, action weight 1';
const TABLE: Row[] = [
  {
    name: 'a buy limit, good-til-cancelled, post-only',
    order: { iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true },
    window: `Buy 0.5 ETH-PERP (#2) at 3,000, good-til-cancelled, post-only${W}`,
    row: 'Buy 0.50 ETH-PERP (#2) at 3,000.00, good-til-cancelled, post-only',
    ticket: 'Buy 0.50 ETH-PERP (#2) at 3,000.00',
    open: 'Buy 0.50 ETH-PERP (#2) at 3,000.00, good-til-cancelled, post-only',
    cancel: 'Buy 0.5 ETH-PERP (#2) at 3,000.00',
    found: 'Buy 0.5 instrument #2 at 3,000, good-til-cancelled, post-only (open)',
  },
  {
    name: 'a sell limit, good-til-cancelled, reduce-only',
    order: { iid: 2, buy: false, qty: '1.25', p: '3100.5', tif: 'gtc', ro: true },
    window: `Sell 1.25 ETH-PERP (#2) at 3,100.5, good-til-cancelled, reduce-only${W}`,
    row: 'Sell 1.25 ETH-PERP (#2) at 3,100.50, good-til-cancelled, reduce-only',
    ticket: 'Sell 1.25 ETH-PERP (#2) at 3,100.50',
    open: 'Sell 1.25 ETH-PERP (#2) at 3,100.50, good-til-cancelled, reduce-only',
    cancel: 'Sell 1.25 ETH-PERP (#2) at 3,100.50',
    found: 'Sell 1.25 instrument #2 at 3,100.5, good-til-cancelled, reduce-only (open)',
  },
  {
    name: 'a buy at market, immediate-or-cancel',
    order: { iid: 1, buy: true, qty: '0.013', tif: 'ioc' },
    window: `Buy 0.013 BTC-PERP (#1) at market, immediate-or-cancel${W}`,
    row: 'Buy 0.013 BTC-PERP (#1) at market, immediate-or-cancel',
    ticket: 'Buy 0.013 BTC-PERP (#1) at market',
    open: 'Buy 0.013 BTC-PERP (#1) at market, immediate-or-cancel',
    cancel: 'Buy 0.013 BTC-PERP (#1) at market',
    found: 'Buy 0.013 instrument #1 at market, immediate-or-cancel (open)',
  },
  {
    name: 'a sell limit in the thousands, fill-or-kill, reduce-only',
    order: { iid: 1, buy: false, qty: '2', p: '64400.5', tif: 'fok', ro: true },
    window: `Sell 2 BTC-PERP (#1) at 64,400.5, fill-or-kill, reduce-only${W}`,
    row: 'Sell 2.000 BTC-PERP (#1) at 64,400.5, fill-or-kill, reduce-only',
    ticket: 'Sell 2.000 BTC-PERP (#1) at 64,400.5',
    open: 'Sell 2.000 BTC-PERP (#1) at 64,400.5, fill-or-kill, reduce-only',
    cancel: 'Sell 2 BTC-PERP (#1) at 64,400.5',
    found: 'Sell 2 instrument #1 at 64,400.5, fill-or-kill, reduce-only (open)',
  },
  {
    name: 'a protected close: a sell limit, immediate-or-cancel, reduce-only',
    order: { iid: 1, buy: false, qty: '0.7', p: '63000', tif: 'ioc', ro: true },
    window: `Sell 0.7 BTC-PERP (#1) at 63,000, immediate-or-cancel, reduce-only${W}`,
    row: 'Sell 0.700 BTC-PERP (#1) at 63,000.0, immediate-or-cancel, reduce-only',
    ticket: 'Sell 0.700 BTC-PERP (#1) at 63,000.0',
    open: 'Sell 0.700 BTC-PERP (#1) at 63,000.0, immediate-or-cancel, reduce-only',
    cancel: 'Sell 0.7 BTC-PERP (#1) at 63,000.0',
    found: 'Sell 0.7 instrument #1 at 63,000, immediate-or-cancel, reduce-only (open)',
  },
  {
    name: 'a take-profit at market',
    order: { iid: 2, buy: false, qty: '0.5', ro: true, tr: { tpsl: 'tp', trp: '3300', market: true } },
    window: `Take-profit: sell 0.5 ETH-PERP (#2) at market when the mark reaches 3,300, reduce-only${W}`,
    row: 'Take-profit: sell 0.50 ETH-PERP (#2) at market when the mark reaches 3,300.00, reduce-only',
    ticket: null,
    open: 'Take-profit: sell 0.50 ETH-PERP (#2) at market when the mark reaches 3,300.00, reduce-only',
    cancel: 'Take-profit: sell 0.5 ETH-PERP (#2) at market when the mark reaches 3,300.00',
    found: 'Take-profit: sell 0.5 instrument #2 at market when the mark reaches 3,300, reduce-only (open)',
  },
  {
    name: 'a stop-loss with a limit, not reduce-only as signed',
    order: { iid: 2, buy: true, qty: '3', p: '2850', tr: { tpsl: 'sl', trp: '2900' } },
    // Reduce-only only when signed so.
    window: `Stop-loss: buy 3 ETH-PERP (#2) at 2,850 when the mark reaches 2,900${W}`,
    row: 'Stop-loss: buy 3.00 ETH-PERP (#2) at 2,850.00 when the mark reaches 2,900.00',
    ticket: null,
    // The venue reports a limit, not whether the trigger executes at market.
    open: 'Stop-loss: buy 3.00 ETH-PERP (#2) when the mark reaches 2,900.00 (limit 2,850.00 as the venue reports)',
    cancel: 'Stop-loss: buy 3 ETH-PERP (#2) when the mark reaches 2,900.00 (limit 2,850.00 as the venue reports)',
    found: 'Stop-loss: buy 3 instrument #2 when the mark reaches 2,900 (limit 2,850 as the venue reports) (open)',
  },
  {
    name: 'a stop-loss at market that also signs a limit',
    order: { iid: 2, buy: false, qty: '0.5', p: '2850', ro: true, tr: { tpsl: 'sl', trp: '2900', market: true } },
    window: `Stop-loss: sell 0.5 ETH-PERP (#2) at market (limit 2,850) when the mark reaches 2,900, reduce-only${W}`,
    row: 'Stop-loss: sell 0.50 ETH-PERP (#2) at market (limit 2,850.00) when the mark reaches 2,900.00, reduce-only',
    ticket: null,
    // The venue reports a limit, not whether the trigger executes at market.
    open:
      'Stop-loss: sell 0.50 ETH-PERP (#2) when the mark reaches 2,900.00 (limit 2,850.00 as the venue reports), ' +
      'reduce-only',
    // The cancel notice leaves out the order's flags.
    cancel: 'Stop-loss: sell 0.5 ETH-PERP (#2) when the mark reaches 2,900.00 (limit 2,850.00 as the venue reports)',
    found:
      'Stop-loss: sell 0.5 instrument #2 when the mark reaches 2,900 (limit 2,850 as the venue reports), ' +
      'reduce-only (open)',
  },
  {
    name: 'a stop-loss leg protecting the whole position',
    order: { iid: 1, buy: false, qty: '0', ro: true, tr: { tpsl: 'sl', trp: '60000', market: true } },
    group: 'position',
    window:
      'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 60,000, reduce-only',
    row:
      'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 60,000.0, reduce-only',
    ticket: null,
    open:
      'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 60,000.0, reduce-only',
    cancel: 'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market when the mark reaches 60,000.0',
    found:
      'Stop-loss: sell what the whole instrument #1 position holds at market ' +
      'when the mark reaches 60,000, reduce-only (open)',
  },
  {
    name: 'a take-profit leg protecting the whole short position, its trigger off the tick',
    order: { iid: 1, buy: true, qty: '0', ro: true, tr: { tpsl: 'tp', trp: '58000.25', market: true } },
    group: 'position',
    window:
      'Take-profit: buy what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 58,000.25, reduce-only',
    row:
      'Take-profit: buy what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 58,000.25, reduce-only',
    notes: ['Trigger price 58,000.25 is not a multiple of the tick 0.5 the venue reports.'],
    ticket: null,
    open:
      'Take-profit: buy what the whole BTC-PERP (#1) position holds at market ' +
      'when the mark reaches 58,000.25, reduce-only',
    cancel: 'Take-profit: buy what the whole BTC-PERP (#1) position holds at market when the mark reaches 58,000.25',
    found:
      'Take-profit: buy what the whole instrument #1 position holds at market ' +
      'when the mark reaches 58,000.25, reduce-only (open)',
  },
  {
    name: 'a buy whose size and price are off the steps the venue reports',
    order: { iid: 2, buy: true, qty: '0.505', p: '3000.005', tif: 'gtc' },
    window: `Buy 0.505 ETH-PERP (#2) at 3,000.005, good-til-cancelled${W}`,
    row: 'Buy 0.505 ETH-PERP (#2) at 3,000.005, good-til-cancelled',
    notes: [
      'Size 0.505 is not a multiple of the lot 0.01 the venue reports.',
      'Price 3,000.005 is not a multiple of the tick 0.01 the venue reports.',
    ],
    ticket: 'Buy 0.505 ETH-PERP (#2) at 3,000.005',
    open: 'Buy 0.505 ETH-PERP (#2) at 3,000.005, good-til-cancelled',
    cancel: 'Buy 0.505 ETH-PERP (#2) at 3,000.005',
    found: 'Buy 0.505 instrument #2 at 3,000.005, good-til-cancelled (open)',
  },
  {
    name: 'a large sell limit, grouped in thousands',
    order: { iid: 1, buy: false, qty: '1250.5', p: '1234567.5', tif: 'gtc' },
    window: `Sell 1,250.5 BTC-PERP (#1) at 1,234,567.5, good-til-cancelled${W}`,
    row: 'Sell 1,250.500 BTC-PERP (#1) at 1,234,567.5, good-til-cancelled',
    ticket: 'Sell 1,250.500 BTC-PERP (#1) at 1,234,567.5',
    open: 'Sell 1,250.500 BTC-PERP (#1) at 1,234,567.5, good-til-cancelled',
    cancel: 'Sell 1,250.5 BTC-PERP (#1) at 1,234,567.5',
    found: 'Sell 1,250.5 instrument #1 at 1,234,567.5, good-til-cancelled (open)',
  },
];

/** The order as the venue reports it (orders read, open orders, the account stream). */
const venueOf = (r: Row): VenueOrder & { resting_quantity: string; filled_quantity: string; status: string } => ({
  instrument_id: r.order.iid,
  buy: r.order.buy,
  price: r.order.p ?? '0',
  quantity: r.order.qty,
  resting_quantity: r.order.qty,
  filled_quantity: '0',
  status: 'open',
  ...(r.order.tif ? { tif: r.order.tif } : {}),
  ...(r.order.po ? { post_only: true } : {}),
  ...(r.order.ro ? { ro: true } : {}),
  ...(r.order.tr
    ? { tpsl: { kind: r.order.tr.tpsl, trp: r.order.tr.trp, scope: r.group === 'position' ? 'position' : 'order' } }
    : {}),
});
const commandOf = (r: Row) => createOrders({ orders: [r.order], ...(r.group ? { group: r.group } : {}) });
/** What the approval window's order numbers get: the command's orders summarised against the instruments read. */
const reader: SummaryReader = {
  instruments: async () => INSTRUMENTS,
  fees: async () => undefined,
  book: async () => ({ bids: [], asks: [] }),
  portfolio: async () => ({
    positions: [],
    margin: {
      total_account_value: '0',
      total_initial_margin: '0',
      total_maintenance_margin: '0',
      total_position_value: '0',
    },
    withdrawable: '0',
  }),
  leverage: async () => undefined,
  mark: async () => undefined,
};
const rows = TABLE.map((r) => [r.name, r] as const);

describe('the perps order words, surface by surface', () => {
  it.each(rows)('window line: %s', (_, r) => {
    // The page path reads the steps with the symbols: the line is the Order row's words (and the weights).
    expect(describePerpsCommand(commandOf(r), symbol, steps).lines[0]).toBe(r.group ? r.row : `${r.row}${W}`);
  });

  it.each(rows)('window line while the instruments cannot be read (no steps): %s', (_, r) => {
    expect(describePerpsCommand(commandOf(r), symbol).lines[0]).toBe(r.window);
  });

  it.each(rows)('window Order row: %s', async (_, r) => {
    const [summary] = await summarizeCommand([r.order], reader);
    expect(summary && perpsOrderWords(summary)).toEqual({ line: r.row, notes: r.notes ?? [] });
  });

  it.each(rows)('popup close and protect preview: %s', (_, r) => {
    expect(perpsCommandOrderWords(commandOf(r), symbol, steps(r.order.iid))).toEqual({
      line: r.row,
      notes: r.notes ?? [],
    });
  });

  it.each(rows.filter(([, r]) => r.ticket !== null))('ticket summary: %s', (_, r) => {
    const s = steps(r.order.iid);
    const typed = { contracts: r.order.qty, price: r.order.p ?? '', symbol: symbol(r.order.iid) };
    expect(perpsTicketWords({ buy: r.order.buy, ...typed, ...s })).toBe(r.ticket);
  });

  it.each(rows)('open orders list: %s', (_, r) => {
    expect(perpsOpenOrderWords(venueOf(r), symbol(r.order.iid), steps(r.order.iid))).toBe(r.open);
  });

  it.each(rows)('notification line (cancel): %s', (_, r) => {
    expect(perpsCancelNoticeWords(venueOf(r), symbol(r.order.iid), steps(r.order.iid).tick)).toBe(r.cancel);
  });

  it.each(rows)('audit entry (order found at the venue): %s', (_, r) => {
    expect(perpsFoundOrderWords(venueOf(r))).toBe(r.found);
  });
});

describe('the perps words of the surfaces beside the table', () => {
  it('window line: a batch lists one line per order, then the weights; a position group names itself', () => {
    const batch = createOrders({ orders: [TABLE[0]!.order, TABLE[2]!.order] });
    expect(describePerpsCommand(batch, symbol)).toEqual({
      title: 'Place 2 orders',
      lines: [
        'Buy 0.5 ETH-PERP (#2) at 3,000, good-til-cancelled, post-only',
        'Buy 0.013 BTC-PERP (#1) at market, immediate-or-cancel',
        '— request weight 1, action weight 2',
      ],
    });
    expect(describePerpsCommand(commandOf(TABLE[8]!), symbol).title).toBe('Protect a position');
  });

  it('window line: pads to the steps when the caller knows them', () => {
    expect(describePerpsCommand(commandOf(TABLE[0]!), symbol, steps).lines[0]).toBe(
      `Buy 0.50 ETH-PERP (#2) at 3,000.00, good-til-cancelled, post-only${W}`,
    );
  });

  it('ticket summary: an order still being typed', () => {
    expect(perpsTicketWords({ buy: false, contracts: '', symbol: 'BTC-PERP (#1)', price: '' })).toBe(
      'Sell … BTC-PERP (#1) at market',
    );
    expect(perpsTicketWords({ buy: true, contracts: '0.', symbol: 'BTC-PERP (#1)', price: '64000', tick: '0.5' })).toBe(
      'Buy 0. BTC-PERP (#1) at 64,000.0',
    );
  });

  it('ticket risk panel: the market limit and the take-profit / stop-loss rows', () => {
    expect(perpsMarketLimitWords('64640', '0.5', 100)).toBe('at 64,640.0, immediate-or-cancel (cap 1 %)');
    expect(perpsTicketTriggerWords('70000.5', '0.5')).toBe('at market when the mark reaches 70,000.5, reduce-only');
  });

  it('notification line (fill): the size of the match, its average, how much of the order is filled', () => {
    expect(
      perpsFillNoticeWords({
        buy: true,
        size: '0.5',
        symbol: 'ETH-PERP (#2)',
        avg: '3,000.50',
        progress: { filled: '0.5', quantity: '1' },
      }),
    ).toBe('Buy 0.5 ETH-PERP (#2) at an average 3,000.50 (0.5 of 1 filled)');
    expect(perpsFillNoticeWords({ buy: false, size: '2', symbol: 'instrument #9', avg: '≈1.33333333' })).toBe(
      'Sell 2 instrument #9 at an average ≈1.33333333',
    );
  });

  it('notification line (cancel): how much had filled', () => {
    expect(perpsCancelNoticeWords({ ...venueOf(TABLE[0]!), filled_quantity: '0.2' }, 'ETH-PERP (#2)', '0.01')).toBe(
      'Buy 0.5 ETH-PERP (#2) at 3,000.00 (0.2 had filled)',
    );
  });

  it('audit entry (order found at the venue): with its client order id and status', () => {
    expect(perpsFoundOrderWords({ ...venueOf(TABLE[1]!), client_order_id: 'ab12', status: 'filled' })).toBe(
      'Sell 1.25 instrument #2 at 3,100.5, good-til-cancelled, reduce-only, client order id ab12 (filled)',
    );
  });

  it.each([
    [
      'market and triggers, post-only, reduce-only, a size cap',
      { allow: { market: true, triggers: true }, slippagePct: '1', maxSize: '2', postOnly: true, reduceOnly: true },
      [
        'Market and trigger (stop / take-profit) orders allowed; they count at the reference price moved 1% against ' +
          'you (slippage allowance; a sell never counts below the reference price).',
        'At most 2 per order.',
        'Post-only orders only.',
        'Reduce-only orders only.',
      ],
    ],
    [
      'market orders without triggers',
      { allow: { market: true }, slippagePct: '0.5' },
      [
        'Market orders allowed, no trigger (stop / take-profit) orders; they count at the reference price moved 0.5% ' +
          'against you (slippage allowance; a sell never counts below the reference price).',
      ],
    ],
    [
      'limit orders only',
      { allow: {}, slippagePct: '1' },
      ['No market orders, no trigger (stop / take-profit) orders.'],
    ],
  ])('grant words: %s', (_, g, lines) => {
    expect(perpsGrantOrderWords(g)).toEqual(lines);
  });
});
