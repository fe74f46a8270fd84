/**
 * Positions tab state over the perps store: fills (newest first, paged by time; the
 * fills the live stream pushes are added at the top as they come),
 * funding payments, the equity / PnL series for the chosen range, and the outcome of the last close or
 * protection. Closing sends a reduce-only IOC market order for the whole position; protecting it sends
 * take-profit and / or stop-loss legs on the whole position (`protectOrder`: the SDK's
 * `placePositionTpSl`). Derived: margin ratio (maintenance / account value, %).
 */
import { computed, effect, signal, type Signal } from '@preact/signals';
import { createOrders, type PerpsCommand } from '../../../lib/perps/commands';
import { messageOf } from '../api';
import { labelOf, lotOf, tickOf, type PerpsStore, type Portfolio, type Position } from './perps';
import { perpsCommandOrderWords } from '../../../lib/perps/words';
import { decimalsOf, DEFAULT_SLIPPAGE_BPS, estimateMarket, previewOrder } from '../../../lib/perps/risk';
import { tpslProblem } from './ticket-values';
import type { PerpsReadAnswer } from '../../../lib/perps/wire';

/** A fill (prices and sizes decimal strings, `timestamp` Unix ms). */
export type Fill = PerpsReadAnswer<'fills'>['data'][number];
/** A funding payment (`funding` USDC, `funding_rate` a fraction, `timestamp` Unix ms). */
export type FundingPayment = PerpsReadAnswer<'fundingPayments'>['data'][number];
/** The chart ranges: span (ms) and the venue's candle interval. */
export const RANGES = {
  '1d': { ms: 86_400_000, interval: '1h' },
  '7d': { ms: 7 * 86_400_000, interval: '4h' },
  '30d': { ms: 30 * 86_400_000, interval: '1d' },
} as const;
/** A chart range name. */
export type RangeName = keyof typeof RANGES;
/** The range names in display order. */
export const RANGE_NAMES: readonly RangeName[] = ['1d', '7d', '30d'];

/**
 * What closing a position does, as `ClosePreview` shows it (decimal strings; USDC for fee and PnL). `order`:
 * the close order as signed, in the perps venue's words (`perpsCommandOrderWords`, `lib/perps/words.ts`: side, size,
 * the instrument beside its id, limit, immediate-or-cancel, reduce-only); `notes` its off-step flags.
 */
export type ClosePreviewData = {
  order: string;
  notes: string[];
  size: string;
  fillable: string;
  limit: string;
  avgPrice: string;
  slippageBps: string | null;
  fee: string;
  realizedPnl: string;
  complete: boolean;
};

/** A fill's identity: the trade and the order (an account's self-trade has the same trade id twice). */
const fillKey = (f: Fill) => `${f.trade_id}:${f.order_id}`;

/**
 * `shown` (newest first) with the fills of `pushed` it does not hold yet (by trade and order id) added
 * at the top, newest first; `shown` itself is returned when nothing is new. Pure.
 */
export function withPushedFills(shown: Fill[], pushed: readonly Fill[]): Fill[] {
  const have = new Set(shown.map(fillKey));
  const fresh: Fill[] = [];
  for (const f of pushed) {
    const k = fillKey(f);
    if (have.has(k)) continue;
    have.add(k);
    fresh.push(f);
  }
  if (fresh.length === 0) return shown;
  return [...fresh.sort((a, b) => b.timestamp - a.timestamp), ...shown];
}

/** Maintenance margin over account value, in percent (0 without a positive account value). */
export function marginRatioPct(p: Portfolio | undefined): number {
  const value = p ? Number(p.margin.total_account_value) : 0;
  return p && value > 0 ? (Number(p.margin.total_maintenance_margin) / value) * 100 : 0;
}

/**
 * The reduce-only IOC order that closes `p` (the opposite side, its whole size), at `limit` — the
 * best level ± the slippage cap (never an unbounded market order; `closeLimit`).
 */
export const closeOrder = (p: Position, limit: string) =>
  createOrders({
    orders: [
      {
        iid: p.instrument_id,
        buy: p.size.startsWith('-'),
        qty: p.size.replace('-', ''),
        p: limit,
        tif: 'ioc',
        ro: true,
      },
    ],
  });
/**
 * The legs protecting the whole of `p` (the perps SDK's `placePositionTpSl`, group `"position"`): a
 * take-profit at `tp` and / or a stop-loss at `sl` ('' = none), each quantity "0", reduce-only, at market on
 * the exit side — the venue closes what the position holds when one fires, however it changed since.
 */
export const protectOrder = (p: Position, tp: string, sl: string) => {
  const leg = (tpsl: 'tp' | 'sl', trp: string) => ({
    iid: p.instrument_id,
    buy: p.size.startsWith('-'),
    qty: '0',
    ro: true,
    tr: { tpsl, trp, market: true },
  });
  return createOrders({ orders: [...(tp ? [leg('tp', tp)] : []), ...(sl ? [leg('sl', sl)] : [])], group: 'position' });
};

/**
 * Closing a position in two steps over `perps`: `close` previews it (`closing`), `confirmClose` sends it through `run`
 * (the store's send, notice and re-read), `cancelClose` drops it; a close that cannot be priced sets `error`.
 */
function closeActions(
  perps: PerpsStore,
  error: Signal<string | undefined>,
  run: (cmd: PerpsCommand, done: string) => Promise<void>,
) {
  /**
   * The close being previewed: the position, how it is named (`labelOf`, from the instruments read), the order sent and
   * the preview.
   */
  const closing = signal<{ p: Position; label: string; cmd: PerpsCommand; preview: ClosePreviewData } | undefined>(
    undefined,
  );
  /**
   * First step of closing `p`: reads the book now and previews a protected market order (reduce-only
   * IOC at the best level ± `capBps`): size, estimated price and slippage, fee at the taker rate and
   * realised PnL (`lib/perps/risk` over the venue's reads). Nothing is sent until `confirmClose`.
   */
  async function close(p: Position, capBps = DEFAULT_SLIPPAGE_BPS): Promise<void> {
    error.value = undefined;
    closing.value = undefined;
    const inst = perps.instruments.value.find((i) => i.instrument_id === p.instrument_id);
    const buy = p.size.startsWith('-');
    const size = p.size.replace('-', '');
    let est;
    try {
      const book = await perps.read('book', { instrument_id: p.instrument_id, depth: 10 });
      est = inst ? estimateMarket(buy ? book.asks : book.bids, buy, size, capBps, tickOf(inst)) : undefined;
    } catch (e) {
      error.value = messageOf(e);
      return;
    }
    const portfolio = perps.portfolio.value;
    const fees = perps.fees.value;
    const label = labelOf(perps.instruments.value, p.instrument_id);
    if (!est || !est.avgPrice || !inst || !portfolio || !fees) {
      error.value = `No book to price the close of ${label}: use the ticket with a limit price.`;
      return;
    }
    const r = previewOrder({
      // The exact average (not the tick-rounded one shown): the realised PnL is a small difference of prices.
      buy,
      qty: est.fillable,
      price: est.avgExact ?? est.avgPrice,
      leverage: p.leverage,
      fees,
      liquidity: 'taker',
      reduceOnly: true,
      markPrice: est.avgPrice,
      maxLeverage: inst.max_leverage,
      priceDecimals: decimalsOf(tickOf(inst)),
      accountValue: portfolio.margin.total_account_value,
      withdrawable: portfolio.withdrawable,
      position: { size: p.size, entryPrice: p.entry_price },
    });
    // The words of the order that is sent, from that order (the instrument named by the instruments read, beside its
    // id).
    const cmd = closeOrder(p, est.limit);
    const words = perpsCommandOrderWords(cmd, () => label, { tick: tickOf(inst), lot: lotOf(inst) });
    if (!words) return;
    closing.value = {
      p,
      label,
      cmd,
      preview: {
        order: words.line,
        notes: words.notes,
        size,
        fillable: est.fillable,
        limit: est.limit,
        avgPrice: est.avgPrice,
        slippageBps: est.slippageBps,
        fee: r.fee,
        realizedPnl: r.realizedPnl,
        complete: est.complete,
      },
    };
  }
  /** Second step: sends the previewed close (reduce-only IOC at the previewed limit). */
  async function confirmClose(): Promise<void> {
    const c = closing.value;
    if (!c) return;
    closing.value = undefined;
    await run(c.cmd, `Closed ${c.label}`);
  }
  /** Drops the preview; nothing is sent. */
  const cancelClose = () => (closing.value = undefined);

  return { closing, close, confirmClose, cancelClose };
}

/** The positions store. */
export type PositionsStore = ReturnType<typeof createPositionsStore>;

/** Creates the store over `perps`; `send` signs and sends a command. Call `start()` when the tab opens. */
export function createPositionsStore(perps: PerpsStore, send: (cmd: PerpsCommand) => Promise<unknown>) {
  const fills = signal<Fill[]>([]);
  const more = signal(false);
  const funding = signal<FundingPayment[]>([]);
  const range = signal<RangeName>('1d');
  const series = signal<'equity' | 'pnl'>('equity');
  const points = signal<[number, string][]>([]);
  const error = signal<string | undefined>(undefined);
  const notice = signal<string | undefined>(undefined);
  const marginRatio = computed(() => marginRatioPct(perps.portfolio.value));

  /** Reads the newest fills, or (with `before`, Unix ms) the page older than that and appends it. */
  async function loadFills(before?: number): Promise<void> {
    const page = await perps.read('fills', before === undefined ? {} : { end_timestamp: before });
    // The first page keeps what the stream pushed while it was read (a read can miss a fill that just came).
    fills.value = before === undefined ? withPushedFills(page.data, perps.fills.value) : [...fills.value, ...page.data];
    more.value = page.more ?? false;
  }
  /** Reads the page of fills older than the last one shown. */
  function moreFills(): Promise<void> {
    const last = fills.value.at(-1);
    return last ? loadFills(last.timestamp - 1) : loadFills();
  }
  /** Reads the chosen series over the chosen range (empty on failure). */
  async function loadSeries(): Promise<void> {
    const r = RANGES[range.value];
    try {
      points.value = (
        await perps.read(series.value, {
          interval: r.interval,
          start_timestamp: Date.now() - r.ms,
          end_timestamp: Date.now(),
        })
      ).data;
    } catch {
      points.value = [];
    }
  }
  /** Shows another range and/or series and reads it. */
  function chart(next: { range?: RangeName; series?: 'equity' | 'pnl' }): Promise<void> {
    if (next.range) range.value = next.range;
    if (next.series) series.value = next.series;
    return loadSeries();
  }
  /**
   * First reads: fills (an error is shown), funding payments, the chart; from then on the fills the
   * perps store collects from the live stream (`perps.fills`) are added at the top of the list as they
   * come (de-duplicated by trade and order id). Returns the function that stops taking them.
   */
  function start(): () => void {
    void loadFills().catch((e) => (error.value = messageOf(e)));
    void perps
      .read('fundingPayments')
      .then((r) => (funding.value = r.data))
      .catch(() => undefined);
    void loadSeries();
    return effect(() => {
      const pushed = perps.fills.value;
      fills.value = withPushedFills(fills.peek(), pushed);
    });
  }
  /** Sends `cmd`; on success shows `done` and re-reads the portfolio and the fills. */
  async function run(cmd: PerpsCommand, done: string): Promise<void> {
    error.value = undefined;
    notice.value = undefined;
    try {
      await send(cmd);
      notice.value = done;
      await perps.refresh();
      await loadFills();
    } catch (e) {
      error.value = messageOf(e);
    }
  }
  const { closing, close, confirmClose, cancelClose } = closeActions(perps, error, run);
  /**
   * Protects the whole of `p` with a take-profit at `tp` and / or a stop-loss at `sl` ('' = none). Refused
   * with words when a price is on the wrong side of the mark (of the entry while no mark is read): a
   * long's take-profit above it, its stop-loss below; the reverse for a short.
   */
  async function protect(p: Position, tp: string, sl: string): Promise<void> {
    const label = labelOf(perps.instruments.value, p.instrument_id);
    const ref = perps.tickers.value.find((t) => t.instrument_id === p.instrument_id)?.mark_price ?? p.entry_price;
    const problem = tpslProblem(!p.size.startsWith('-'), ref, tp, sl);
    if (problem) {
      notice.value = undefined;
      error.value = problem;
      return;
    }
    const set = [tp ? `take-profit ${tp}` : '', sl ? `stop-loss ${sl}` : ''].filter(Boolean).join(', ');
    let cmd: PerpsCommand;
    try {
      cmd = protectOrder(p, tp, sl);
    } catch (e) {
      error.value = messageOf(e);
      return;
    }
    await run(cmd, `Protected the whole ${label} position: ${set}`);
  }

  return {
    fills,
    more,
    funding,
    range,
    series,
    points,
    error,
    notice,
    marginRatio,
    closing,
    loadFills,
    moreFills,
    loadSeries,
    chart,
    start,
    close,
    confirmClose,
    cancelClose,
    protect,
  };
}
