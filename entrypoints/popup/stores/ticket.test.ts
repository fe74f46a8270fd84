import { describe, expect, it } from 'vitest';
import { createPerpsStore } from './perps';
import {
  createPerpsTicket,
  describeStatus,
  exceedsNotional,
  spreadOf,
  stepPrice,
  ticketKey,
  changePct,
} from './ticket';
import { fakeCall } from './testkit';
import { perpsTicketWords } from '../../../lib/perps/words';
import { RemoteError } from '../../../lib/messaging/client';

const BTC = {
  instrument_id: 1,
  symbol: 'BTC-PERP',
  price_decimals: 1,
  quantity_decimals: 3,
  max_leverage: 50,
  tick_size: '0.5',
  lot_size: '0.001',
};
const order = (status: string, filled: string) => ({
  order_id: 42,
  instrument_id: 1,
  buy: true,
  price: '101',
  quantity: '0.01',
  filled_quantity: filled,
  resting_quantity: '0',
  status,
});
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

/** A perps store over a fake venue: one instrument, a book 100 / 101, a portfolio, orders by id. */
async function setup(
  opts: {
    orders?: Record<string, unknown>[];
    placeFails?: boolean;
    maxPositionUsdc?: number;
    portfolio?: unknown;
    leverage?: number;
    book?: unknown;
  } = {},
) {
  const reads: Record<string, unknown> = {
    instruments: [BTC],
    fees: { fee_schedule: [{ taker_fee_rate: '0.0005', maker_fee_rate: '0.0002' }] },
    tickers: [
      {
        instrument_id: 1,
        mark_price: '100.5',
        index_price: '100.4',
        mid_price: '100.5',
        last_price: '100.5',
        funding_rate: '0',
      },
    ],
    book: opts.book ?? { bids: [['100', '2']], asks: [['101', '3']] },
    portfolio: opts.portfolio ?? PORTFOLIO,
    config: [{ instrument_id: 1, leverage: opts.leverage ?? 10, cross: true }],
    openOrders: [],
    statistics: [{ instrument_id: 1, open_price: '80', volume: '1' }],
  };
  const orderAnswers = [...(opts.orders ?? [])];
  const { call, calls } = fakeCall({
    'perps.read': (p) => (p.name === 'orders' ? [orderAnswers.shift()].filter(Boolean) : reads[String(p.name)]),
  });
  const store = createPerpsStore('0xabc', call);
  await store.start();
  store.stop();
  const sent: unknown[] = [];
  const ticket = createPerpsTicket({
    store,
    send: async (cmd) => {
      sent.push(cmd.body);
      return {};
    },
    place: async (cmd) => {
      sent.push(cmd.body);
      if (opts.placeFails) throw new RemoteError({ name: 'GatewayError', shortMessage: 'Insufficient margin' });
      return [{ oid: 42 }];
    },
    maxPositionUsdc: () => opts.maxPositionUsdc ?? 50_000,
    pollMs: 0,
    coid: (() => {
      let n = 0;
      return () => String(++n).padStart(32, '0');
    })(),
  });
  await ticket.loadConfig();
  return { store, ticket, calls, sent };
}

describe('stepPrice', () => {
  it('moves by one tick and snaps to the grid', () => {
    expect(stepPrice('100', '0.5', 1)).toBe('100.5');
    expect(stepPrice('100.3', '0.5', 1)).toBe('100.5');
    expect(stepPrice('100.3', '0.5', -1)).toBe('100');
  });
  it('never goes below one tick', () => expect(stepPrice('0.5', '0.5', -3)).toBe('0.5'));
});

describe('ticketKey', () => {
  const k = (key: string, mods: Partial<{ ctrlKey: boolean }> = {}) => ({
    key,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    ...mods,
  });
  it('maps B / S and 1-4 outside fields only', () => {
    expect(ticketKey(k('s'), false, false)).toEqual({ kind: 'side', buy: false });
    expect(ticketKey(k('3'), false, false)).toEqual({ kind: 'preset', fraction: '0.75' });
    expect(ticketKey(k('s'), true, false)).toBeUndefined();
    expect(ticketKey(k('b', { ctrlKey: true }), false, false)).toBeUndefined();
  });
  it('steps the price in the price field but not in the size field', () => {
    expect(ticketKey(k('ArrowUp'), true, true)).toEqual({ kind: 'step', steps: 1 });
    expect(ticketKey(k('ArrowDown'), true, false)).toBeUndefined();
  });
  it('submits on Enter outside fields and clears on Esc anywhere', () => {
    expect(ticketKey(k('Enter'), false, false)).toEqual({ kind: 'submit' });
    expect(ticketKey(k('Enter'), true, false)).toBeUndefined();
    expect(ticketKey(k('Escape'), true, false)).toEqual({ kind: 'clear' });
  });
});

describe('helpers', () => {
  it('describes venue statuses in plain words', () => {
    expect(describeStatus({ status: 'ioc_expired', filled_quantity: '0.4' })).toBe(
      'Partly filled (0.4), rest cancelled',
    );
    expect(describeStatus({ status: 'auto_cancelled', filled_quantity: '0' })).toBe('Cancelled by the dead-man switch');
    expect(describeStatus({ status: 'post_only_would_cross', filled_quantity: '0' })).toBe(
      'Rejected: post only would cross',
    );
  });
  it('compares a short position notional with the limit', () => {
    expect(exceedsNotional('-2', '30000', 50_000)).toBe(true);
    expect(exceedsNotional('1', '30000', 50_000)).toBe(false);
  });
  it('computes the spread and the 24 h change', () => {
    expect(spreadOf({ bids: [['100', '1']], asks: [['100.5', '1']] })).toBe('0.5');
    expect(spreadOf({ bids: [], asks: [['100.5', '1']] })).toBeUndefined();
    expect(changePct('110', '100')).toBeCloseTo(10);
    expect(changePct('110', '0')).toBeUndefined();
  });
});

describe('createPerpsTicket', () => {
  it('prefills the best ask to buy and the best bid to sell until a price is typed', async () => {
    const { ticket } = await setup();
    ticket.prefill();
    expect(ticket.price.value).toBe('101');
    ticket.buy.value = false;
    ticket.prefill();
    expect(ticket.price.value).toBe('100');
    ticket.setPrice('99');
    ticket.buy.value = true;
    ticket.prefill();
    expect(ticket.price.value).toBe('99');
    ticket.clear();
    expect(ticket.price.value).toBe('101');
  });

  it('builds a GTC order with the typed price and an IOC one without a price', async () => {
    const { ticket } = await setup();
    ticket.qty.value = '0.01';
    ticket.setPrice('100');
    expect(ticket.built.value.cmd?.body).toMatchObject({ type: 'createOrders' });
    expect(ticket.effectiveTif.value).toBe('gtc');
    ticket.setPrice('');
    expect(ticket.effectiveTif.value).toBe('ioc');
    ticket.qty.value = '';
    expect(ticket.built.value.cmd).toBeUndefined();
  });

  it('shows margin and fee before signing, and warns past the position limit', async () => {
    const { ticket } = await setup({ maxPositionUsdc: 1_000 });
    ticket.qty.value = '20';
    ticket.setPrice('100');
    expect(ticket.preview.value?.notional).toBe('2000');
    expect(ticket.warnings.value).toEqual(['The position would exceed 1,000 USDC notional (Settings).']);
    ticket.qty.value = '1';
    expect(ticket.warnings.value).toEqual([]);
  });

  it('sizes a preset from the free margin, in contracts', async () => {
    const { ticket } = await setup();
    ticket.unit.value = 'usdc';
    ticket.setPrice('100');
    ticket.preset('0.5');
    expect(ticket.unit.value).toBe('contracts');
    expect(Number(ticket.qty.value)).toBeGreaterThan(0);
    expect(Number(ticket.qty.value)).toBeLessThan(500);
  });

  it('places the order, follows it until it fills, then takes a new client id', async () => {
    const { ticket, sent } = await setup({ orders: [order('accepted', '0'), order('filled', '0.01')] });
    ticket.qty.value = '0.01';
    ticket.setPrice('101');
    await ticket.submit();
    expect(sent).toHaveLength(1);
    expect(ticket.result.value).toBe('Order #42: Filled 0.01');
    expect(ticket.coid.value).toBe('2'.padStart(32, '0'));
    expect(ticket.qty.value).toBe('');
    expect(ticket.busy.value).toBe(false);
  });

  it("shows the gateway's refusal and keeps the size", async () => {
    const { ticket } = await setup({ placeFails: true });
    ticket.qty.value = '0.01';
    await ticket.submit();
    expect(ticket.error.value).toBe('Insufficient margin');
    expect(ticket.qty.value).toBe('0.01');
    expect(ticket.coid.value).toBe('1'.padStart(32, '0'));
  });
});

describe('the numbers before the click', () => {
  const LONG = (size: string, entry: string) => ({
    positions: [
      {
        instrument_id: 1,
        symbol: 'BTC-PERP',
        size,
        entry_price: entry,
        leverage: 10,
        cross: true,
        initial_margin: '0',
        maintenance_margin: '1',
        position_value: '100',
        liquidation_price: '0',
        unrealized_pnl: '0',
        return_on_equity: '0',
        cumulative_funding: '0',
      },
    ],
    margin: {
      total_account_value: '10000',
      total_initial_margin: '0',
      total_maintenance_margin: '1',
      total_position_value: '100',
    },
    withdrawable: '10000',
  });

  it("uses the venue's leverage, shows a typed one as pending and never signs it", async () => {
    const { ticket, sent } = await setup({ leverage: 5, orders: [order('filled', '1')] });
    ticket.lev.value = '20';
    ticket.qty.value = '10';
    ticket.setPrice('100');
    expect(ticket.leverage.value).toBe(5);
    expect(ticket.pendingLeverage.value).toBe(20);
    expect(ticket.preview.value?.marginRequired).toBe('200');
    expect(ticket.warnings.value.join(' ')).toContain('20× is typed but not applied: this order uses 5×');
    await ticket.submit();
    expect(sent.map((b) => (b as { type: string }).type)).toEqual(['createOrders']);
  });

  it('an empty price sends a protected IOC limit at the best level + the cap, with the estimate shown', async () => {
    const { ticket } = await setup({
      book: {
        bids: [['100', '2']],
        asks: [
          ['101', '1'],
          ['101.5', '1'],
          ['103', '5'],
        ],
      },
    });
    ticket.qty.value = '2';
    ticket.setPrice('');
    expect(ticket.market.value).toMatchObject({
      limit: '102',
      avgPrice: '101.3',
      slippageBps: '24.75',
      complete: true,
    });
    expect(ticket.built.value.cmd?.body).toMatchObject({ args: [{ p: '102', tif: 'ioc', qty: '2' }] });
    ticket.slippage.value = '50';
    expect(ticket.built.value.cmd?.body).toMatchObject({ args: [{ p: '101.5' }] });
    ticket.slippage.value = '0';
    ticket.qty.value = '3';
    expect(ticket.warnings.value.join(' ')).toContain('Only 1 fills within the 0 % slippage cap');
  });

  it('disables submit with the reason when the margin is short, and the 100 % preset is never refused', async () => {
    const { ticket, sent } = await setup({ portfolio: { ...PORTFOLIO, withdrawable: '100' } });
    ticket.setPrice('');
    ticket.qty.value = '20';
    expect(ticket.canSubmit.value).toBe(false);
    expect(ticket.reason.value).toBe('Not enough free margin: the venue needs 204 USDC + 1.01 fee, 100 free.');
    await ticket.submit();
    expect(sent).toHaveLength(0);
    ticket.preset('1');
    // 100 ÷ (102/10 + 102 × 0.0005) at the protected limit 102 → 9.755…, lot 0.001
    expect(ticket.qty.value).toBe('9.755');
    expect(ticket.canSubmit.value).toBe(true);
    expect(ticket.reason.value).toBeUndefined();
  });

  it(
    "shows the max size by the presets' rule: a market order " +
      'at its protected limit, a limit at its price, per side',
    async () => {
      const { ticket } = await setup({ portfolio: { ...PORTFOLIO, withdrawable: '100' } });
      ticket.setPrice('');
      // Buy at market: 100 ÷ (102/10 + 102 × 0.0005) at the protected limit 102 (best ask 101 + 1 %, tick 0.5).
      expect(ticket.maxSize.value).toBe('9.755');
      ticket.preset('1');
      expect(ticket.qty.value).toBe(ticket.maxSize.value);
      // Sell at market: the limit is the best bid 100 − 1 % = 99.
      ticket.buy.value = false;
      expect(ticket.maxSize.value).toBe('10.05');
      // A limit at 100: at its price, fee "up to" the taker rate.
      ticket.setPrice('100');
      expect(ticket.maxSize.value).toBe('9.95');
      ticket.buy.value = true;
      ticket.po.value = true;
      // Post-only pays the maker rate: 100 ÷ (10 + 0.02).
      expect(ticket.maxSize.value).toBe('9.98');
    },
  );

  it('post-only shows the maker fee; a GTC limit "up to" the taker fee', async () => {
    const { ticket } = await setup();
    ticket.qty.value = '1';
    ticket.setPrice('99');
    expect(ticket.preview.value).toMatchObject({ fee: '0.0495', feeUpTo: true });
    ticket.po.value = true;
    expect(ticket.preview.value).toMatchObject({ fee: '0.0198', feeUpTo: false, marginRequired: '9.9' });
  });

  it('close position: the first click previews, the second sends reduce-only with the cap', async () => {
    const { ticket, sent } = await setup({ portfolio: LONG('2', '90') });
    await ticket.closePosition();
    expect(sent).toHaveLength(0);
    expect(ticket.closeArmed.value).toBe(true);
    expect(ticket.closePreview.value).toMatchObject({
      size: '2',
      avgPrice: '100',
      fee: '0.1',
      realizedPnl: '20',
      limit: '99',
    });
    await ticket.closePosition();
    expect(sent).toEqual([
      expect.objectContaining({
        args: [expect.objectContaining({ buy: false, qty: '2', p: '99', tif: 'ioc', ro: true })],
      }),
    ]);
    ticket.cancelClose();
  });

  it('TP / SL ride in the same command as reduce-only market triggers, on the right side of the price', async () => {
    const { ticket } = await setup();
    ticket.qty.value = '1';
    ticket.setPrice('101');
    ticket.tp.value = '110';
    ticket.sl.value = '95';
    expect(ticket.built.value.cmd?.body).toMatchObject({
      args: [
        { buy: true, qty: '1' },
        { buy: false, qty: '1', ro: true, tr: { tpsl: 'tp', trp: '110', market: true } },
        { buy: false, ro: true, tr: { tpsl: 'sl', trp: '95', market: true } },
      ],
    });
    ticket.sl.value = '105';
    expect(ticket.built.value.problem).toBe('Stop-loss must be below 101 for a long.');
    expect(ticket.canSubmit.value).toBe(false);
  });

  it('TP / SL go with the order they were sent with, and with the instrument they were typed for', async () => {
    const { ticket } = await setup({ orders: [order('filled', '1')] });
    ticket.qty.value = '1';
    ticket.setPrice('101');
    ticket.tp.value = '110';
    ticket.sl.value = '95';
    await ticket.submit();
    expect([ticket.tp.value, ticket.sl.value]).toEqual(['', '']);
    ticket.tp.value = '110';
    ticket.instrumentChanged();
    expect(ticket.tp.value).toBe('');
  });
});

describe('how the ticket names its instrument', () => {
  it(
    "names the instrument the order signs by its id beside the venue's symbol, " +
      'so look-alike names (BTC-PERP, BTC-PERF) cannot pass for each other',
    () => {
      const { call } = fakeCall({ 'perps.read': () => [] });
      const store = createPerpsStore('0xabc', call);
      store.instruments.value = [
        { ...BTC, symbol: 'BTC-PERF' },
        { ...BTC, instrument_id: 2, symbol: 'BTC-PERP' },
      ];
      store.iid.value = 2;
      const t = createPerpsTicket({ store, send: async () => ({}) } as never);
      // The instrument the order signs (its `iid`) is the one the ticket names.
      expect(t.instrument.value?.instrument_id).toBe(2);
      expect(t.label.value).toBe('BTC-PERP (#2)');
      expect(perpsTicketWords({ buy: true, contracts: '0.01', symbol: t.label.value, price: '' })).toContain(
        'BTC-PERP (#2)',
      );
    },
  );
});
