import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApprovalStore, type FocusSource } from './approvals';
import { fakeCall, FakeFailure } from './testkit';
import { createOrders } from '../../../lib/perps/commands';
import { clobOrderLine } from '../../../lib/clob/words';

const request = (id: string, digest: string) => ({
  id,
  origin: 'https://app.example',
  kind: 'perps',
  title: 'Place an order',
  lines: [],
  flags: [],
  signer: 'proxy key',
  digest,
  account: null,
  createdAt: Date.now(),
  expiresAt: Date.now() + 60_000,
});

function focusSource(initial: boolean) {
  let focused = initial;
  let handlers: { onFocus: () => void; onBlur: () => void } | undefined;
  const source: FocusSource = {
    has: () => focused,
    listen: (onFocus, onBlur) => ((handlers = { onFocus, onBlur }), () => (handlers = undefined)),
  };
  return {
    source,
    focus: () => {
      focused = true;
      handlers?.onFocus();
    },
    blur: () => {
      focused = false;
      handlers?.onBlur();
    },
  };
}

async function setup(opts: { focused?: boolean; reportShown?: boolean; decideFails?: boolean } = {}) {
  let pending = [request('a', '0x01')];
  const { call, calls } = fakeCall({
    'approval.list': () => pending,
    'approval.decide': (p) => {
      if (opts.decideFails)
        throw new FakeFailure({ name: 'ApprovalNotFoundError', shortMessage: 'That request expired.' });
      pending = pending.filter((r) => r.id !== p.id);
      return null;
    },
    'approval.showing': () => null,
    'grant.offer': () => ({
      venue: 'perps',
      markets: [{ id: '2', name: 'ETH' }],
      equity: '1000',
      proposal: { maxNotional: '100', dailyNotional: '1000', priceBandPct: '2' },
    }),
  });
  const onEmpty = vi.fn();
  const f = focusSource(opts.focused ?? true);
  const store = createApprovalStore({
    call,
    onEmpty,
    reportShown: opts.reportShown ?? false,
    focus: f.source,
    pollMs: 10_000,
  });
  const stop = store.start();
  await vi.advanceTimersByTimeAsync(0);
  return { store, calls, onEmpty, f, stop, setPending: (p: ReturnType<typeof request>[]) => (pending = p) };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('createApprovalStore', () => {
  it('arms Approve only after 1 s of focus, and disarms on blur', async () => {
    const { store, f, stop } = await setup();
    expect(store.head.value?.id).toBe('a');
    expect(store.armed.value).toBe(false);
    await vi.advanceTimersByTimeAsync(999);
    expect(store.armed.value).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.armed.value).toBe(true);
    f.blur();
    expect(store.armed.value).toBe(false);
    f.focus();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.armed.value).toBe(true);
    stop();
  });

  it('never arms without focus, and ignores Approve while disarmed', async () => {
    const { store, calls, stop } = await setup({ focused: false });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(store.armed.value).toBe(false);
    await store.decide(true);
    expect(calls.some((c) => c.type === 'approval.decide')).toBe(false);
    stop();
  });

  it('approves with the digest shown, then reports the empty queue', async () => {
    const { store, calls, onEmpty, stop } = await setup();
    await vi.advanceTimersByTimeAsync(1_000);
    await store.decide(true);
    expect(calls.find((c) => c.type === 'approval.decide')?.payload).toEqual({
      id: 'a',
      approve: true,
      digest: '0x01',
    });
    expect(store.head.value).toBeUndefined();
    expect(onEmpty).toHaveBeenCalledOnce();
    stop();
  });

  it('rejects without a digest and shows a refusal in plain words', async () => {
    const { store, calls, stop } = await setup({ decideFails: true });
    await store.decide(false);
    expect(calls.find((c) => c.type === 'approval.decide')?.payload).toEqual({ id: 'a', approve: false });
    expect(store.error.value).toBe('That request expired.');
    stop();
  });

  it('disarms when the artifact is refreshed (new digest) and tells the background in the window', async () => {
    const { store, calls, setPending, stop } = await setup({ reportShown: true });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.armed.value).toBe(true);
    setPending([request('a', '0x02')]);
    await store.load();
    expect(store.armed.value).toBe(false);
    expect(calls.filter((c) => c.type === 'approval.showing').map((c) => c.payload.digest)).toEqual(['0x01', '0x02']);
    stop();
  });

  it('forgets the grant offer when another request is shown', async () => {
    const { store, setPending, stop } = await setup();
    await store.offer();
    expect(store.granting.value).toBeDefined();
    setPending([request('b', '0x03')]);
    await store.load();
    expect(store.granting.value).toBeUndefined();
    stop();
  });
});

describe('the approval window shows the order numbers', () => {
  it('summarises a perps createOrders artifact from the venue reads, TP / SL listed', async () => {
    const op = createOrders({
      orders: [
        { iid: 2, buy: true, qty: '0.5', p: '3000', tif: 'gtc', po: true },
        { iid: 2, buy: false, qty: '0.5', ro: true, tr: { tpsl: 'sl', trp: '2900', market: true } },
      ],
    }).body;
    const artifact = {
      kind: 'perps',
      account: '0x5aa4000000000000000000000000000000000307',
      envelope: { op, salt: 1, ts: 1 },
      signDigests: ['0xaa'],
    };
    const reads: Record<string, unknown> = {
      instruments: [
        {
          instrument_id: 2,
          symbol: 'ETH-PERP',
          price_decimals: 2,
          quantity_decimals: 2,
          max_leverage: 50,
          tick_size: '0.05',
          lot_size: '0.01',
        },
      ],
      fees: { fee_schedule: [{ taker_fee_rate: '0.0005', maker_fee_rate: '0.0001' }] },
      book: { bids: [['3120', '4']], asks: [['3121', '4']] },
      portfolio: {
        positions: [],
        margin: {
          total_account_value: '1000',
          total_initial_margin: '0',
          total_maintenance_margin: '0',
          total_position_value: '0',
        },
        withdrawable: '1000',
      },
      config: [{ instrument_id: 2, leverage: 5, cross: true }],
      tickers: [
        {
          instrument_id: 2,
          mark_price: '3120.5',
          index_price: '3120.5',
          mid_price: '3120.5',
          last_price: '3120.5',
          funding_rate: '0',
        },
      ],
    };
    const { call, calls } = fakeCall({
      'approval.list': () => [{ ...request('p', '0x02'), artifact }],
      'approval.showing': () => null,
      'perps.read': (p) => reads[String(p.name)],
    });
    const store = createApprovalStore({ call, onEmpty: vi.fn(), focus: focusSource(true).source, pollMs: 10_000 });
    const stop = store.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    const s = store.head.value?.summary;
    expect(store.head.value?.orderCount).toBe(2);
    expect(s?.orders[0]?.summary?.preview).toMatchObject({
      notional: '1500',
      marginRequired: '300',
      fee: '0.15',
      feeUpTo: false,
      newSize: '0.5',
      newEntry: '3000',
    });
    expect(s?.orders[1]).toMatchObject({ trigger: { kind: 'sl', trp: '2900' }, ro: true });
    // The account's reads carry the account; the window never asks for a secret.
    expect(
      calls.filter((c) => c.type === 'perps.read' && (c.payload as { name: string }).name === 'portfolio')[0]?.payload,
    ).toMatchObject({ account: artifact.account });
    stop();
  });
});

describe('an order-book request shows its cost and fee', () => {
  it('BUY: cost = maker amount, shares = taker amount, fee at the book rate', async () => {
    const artifact = {
      kind: 'clob',
      orders: [
        {
          body: {
            orderType: 'GTC',
            order: { side: 'BUY', tokenId: '101', makerAmount: '3100000', takerAmount: '10000000' },
          },
        },
      ],
      signDigests: [],
    };
    const { call } = fakeCall({
      'approval.list': () => [{ ...request('c', '0x03'), artifact }],
      'approval.showing': () => null,
      'clob.book': () => ({
        tickSize: '0.01',
        minSize: '5',
        negRisk: false,
        bestBid: null,
        bestAsk: null,
        bids: [],
        asks: [],
        feeRateBps: 200,
      }),
    });
    const store = createApprovalStore({ call, onEmpty: vi.fn(), focus: focusSource(true).source, pollMs: 10_000 });
    const stop = store.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    const [numbers, ...more] = store.head.value?.summary?.clob ?? [];
    expect(more).toEqual([]);
    expect(numbers).toMatchObject({ usdc: '3.10', fee: '0.062', feeRateBps: 200, orderType: 'GTC' });
    // window Order row: the order book's words of the order as signed (the window's line words it the same).
    expect(numbers && clobOrderLine(numbers)).toBe(
      'Buy 10.00 shares of token 101 at 0.31 (pay 3.10 USDC), good-til-cancelled',
    );
    stop();
  });
});
