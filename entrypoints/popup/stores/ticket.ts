/**
 * The perps order ticket's state (issues #5, #10): what the person is typing (side, size and its unit,
 * price, time in force, post-only, reduce-only, leverage) and what follows from it over the perps
 * store's reads (the command that would be signed, the risk preview, the warnings, the 24 h change and
 * the spread). Actions place the order and follow it until the venue settles it, cancel, close and set
 * leverage. Plain signals: the `PerpsTicket` screen renders them, tests drive them with a fake store.
 */
import { computed, signal } from '@preact/signals';
import { cancelAll, cancelOrders, cancelOrdersCOID, createOrders, updateLeverage, type PerpsCommand, type TimeInForce } from '../../../lib/perps/commands';
import { bookAveragePrice, contractsForUsdc, maxOrderSize, previewOrder, type OrderPreview } from '../../../lib/perps/risk';
import { InvalidFieldError } from '../../../lib/validation';
import { fromUnits, toUnits } from '../../../lib/decimal';
import { messageOf } from '../api';
import { lotOf, tickOf, type OrderView, type PerpsStore } from './perps';

/** The size presets, fractions of what the free margin allows (keys 1-4). */
export const PRESETS = ['0.25', '0.5', '0.75', '1'] as const;

/** A fresh client order id: 32 lowercase hex characters (16 random bytes). */
export function newCoid(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Plain words for a venue order status (`filled_quantity` a decimal string). */
export function describeStatus(o: Pick<OrderView, 'status' | 'filled_quantity'>): string {
  const filled = Number(o.filled_quantity) > 0;
  switch (o.status) {
    case 'open':
      return 'Resting on the book';
    case 'partial':
      return `Resting (${o.filled_quantity} filled)`;
    case 'filled':
      return `Filled ${o.filled_quantity}`;
    case 'accepted':
      return 'Accepted, waiting for its trigger';
    case 'ioc_expired':
    case 'cancelled':
    case 'auto_cancelled':
      return filled ? `Partly filled (${o.filled_quantity}), rest cancelled` : `Cancelled${o.status === 'auto_cancelled' ? ' by the dead-man switch' : ''}`;
    case 'ioc_no_fill':
      return 'Cancelled: no liquidity at that price';
    default:
      return `Rejected: ${o.status.replace(/_/g, ' ')}`;
  }
}

/** `price` moved by `steps` ticks (exact decimals, snapping to the tick grid); never below one tick. */
export function stepPrice(price: string, tick: string, steps: number): string {
  const scale = Math.max((tick.split('.')[1] ?? '').length, (price.split('.')[1] ?? '').length);
  const t = toUnits(tick, scale) ?? 0n;
  const p = toUnits(price || '0', scale) ?? 0n;
  const next = p - (p % t) + BigInt(steps) * t + (steps < 0 && p % t !== 0n ? t : 0n);
  return fromUnits(next < t ? t : next, scale);
}

/** `|size| × price` exceeds `limitUsdc` (decimal strings, 8 decimals of precision; a negative size is short). */
export function exceedsNotional(size: string, price: string, limitUsdc: number): boolean {
  const notional = ((toUnits(size.replace('-', ''), 8) ?? 0n) * (toUnits(price, 8) ?? 0n)) / 10n ** 8n;
  return notional > BigInt(limitUsdc) * 10n ** 8n;
}

/** Mark price against the 24 h open as a percentage, or undefined without a positive open. */
export function changePct(mark: string, open: string): number | undefined {
  return Number(open) > 0 ? ((Number(mark) - Number(open)) / Number(open)) * 100 : undefined;
}

/** Best ask minus best bid (decimal strings, 8 decimals), or undefined when a side is empty. */
export function spreadOf(book: { bids: readonly [string, string][]; asks: readonly [string, string][] } | undefined): string | undefined {
  const ask = book?.asks[0]?.[0];
  const bid = book?.bids[0]?.[0];
  return ask && bid ? fromUnits((toUnits(ask, 8) ?? 0n) - (toUnits(bid, 8) ?? 0n), 8) : undefined;
}

/** What the ticket needs besides the perps store. */
export type PerpsTicketDeps = {
  store: PerpsStore;
  /** Signs and sends a command (the click is the consent); resolves to the venue's answer. */
  send: (cmd: PerpsCommand) => Promise<unknown>;
  /** Places an order and resolves to its acknowledgements (`perps.send` with a `createOrders` body). */
  place: (cmd: PerpsCommand) => Promise<{ oid: number }[]>;
  /** The position-size warning threshold (Settings, USDC notional). */
  maxPositionUsdc: () => number;
  /** Waits between two reads of the placed order (ms); tests pass 0. */
  pollMs?: number;
  /** Source of client order ids (default `newCoid`). */
  coid?: () => string;
};

/** The ticket: signals, derived values and actions. */
export type PerpsTicketState = ReturnType<typeof createPerpsTicket>;

/** What the person types or picks in the ticket, and the ticket's own notices. */
function ticketForm(makeCoid: () => string) {
  const buy = signal(true);
  const qty = signal('');
  const unit = signal<'contracts' | 'usdc'>('contracts');
  const price = signal('');
  const priceTouched = signal(false);
  const tif = signal<TimeInForce>('gtc');
  const po = signal(false);
  const ro = signal(false);
  const coid = signal(makeCoid());
  const lev = signal('10');
  const cross = signal(true);
  const error = signal<string | undefined>(undefined);
  const result = signal<string | undefined>(undefined);
  const busy = signal(false);

  return { buy, qty, unit, price, priceTouched, tif, po, ro, coid, lev, cross, error, result, busy };
}
type TicketForm = ReturnType<typeof ticketForm>;

/** What follows from the form over the perps store's reads: the instrument, the command, the risk preview, the warnings. */
function ticketOrder(store: PerpsStore, f: TicketForm, maxPositionUsdc: () => number) {
  const { buy, qty, unit, price, tif, po, ro, coid, lev } = f;
  const instrument = computed(() => store.instruments.value.find((i) => i.instrument_id === store.iid.value));
  const ticker = computed(() => store.tickers.value.find((t) => t.instrument_id === store.iid.value));
  const statistic = computed(() => store.statistics.value.find((s) => s.instrument_id === store.iid.value));
  const position = computed(() => store.portfolio.value?.positions.find((p) => p.instrument_id === store.iid.value));
  const best = computed(() => (buy.value ? store.book.value?.asks[0]?.[0] : store.book.value?.bids[0]?.[0]));
  const tick = computed(() => (instrument.value ? tickOf(instrument.value) : '0.01'));
  const lot = computed(() => (instrument.value ? lotOf(instrument.value) : '0.001'));
  const refPrice = computed(() => price.value || best.value || ticker.value?.mark_price || '');
  /** The size in contracts (converted from USDC at the reference price when the unit is USDC). */
  const contracts = computed(() => (unit.value === 'usdc' ? (qty.value && refPrice.value ? contractsForUsdc(qty.value, refPrice.value, lot.value) : '') : qty.value));
  const effectiveTif = computed<TimeInForce>(() => (price.value === '' && tif.value === 'gtc' ? 'ioc' : tif.value));
  const leverage = computed(() => Number(lev.value) || 1);
  const feeRate = computed(() => store.fees.value?.taker);

  /** The command that Buy / Sell would sign, or why the order cannot be built. */
  const built = computed((): { cmd?: PerpsCommand; problem?: string } => {
    const iid = store.iid.value;
    const size = contracts.value;
    if (iid === undefined || !size || size === '0') return {};
    const t = effectiveTif.value;
    try {
      return {
        cmd: createOrders({
          orders: [{ iid, buy: buy.value, qty: size, ...(price.value ? { p: price.value } : {}), tif: t, ...(po.value && t === 'gtc' ? { po: true } : {}), ...(ro.value ? { ro: true } : {}), c: coid.value }],
        }),
      };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? err.shortMessage : 'Check the order.' };
    }
  });

  /** The execution price the preview assumes: the typed price, else the book's average for the size, else the reference. */
  const execPrice = computed(() => {
    const levels = buy.value ? store.book.value?.asks : store.book.value?.bids;
    return price.value || (contracts.value && levels ? bookAveragePrice(levels, contracts.value) : null) || refPrice.value;
  });

  /** What the order does to the account (lib/perps/risk), once an order can be built and the portfolio is read. */
  const preview = computed((): OrderPreview | undefined => {
    const inst = instrument.value;
    const portfolio = store.portfolio.value;
    const exec = execPrice.value;
    const iid = store.iid.value;
    if (!built.value.cmd || !inst || !exec || !portfolio) return undefined;
    const pos = position.value;
    return previewOrder({
      buy: buy.value,
      qty: contracts.value,
      price: exec,
      leverage: leverage.value,
      feeRate: feeRate.value ?? '0',
      markPrice: ticker.value?.mark_price ?? exec,
      maxLeverage: inst.max_leverage,
      accountValue: portfolio.margin.total_account_value,
      withdrawable: portfolio.withdrawable,
      ...(pos ? { position: { size: pos.size, entryPrice: pos.entry_price } } : {}),
      otherMaintenance: fromUnits(
        portfolio.positions.filter((p) => p.instrument_id !== iid).reduce((a, p) => a + (toUnits(p.maintenance_margin, 8) ?? 0n), 0n),
        8,
      ),
    });
  });

  /** Plain-words warnings shown in the risk panel. */
  const warnings = computed(() => {
    const p = preview.value;
    const out: string[] = [];
    if (p?.flips && !ro.value) out.push('This order flips your position to the other side.');
    const limit = maxPositionUsdc();
    if (p?.grows && execPrice.value && Number(p.newSize) !== 0 && exceedsNotional(p.newSize, execPrice.value, limit)) {
      out.push(`The position would exceed ${limit.toLocaleString('en-US')} USDC notional (Settings).`);
    }
    if (p?.insufficientMargin) out.push('Not enough free margin for this order.');
    return out;
  });

  const change = computed(() => (ticker.value && statistic.value ? changePct(ticker.value.mark_price, statistic.value.open_price) : undefined));
  const spread = computed(() => spreadOf(store.book.value));

  return { instrument, ticker, position, best, tick, lot, refPrice, contracts, effectiveTif, leverage, feeRate, built, execPrice, preview, warnings, change, spread };
}
type TicketOrder = ReturnType<typeof ticketOrder>;

/** The ticket's actions: editing helpers, then placing, following and cancelling orders at the venue. */
function ticketActions({ store, send, place, pollMs = 300, coid: makeCoid = newCoid }: PerpsTicketDeps, f: TicketForm, o: TicketOrder) {
  const { qty, unit, price, priceTouched, po, ro, coid, lev, cross, error, result, busy } = f;
  const { instrument, position, best, tick, lot, refPrice, leverage, feeRate, built } = o;
  /** Follows the book's best level while the person has not typed a price. */
  function prefill(): void {
    if (!priceTouched.value && best.value) price.value = best.value;
  }
  /** The person typed or picked a price: it no longer follows the book. */
  function setPrice(p: string): void {
    priceTouched.value = true;
    price.value = p;
  }
  /** Moves the price by `steps` ticks from the typed price (else the best level). */
  function step(steps: number): void {
    setPrice(stepPrice(price.value || best.value || '0', tick.value, steps));
  }
  /** Sets the size to `fraction` of what the free margin allows, in contracts. */
  function preset(fraction: string): void {
    const portfolio = store.portfolio.value;
    if (!portfolio || !refPrice.value) return;
    unit.value = 'contracts';
    qty.value = maxOrderSize({ withdrawable: portfolio.withdrawable, price: refPrice.value, leverage: leverage.value, feeRate: feeRate.value ?? '0', lot: lot.value, fraction });
  }
  /** Switches the size unit (contracts ⇄ USDC) and clears the size. */
  function toggleUnit(): void {
    unit.value = unit.value === 'usdc' ? 'contracts' : 'usdc';
    qty.value = '';
  }
  /** Esc: empties the size, returns the price to the book, clears the notices and the flags. */
  function clear(): void {
    qty.value = '';
    priceTouched.value = false;
    price.value = best.value ?? '';
    error.value = undefined;
    result.value = undefined;
    po.value = false;
    ro.value = false;
  }
  /** Another instrument was chosen: the price follows its book again. */
  function instrumentChanged(): void {
    priceTouched.value = false;
  }
  /** Reads the account's leverage and margin mode for the instrument shown. */
  async function loadConfig(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return;
    const c = await store.read('config', { instrument_id: iid });
    if (c[0]) {
      lev.value = String(c[0].leverage);
      cross.value = c[0].cross;
    }
  }

  /** Places the built order, then reads it until the venue settles it (at most 20 reads). */
  async function submit(): Promise<void> {
    const cmd = built.value.cmd;
    if (!cmd || busy.value) return;
    busy.value = true;
    error.value = undefined;
    result.value = undefined;
    try {
      const [ack] = await place(cmd);
      if (!ack) throw new Error('no acknowledgement');
      result.value = `Acknowledged: order #${ack.oid}`;
      for (let i = 0; i < 20; i++) {
        const [o] = await store.read('orders', { order_id: ack.oid });
        if (o && o.status !== 'accepted') {
          result.value = `Order #${ack.oid}: ${describeStatus(o)}`;
          break;
        }
        await new Promise((res) => setTimeout(res, pollMs));
      }
      coid.value = makeCoid();
      qty.value = '';
      await store.refresh();
    } catch (err) {
      error.value = messageOf(err);
    } finally {
      busy.value = false;
    }
  }

  /** Sends `cmd`; on success shows `done` and refreshes the store, else shows the error. */
  async function act(cmd: PerpsCommand, done: string): Promise<void> {
    error.value = undefined;
    try {
      await send(cmd);
      result.value = done;
      await store.refresh();
    } catch (err) {
      error.value = messageOf(err);
    }
  }
  /** A reduce-only IOC market order for the whole position on the instrument shown. */
  function closePosition(): Promise<void> {
    const pos = position.value;
    const iid = store.iid.value;
    if (!pos || iid === undefined) return Promise.resolve();
    const size = pos.size.replace('-', '');
    return act(createOrders({ orders: [{ iid, buy: pos.size.startsWith('-'), qty: size, tif: 'ioc', ro: true }] }), `Close order sent for ${size} ${instrument.value?.symbol ?? ''}`);
  }
  /** Sets the typed leverage and margin mode for the instrument shown. */
  function applyLeverage(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return Promise.resolve();
    return act(updateLeverage({ iid, lev: Number(lev.value), cross: cross.value }), `Leverage set to ${lev.value}×`);
  }
  /** Cancels one open order by venue id. */
  const cancel = (oid: number) => act(cancelOrders({ oids: [oid] }), `Order #${oid} cancelled`);
  /** Cancels one open order by client order id. */
  const cancelByCoid = (c: string) => act(cancelOrdersCOID({ coids: [c] }), `Order ${c.slice(0, 8)}… cancelled`);
  /** Cancels every open order. */
  const cancelEverything = () => act(cancelAll({}), 'All orders cancelled');

  return { prefill, setPrice, step, preset, toggleUnit, clear, instrumentChanged, loadConfig, submit, act, closePosition, applyLeverage, cancel, cancelByCoid, cancelEverything };
}

/**
 * Creates the ticket over the perps store. The price follows the book's best level on the chosen side
 * (`prefill`) until the person types or picks one; an empty price sends a market-style IOC order.
 */
export function createPerpsTicket(deps: PerpsTicketDeps) {
  const form = ticketForm(deps.coid ?? newCoid);
  const order = ticketOrder(deps.store, form, deps.maxPositionUsdc);
  return { ...form, ...order, ...ticketActions(deps, form, order) };
}

/** What a key press does in the ticket. */
export type TicketKeyAction = { kind: 'clear' } | { kind: 'step'; steps: 1 | -1 } | { kind: 'submit' } | { kind: 'side'; buy: boolean } | { kind: 'preset'; fraction: string };

/**
 * The ticket's keyboard map: Esc clears; ↑ / ↓ move the price one tick (outside text fields, or in the
 * price field); Enter submits outside text fields; B / S pick the side and 1-4 the presets outside
 * text fields and without Ctrl / Meta / Alt. `typing`: the key went to an input, select or textarea.
 */
export function ticketKey(e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }, typing: boolean, inPriceField: boolean): TicketKeyAction | undefined {
  if (e.key === 'Escape') return { kind: 'clear' };
  if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && (!typing || inPriceField)) return { kind: 'step', steps: e.key === 'ArrowUp' ? 1 : -1 };
  if (e.key === 'Enter' && !typing) return { kind: 'submit' };
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return undefined;
  const k = e.key.toLowerCase();
  if (k === 'b' || k === 's') return { kind: 'side', buy: k === 'b' };
  const fraction = PRESETS[['1', '2', '3', '4'].indexOf(k)];
  return fraction ? { kind: 'preset', fraction } : undefined;
}
