/**
 * The perps order ticket's state (issues #5, #10): what the person is typing (side, size and its unit,
 * price, time in force, post-only, reduce-only, leverage) and what follows from it over the perps
 * store's reads (the command that would be signed, the risk preview, the warnings, the 24 h change and
 * the spread). Actions place the order and follow it until the venue settles it, cancel, close and set
 * leverage. Plain signals: the `PerpsTicket` screen renders them, tests drive them with a fake store.
 */
import { computed, signal } from '@preact/signals';
import { cancelAll, cancelOrders, cancelOrdersCOID, createOrders, updateLeverage, type PerpsCommand, type PerpsOrderInput, type TimeInForce } from '../../../lib/perps/commands';
import { summarizeOrder } from '../../../lib/perps/summary';
import { contractsForUsdc, decimalsOf, DEFAULT_SLIPPAGE_BPS, estimateMarket, maxOrderSize, previewOrder, type Liquidity, type MarketEstimate, type OrderPreview } from '../../../lib/perps/risk';
import { InvalidFieldError } from '../../../lib/validation';
import { fromUnits, toUnits } from '../../../lib/decimal';
import { messageOf } from '../api';
import { lotOf, tickOf, type OrderView, type PerpsStore } from './perps';
import { perpsCommandOrderWords } from '../../../lib/format/order-words';
import { instrumentLabel } from '../../../lib/validation/venue-text';

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
    case 'untriggered':
      return 'Accepted, waiting for its trigger';
    case 'armed':
      return 'Armed: fires when the mark crosses its trigger';
    case 'triggered':
      return `Triggered${filled ? `, filled ${o.filled_quantity}` : ''}`;
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
  /** The protected market orders' slippage cap from Settings, basis points (default `DEFAULT_SLIPPAGE_BPS`). */
  slippageBps?: () => number;
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
  /** The leverage typed in the leverage form (applied only by "Apply"; never used by the preview). */
  const lev = signal('10');
  const cross = signal(true);
  /** The venue's leverage and margin mode for the instrument (`config` read); undefined until read. */
  const venueLev = signal<number | undefined>(undefined);
  const venueCross = signal(true);
  /** Per-order slippage cap, basis points as typed ('' = the Settings value). */
  const slippage = signal('');
  /** Optional take-profit / stop-loss trigger prices attached to a new order ('' = none). */
  const tp = signal('');
  const sl = signal('');
  /** "Close position" was clicked once: the preview is shown and the next click or Enter sends it. */
  const closeArmed = signal(false);
  const error = signal<string | undefined>(undefined);
  const result = signal<string | undefined>(undefined);
  const busy = signal(false);

  return { buy, qty, unit, price, priceTouched, tif, po, ro, coid, lev, cross, venueLev, venueCross, slippage, tp, sl, closeArmed, error, result, busy };
}
type TicketForm = ReturnType<typeof ticketForm>;

/** The slippage cap in force (per order when typed and valid, else Settings), basis points 0-1000. */
export function capBps(typed: string, fallback: number): number {
  const n = /^\d{1,4}$/.test(typed) ? Number(typed) : fallback;
  return Math.min(1_000, Math.max(0, n));
}

/** Why TP / SL prices do not fit the order's side (a long's take-profit above the price, its stop-loss below), or undefined. */
export function tpslProblem(buy: boolean, ref: string, tp: string, sl: string): string | undefined {
  const r = toUnits(ref, 8);
  if (r === undefined) return undefined;
  const tpU = tp ? toUnits(tp, 8) : undefined;
  const slU = sl ? toUnits(sl, 8) : undefined;
  if (tp && (tpU === undefined || (buy ? tpU <= r : tpU >= r))) return `Take-profit must be ${buy ? 'above' : 'below'} ${ref} for a ${buy ? 'long' : 'short'}.`;
  if (sl && (slU === undefined || (buy ? slU >= r : slU <= r))) return `Stop-loss must be ${buy ? 'below' : 'above'} ${ref} for a ${buy ? 'long' : 'short'}.`;
  return undefined;
}

/** The instrument's reads the ticket follows (instrument, ticker, statistic, position, best level, tick, lot). */
function ticketReads(store: PerpsStore, f: TicketForm) {
  const instrument = computed(() => store.instruments.value.find((i) => i.instrument_id === store.iid.value));
  /** How the ticket names its instrument: the venue's symbol beside the id the order signs (`instrumentLabel`). */
  const label = computed(() => (instrument.value ? instrumentLabel(instrument.value.instrument_id, instrument.value.symbol) : ''));
  const ticker = computed(() => store.tickers.value.find((t) => t.instrument_id === store.iid.value));
  const statistic = computed(() => store.statistics.value.find((s) => s.instrument_id === store.iid.value));
  const position = computed(() => store.portfolio.value?.positions.find((p) => p.instrument_id === store.iid.value));
  const best = computed(() => (f.buy.value ? store.book.value?.asks[0]?.[0] : store.book.value?.bids[0]?.[0]));
  const tick = computed(() => (instrument.value ? tickOf(instrument.value) : '0.01'));
  const lot = computed(() => (instrument.value ? lotOf(instrument.value) : '0.001'));
  /** The venue's leverage for the instrument: the config read, else the position row's; undefined until one is read. */
  const leverage = computed(() => f.venueLev.value ?? position.value?.leverage);
  /** A leverage typed and not applied: shown as pending, never used (the order goes at the venue's). */
  const pendingLeverage = computed(() => {
    const typed = Number(f.lev.value);
    return leverage.value !== undefined && Number.isInteger(typed) && typed > 0 && typed !== leverage.value ? typed : undefined;
  });
  return { instrument, label, ticker, statistic, position, best, tick, lot, leverage, pendingLeverage };
}
type TicketReads = ReturnType<typeof ticketReads>;

/** The protected market order's estimate (an empty price) and the price the venue checks margin at. */
function ticketMarket(store: PerpsStore, f: TicketForm, r: TicketReads, slippageBps: () => number) {
  const refPrice = computed(() => f.price.value || r.best.value || r.ticker.value?.mark_price || '');
  /** The size in contracts (converted from USDC at the reference price when the unit is USDC). */
  const contracts = computed(() => (f.unit.value === 'usdc' ? (f.qty.value && refPrice.value ? contractsForUsdc(f.qty.value, refPrice.value, r.lot.value) : '') : f.qty.value));
  const cap = computed(() => capBps(f.slippage.value, slippageBps()));
  /** An empty price: the IOC limit at the best level ± the cap, with the average and slippage from the visible book. */
  const market = computed((): MarketEstimate | undefined => {
    if (f.price.value !== '') return undefined;
    const levels = f.buy.value ? store.book.value?.asks : store.book.value?.bids;
    return levels ? estimateMarket(levels, f.buy.value, contracts.value || '0', cap.value, r.tick.value) : undefined;
  });
  /** The price the venue charges margin at: the typed limit, else the protected limit. */
  const marginPrice = computed(() => f.price.value || market.value?.limit || '');
  return { refPrice, contracts, cap, market, marginPrice };
}

/** What follows from the form over the perps store's reads: the instrument, the command, the risk preview, the warnings. */
function ticketOrder(store: PerpsStore, f: TicketForm, maxPositionUsdc: () => number, slippageBps: () => number) {
  const { buy, price, tif, po, ro, coid, tp, sl } = f;
  const r = ticketReads(store, f);
  const m = ticketMarket(store, f, r, slippageBps);
  const { instrument, ticker, statistic, position, best, leverage } = r;
  const { contracts, market, marginPrice } = m;
  const effectiveTif = computed<TimeInForce>(() => (price.value === '' ? (tif.value === 'fok' ? 'fok' : 'ioc') : tif.value));
  /** Which fees the order pays: maker for post-only, taker for IOC / FOK / market, either for a GTC limit. */
  const liquidity = computed<Liquidity>(() => (effectiveTif.value !== 'gtc' ? 'taker' : po.value ? 'maker' : 'either'));
  const feeRate = computed(() => store.fees.value && (liquidity.value === 'maker' ? store.fees.value.maker : store.fees.value.taker));

  /** The command that Buy / Sell would sign (with its TP / SL trigger orders), or why the order cannot be built. */
  const built = computed((): { cmd?: PerpsCommand; order?: PerpsOrderInput; problem?: string } => {
    const iid = store.iid.value;
    const size = contracts.value;
    if (iid === undefined || !size || size === '0') return {};
    const t = effectiveTif.value;
    const p = price.value || market.value?.limit;
    if (!p) return { problem: 'No book to price a market order: type a limit price.' };
    const tpsl = tpslProblem(buy.value, price.value || best.value || p, tp.value, sl.value);
    if (tpsl) return { problem: tpsl };
    const exit = (kind: 'tp' | 'sl', trp: string) => ({ iid, buy: !buy.value, qty: size, ro: true, tr: { tpsl: kind, trp, market: true } });
    const order: PerpsOrderInput = { iid, buy: buy.value, qty: size, p, tif: t, ...(po.value && t === 'gtc' ? { po: true } : {}), ...(ro.value ? { ro: true } : {}), c: coid.value };
    try {
      return {
        cmd: createOrders({ orders: [order, ...(tp.value ? [exit('tp', tp.value)] : []), ...(sl.value ? [exit('sl', sl.value)] : [])] }),
        order,
      };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? err.shortMessage : 'Check the order.' };
    }
  });

  /** The execution price the preview assumes: the typed price, else the book's average within the cap, else the reference. */
  const execPrice = computed(() => price.value || market.value?.avgPrice || m.refPrice.value);
  /** The typed limit rests (does not cross the best level on the other side): post-only, or a GTC limit below the ask / above the bid. */
  const rests = computed(() => {
    if (effectiveTif.value !== 'gtc' || !price.value) return false;
    const other = buy.value ? store.book.value?.asks[0]?.[0] : store.book.value?.bids[0]?.[0];
    const p = toUnits(price.value, 8);
    const o = other === undefined ? undefined : toUnits(other, 8);
    return po.value || o === undefined || p === undefined || (buy.value ? p < o : p > o);
  });

  /** What the order does to the account (lib/perps/summary — the approval window's code too), once an order can be built and the portfolio, fees and leverage are read. */
  const preview = computed((): OrderPreview | undefined => {
    const instrumentRead = instrument.value;
    const portfolio = store.portfolio.value;
    const book = store.book.value;
    const fees = store.fees.value;
    const lv = leverage.value;
    const order = built.value.order;
    if (!order || !instrumentRead || !portfolio || !book || !fees || lv === undefined) return undefined;
    const mark = ticker.value?.mark_price;
    return summarizeOrder(order, { instrument: instrumentRead, book, portfolio, fees, leverage: lv, ...(mark ? { markPrice: mark } : {}) })?.preview;
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
    if (market.value && !market.value.complete && market.value.avgPrice) out.push(`Only ${market.value.fillable} fills within the ${m.cap.value / 100} % slippage cap; the rest is cancelled.`);
    if (r.pendingLeverage.value !== undefined) out.push(`Leverage ${r.pendingLeverage.value}× is typed but not applied: this order uses ${leverage.value}×.`);
    return out;
  });

  /** Whether Buy / Sell can go, and why not (the submit button shows the reason). */
  const canSubmit = computed(() => reasonOf() === undefined);
  const reason = computed(() => reasonOf());
  function reasonOf(): string | undefined {
    if (!built.value.cmd) return built.value.problem ?? 'Enter a size.';
    if (f.busy.value) return 'Sending…';
    const p = preview.value;
    if (!p) return leverage.value === undefined ? 'Reading the leverage…' : 'Reading the account…';
    if (market.value && !market.value.avgPrice) return `Nothing fills within the ${m.cap.value / 100} % slippage cap.`;
    if (p.reduceOnlyInvalid) return 'Reduce-only: there is no position to reduce on this side.';
    if (p.insufficientMargin) return `Not enough free margin: the venue needs ${p.marginCheck} USDC + ${p.fee} fee, ${store.portfolio.value?.withdrawable ?? '0'} free.`;
    return undefined;
  }

  /**
   * `fraction` (0-1, decimal string) of the largest size the venue accepts for margin, in contracts,
   * under its rule for the order kind: a limit at its price, a market order at its protected limit
   * (the worst price it may reach under the slippage cap), at the venue's leverage and the order's fee
   * rate; undefined until the portfolio, the leverage and a price are read (issue #19 finding 3).
   */
  function sizeFor(fraction: string): string | undefined {
    const portfolio = store.portfolio.value;
    const lv = leverage.value;
    const mp = marginPrice.value;
    if (!portfolio || lv === undefined || !mp) return undefined;
    return maxOrderSize({ withdrawable: portfolio.withdrawable, price: mp, leverage: lv, feeRate: feeRate.value ?? '0', lot: r.lot.value, fraction });
  }
  /** The max-size readout (issue #19 finding 8): the 100 % preset's size for the current side and order kind, in contracts. */
  const maxSize = computed(() => sizeFor('1'));

  const change = computed(() => (ticker.value && statistic.value ? changePct(ticker.value.mark_price, statistic.value.open_price) : undefined));
  const spread = computed(() => spreadOf(store.book.value));

  return { ...r, ...m, effectiveTif, liquidity, feeRate, built, execPrice, rests, preview, warnings, canSubmit, reason, sizeFor, maxSize, change, spread };
}
type TicketOrder = ReturnType<typeof ticketOrder>;

/** The close-position order and its preview: reduce-only IOC at the best level ± the cap, the whole position. */
function ticketClose(store: PerpsStore, f: TicketForm, o: TicketOrder) {
  const closeOrder = computed((): { cmd: PerpsCommand; size: string; buy: boolean; estimate: MarketEstimate } | undefined => {
    const pos = o.position.value;
    const iid = store.iid.value;
    if (!pos || iid === undefined || Number(pos.size) === 0) return undefined;
    const buy = pos.size.startsWith('-');
    const size = pos.size.replace('-', '');
    const levels = buy ? store.book.value?.asks : store.book.value?.bids;
    const estimate = levels ? estimateMarket(levels, buy, size, o.cap.value, o.tick.value) : undefined;
    if (!estimate) return undefined;
    return { cmd: createOrders({ orders: [{ iid, buy, qty: size, p: estimate.limit, tif: 'ioc', ro: true }] }), size, buy, estimate };
  });
  /** What closing does: the size, estimated price and slippage, fee and realised PnL (lib/perps/risk over the venue's reads). */
  const closePreview = computed(() => {
    const c = closeOrder.value;
    const pos = o.position.value;
    const portfolio = store.portfolio.value;
    const fees = store.fees.value;
    const inst = o.instrument.value;
    if (!c || !pos || !portfolio || !fees || !inst || !c.estimate.avgPrice) return undefined;
    const p = previewOrder({
      buy: c.buy,
      qty: c.estimate.fillable,
      // The exact average (not the tick-rounded one shown): realised PnL is a small difference of prices.
      price: c.estimate.avgExact ?? c.estimate.avgPrice,
      leverage: pos.leverage,
      fees,
      liquidity: 'taker',
      reduceOnly: true,
      markPrice: o.ticker.value?.mark_price ?? c.estimate.avgPrice,
      maxLeverage: inst.max_leverage,
      priceDecimals: decimalsOf(o.tick.value),
      accountValue: portfolio.margin.total_account_value,
      withdrawable: portfolio.withdrawable,
      position: { size: pos.size, entryPrice: pos.entry_price },
    });
    // The words of the close order that is sent, from that order (the instrument beside its id).
    const words = perpsCommandOrderWords(c.cmd, (iid) => instrumentLabel(iid, inst.symbol), { tick: o.tick.value, lot: o.lot.value });
    if (!words) return undefined;
    return { order: words.head, notes: words.notes, size: c.size, fillable: c.estimate.fillable, limit: c.estimate.limit, avgPrice: c.estimate.avgPrice, slippageBps: c.estimate.slippageBps, fee: p.fee, realizedPnl: p.realizedPnl, complete: c.estimate.complete };
  });
  return { closeOrder, closePreview };
}
type TicketClose = ReturnType<typeof ticketClose>;

/** The ticket's actions: editing helpers, then placing, following and cancelling orders at the venue. */
function ticketActions({ store, send, place, pollMs = 300, coid: makeCoid = newCoid }: PerpsTicketDeps, f: TicketForm, o: TicketOrder, close: TicketClose) {
  const { qty, unit, price, priceTouched, po, ro, coid, lev, cross, error, result, busy } = f;
  const { best, tick, built } = o;
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
  /**
   * Sets the size to `fraction` of what the free margin allows, in contracts, under the venue's rule for
   * the order kind: a limit at its price, a market order at its protected limit (the worst price it may
   * reach), at the venue's leverage — so a preset is never refused for margin (issue #19 finding 3).
   */
  function preset(fraction: string): void {
    // A market order's limit depends on the book only (not the size), so the size does not move it.
    const size = o.sizeFor(fraction);
    if (size === undefined) return;
    unit.value = 'contracts';
    qty.value = size;
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
    f.tp.value = '';
    f.sl.value = '';
    f.closeArmed.value = false;
  }
  /** Another instrument was chosen: the price follows its book again; its leverage is read anew; notices, TP / SL prices (the old instrument's) and a pending close go. */
  function instrumentChanged(): void {
    priceTouched.value = false;
    f.tp.value = '';
    f.sl.value = '';
    f.venueLev.value = undefined;
    f.closeArmed.value = false;
    result.value = undefined;
    error.value = undefined;
  }
  /** Reads the account's leverage and margin mode for the instrument shown. */
  async function loadConfig(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return;
    const c = await store.read('config', { instrument_id: iid });
    if (c[0] && store.iid.value === iid) {
      lev.value = String(c[0].leverage);
      cross.value = c[0].cross;
      f.venueLev.value = c[0].leverage;
      f.venueCross.value = c[0].cross;
    }
  }

  /** Places the built order, then reads it until the venue settles it (at most 20 reads). */
  async function submit(): Promise<void> {
    const cmd = built.value.cmd;
    if (!cmd || !o.canSubmit.value) return;
    busy.value = true;
    error.value = undefined;
    result.value = undefined;
    try {
      const [ack] = await place(cmd);
      if (!ack) throw new Error('no acknowledgement');
      result.value = `Acknowledged: order #${ack.oid}`;
      for (let i = 0; i < 20; i++) {
        // Issue #22: while the stream is live its order event settles this without a read.
        const pushed = await store.orderPushed(ack.oid, pollMs);
        const [o] = pushed ? [pushed] : await store.read('orders', { order_id: ack.oid });
        if (o && o.status !== 'accepted' && o.status !== 'untriggered' && o.status !== 'armed') {
          result.value = `Order #${ack.oid}: ${describeStatus(o)}`;
          break;
        }
        await new Promise((res) => setTimeout(res, pollMs));
      }
      coid.value = makeCoid();
      qty.value = '';
      // The TP / SL went with the order: the next order starts without them.
      f.tp.value = '';
      f.sl.value = '';
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
  /**
   * "Close position" (issue #19 finding 6): the first call shows the preview (`closePreview`: size,
   * estimated price, fee, realised PnL); the second (a second click or Enter) sends a reduce-only IOC
   * limit at the best level ± the slippage cap for the whole position.
   */
  function closePosition(): Promise<void> {
    const c = close.closeOrder.value;
    if (!c) return Promise.resolve();
    if (!f.closeArmed.value) {
      f.closeArmed.value = true;
      return Promise.resolve();
    }
    f.closeArmed.value = false;
    return act(c.cmd, `Close order sent for ${c.size} ${o.label.value}`);
  }
  /** Withdraws a shown close preview without sending anything. */
  function cancelClose(): void {
    f.closeArmed.value = false;
  }
  /** Sets the typed leverage and margin mode for the instrument shown; the preview then uses the venue's new value. */
  async function applyLeverage(): Promise<void> {
    const iid = store.iid.value;
    if (iid === undefined) return;
    await act(updateLeverage({ iid, lev: Number(lev.value), cross: cross.value }), `Leverage set to ${lev.value}×`);
    if (!error.value) await loadConfig().catch(() => undefined);
  }
  /** Cancels one open order by venue id. */
  const cancel = (oid: number) => act(cancelOrders({ oids: [oid] }), `Order #${oid} cancelled`);
  /** Cancels one open order by client order id. */
  const cancelByCoid = (c: string) => act(cancelOrdersCOID({ coids: [c] }), `Order ${c.slice(0, 8)}… cancelled`);
  /** Cancels every open order. */
  const cancelEverything = () => act(cancelAll({}), 'All orders cancelled');

  return { prefill, setPrice, step, preset, toggleUnit, clear, instrumentChanged, loadConfig, submit, act, closePosition, cancelClose, applyLeverage, cancel, cancelByCoid, cancelEverything };
}

/**
 * Creates the ticket over the perps store. The price follows the book's best level on the chosen side
 * (`prefill`) until the person types or picks one; an empty price sends a market-style IOC order.
 */
export function createPerpsTicket(deps: PerpsTicketDeps) {
  const form = ticketForm(deps.coid ?? newCoid);
  const order = ticketOrder(deps.store, form, deps.maxPositionUsdc, deps.slippageBps ?? (() => DEFAULT_SLIPPAGE_BPS));
  const close = ticketClose(deps.store, form, order);
  return { ...form, ...order, ...close, ...ticketActions(deps, form, order, close) };
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
