/**
 * The perps ticket's form and what follows from it over the perps store's reads: the instrument and
 * its reads, the protected market order's estimate, the command that would be signed with its risk
 * preview and warnings, and the close-position order. Signals and computed values only (no venue call);
 * `./ticket.ts` puts them together with the actions (`./ticket-actions.ts`).
 */
import { computed, signal } from '@preact/signals';
import { createOrders, type PerpsCommand, type PerpsOrderInput, type TimeInForce } from '../../../lib/perps/commands';
import { summarizeOrder } from '../../../lib/perps/summary';
import {
  contractsForUsdc,
  decimalsOf,
  estimateMarket,
  maxOrderSize,
  previewOrder,
  type Liquidity,
  type MarketEstimate,
  type OrderPreview,
} from '../../../lib/perps/risk';
import { InvalidFieldError } from '../../../lib/validation';
import { toUnits } from '../../../lib/decimal';
import { lotOf, tickOf, type PerpsStore } from './perps';
import { perpsCommandOrderWords } from '../../../lib/perps/words';
import { instrumentLabel } from '../../../lib/validation/venue-text';
import { exceedsNotional, changePct, spreadOf, capBps, tpslProblem } from './ticket-values';

/** What the person types or picks in the ticket, and the ticket's own notices. */
export function ticketForm(makeCoid: () => string) {
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

  return {
    buy,
    qty,
    unit,
    price,
    priceTouched,
    tif,
    po,
    ro,
    coid,
    lev,
    cross,
    venueLev,
    venueCross,
    slippage,
    tp,
    sl,
    closeArmed,
    error,
    result,
    busy,
  };
}
/** The ticket form (`ticketForm`). */
export type TicketForm = ReturnType<typeof ticketForm>;

/** The instrument's reads the ticket follows (instrument, ticker, statistic, position, best level, tick, lot). */
export function ticketReads(store: PerpsStore, f: TicketForm) {
  const instrument = computed(() => store.instruments.value.find((i) => i.instrument_id === store.iid.value));
  /** How the ticket names its instrument: the venue's symbol beside the id the order signs (`instrumentLabel`). */
  const label = computed(() =>
    instrument.value ? instrumentLabel(instrument.value.instrument_id, instrument.value.symbol) : '',
  );
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
    return leverage.value !== undefined && Number.isInteger(typed) && typed > 0 && typed !== leverage.value
      ? typed
      : undefined;
  });
  return { instrument, label, ticker, statistic, position, best, tick, lot, leverage, pendingLeverage };
}
/** The instrument reads the ticket follows (`ticketReads`). */
export type TicketReads = ReturnType<typeof ticketReads>;

/** The protected market order's estimate (an empty price) and the price the venue checks margin at. */
export function ticketMarket(store: PerpsStore, f: TicketForm, r: TicketReads, slippageBps: () => number) {
  const refPrice = computed(() => f.price.value || r.best.value || r.ticker.value?.mark_price || '');
  /** The size in contracts (converted from USDC at the reference price when the unit is USDC). */
  const contracts = computed(() =>
    f.unit.value === 'usdc'
      ? f.qty.value && refPrice.value
        ? contractsForUsdc(f.qty.value, refPrice.value, r.lot.value)
        : ''
      : f.qty.value,
  );
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

/**
 * What follows from the form over the perps store's reads: the instrument, the command, the risk preview, the warnings.
 */
export function ticketOrder(
  store: PerpsStore,
  f: TicketForm,
  maxPositionUsdc: () => number,
  slippageBps: () => number,
) {
  const { buy, price, tif, po, ro, coid, tp, sl } = f;
  const r = ticketReads(store, f);
  const m = ticketMarket(store, f, r, slippageBps);
  const { instrument, ticker, statistic, position, best, leverage } = r;
  const { contracts, market, marginPrice } = m;
  const effectiveTif = computed<TimeInForce>(() =>
    price.value === '' ? (tif.value === 'fok' ? 'fok' : 'ioc') : tif.value,
  );
  /** Which fees the order pays: maker for post-only, taker for IOC / FOK / market, either for a GTC limit. */
  const liquidity = computed<Liquidity>(() => (effectiveTif.value !== 'gtc' ? 'taker' : po.value ? 'maker' : 'either'));
  const feeRate = computed(
    () => store.fees.value && (liquidity.value === 'maker' ? store.fees.value.maker : store.fees.value.taker),
  );

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
    const exit = (kind: 'tp' | 'sl', trp: string) => ({
      iid,
      buy: !buy.value,
      qty: size,
      ro: true,
      tr: { tpsl: kind, trp, market: true },
    });
    const order: PerpsOrderInput = {
      iid,
      buy: buy.value,
      qty: size,
      p,
      tif: t,
      ...(po.value && t === 'gtc' ? { po: true } : {}),
      ...(ro.value ? { ro: true } : {}),
      c: coid.value,
    };
    try {
      return {
        cmd: createOrders({
          orders: [order, ...(tp.value ? [exit('tp', tp.value)] : []), ...(sl.value ? [exit('sl', sl.value)] : [])],
        }),
        order,
      };
    } catch (err) {
      return { problem: err instanceof InvalidFieldError ? err.shortMessage : 'Check the order.' };
    }
  });

  /**
   * The execution price the preview assumes: the typed price, else the book's average within the cap, else the
   * reference.
   */
  const execPrice = computed(() => price.value || market.value?.avgPrice || m.refPrice.value);
  /**
   * The typed limit rests (does not cross the best level on the other side): post-only, or a GTC limit below the ask /
   * above the bid.
   */
  const rests = computed(() => {
    if (effectiveTif.value !== 'gtc' || !price.value) return false;
    const other = buy.value ? store.book.value?.asks[0]?.[0] : store.book.value?.bids[0]?.[0];
    const p = toUnits(price.value, 8);
    const o = other === undefined ? undefined : toUnits(other, 8);
    return po.value || o === undefined || p === undefined || (buy.value ? p < o : p > o);
  });

  /**
   * What the order does to the account (lib/perps/summary — the approval window's code too), once an order can be built
   * and the portfolio, fees and leverage are read.
   */
  const preview = computed((): OrderPreview | undefined => {
    const instrumentRead = instrument.value;
    const portfolio = store.portfolio.value;
    const book = store.book.value;
    const fees = store.fees.value;
    const lv = leverage.value;
    const order = built.value.order;
    if (!order || !instrumentRead || !portfolio || !book || !fees || lv === undefined) return undefined;
    const mark = ticker.value?.mark_price;
    return summarizeOrder(order, {
      instrument: instrumentRead,
      book,
      portfolio,
      fees,
      leverage: lv,
      ...(mark ? { markPrice: mark } : {}),
    })?.preview;
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
    if (market.value && !market.value.complete && market.value.avgPrice)
      out.push(
        `Only ${market.value.fillable} fills within the ${m.cap.value / 100} % slippage cap; the rest is cancelled.`,
      );
    if (r.pendingLeverage.value !== undefined)
      out.push(`Leverage ${r.pendingLeverage.value}× is typed but not applied: this order uses ${leverage.value}×.`);
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
    if (p.insufficientMargin)
      return (
        `Not enough free margin: the venue needs ${p.marginCheck} USDC + ` +
        `${p.fee} fee, ${store.portfolio.value?.withdrawable ?? '0'} free.`
      );
    return undefined;
  }

  /**
   * `fraction` (0-1, decimal string) of the largest size the venue accepts for margin, in contracts,
   * under its rule for the order kind: a limit at its price, a market order at its protected limit
   * (the worst price it may reach under the slippage cap), at the venue's leverage and the order's fee
   * rate; undefined until the portfolio, the leverage and a price are read.
   */
  function sizeFor(fraction: string): string | undefined {
    const portfolio = store.portfolio.value;
    const lv = leverage.value;
    const mp = marginPrice.value;
    if (!portfolio || lv === undefined || !mp) return undefined;
    return maxOrderSize({
      withdrawable: portfolio.withdrawable,
      price: mp,
      leverage: lv,
      feeRate: feeRate.value ?? '0',
      lot: r.lot.value,
      fraction,
    });
  }
  /** The max-size readout: the 100 % preset's size for the current side and order kind, in contracts. */
  const maxSize = computed(() => sizeFor('1'));

  const change = computed(() =>
    ticker.value && statistic.value ? changePct(ticker.value.mark_price, statistic.value.open_price) : undefined,
  );
  const spread = computed(() => spreadOf(store.book.value));

  return {
    ...r,
    ...m,
    effectiveTif,
    liquidity,
    feeRate,
    built,
    execPrice,
    rests,
    preview,
    warnings,
    canSubmit,
    reason,
    sizeFor,
    maxSize,
    change,
    spread,
  };
}
/** The order the form describes, with its preview and warnings (`ticketOrder`). */
export type TicketOrder = ReturnType<typeof ticketOrder>;

/** The close-position order and its preview: reduce-only IOC at the best level ± the cap, the whole position. */
export function ticketClose(store: PerpsStore, f: TicketForm, o: TicketOrder) {
  const closeOrder = computed(
    (): { cmd: PerpsCommand; size: string; buy: boolean; estimate: MarketEstimate } | undefined => {
      const pos = o.position.value;
      const iid = store.iid.value;
      if (!pos || iid === undefined || Number(pos.size) === 0) return undefined;
      const buy = pos.size.startsWith('-');
      const size = pos.size.replace('-', '');
      const levels = buy ? store.book.value?.asks : store.book.value?.bids;
      const estimate = levels ? estimateMarket(levels, buy, size, o.cap.value, o.tick.value) : undefined;
      if (!estimate) return undefined;
      return {
        cmd: createOrders({ orders: [{ iid, buy, qty: size, p: estimate.limit, tif: 'ioc', ro: true }] }),
        size,
        buy,
        estimate,
      };
    },
  );
  /**
   * What closing does: the size, estimated price and slippage, fee and realised PnL (lib/perps/risk over the venue's
   * reads).
   */
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
    const words = perpsCommandOrderWords(c.cmd, (iid) => instrumentLabel(iid, inst.symbol), {
      tick: o.tick.value,
      lot: o.lot.value,
    });
    if (!words) return undefined;
    return {
      order: words.line,
      notes: words.notes,
      size: c.size,
      fillable: c.estimate.fillable,
      limit: c.estimate.limit,
      avgPrice: c.estimate.avgPrice,
      slippageBps: c.estimate.slippageBps,
      fee: p.fee,
      realizedPnl: p.realizedPnl,
      complete: c.estimate.complete,
    };
  });
  return { closeOrder, closePreview };
}
/** The close-position order and its preview (`ticketClose`). */
export type TicketClose = ReturnType<typeof ticketClose>;
