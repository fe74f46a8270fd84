/**
 * Perps server state for the popup (issue #10 §5): one signal per venue read, polled on a schedule that
 * stays well inside the request-weight budget (≈ 240 of 1 200 per minute: book, tickers, portfolio and
 * open orders every 2 s; statistics every 30 s; instruments and fees once), paused while the popup is
 * hidden, backing off (doubling up to 30 s) after a rate-limit answer. The spend of the last 60 s is a
 * signal the ticket shows. Screens read these signals; nothing here computes risk (see lib/perps/risk).
 */
import { signal } from '@preact/signals';
import { PERPS_READS, type PerpsReadName } from '../../../lib/perps/reads';
import { RemoteError } from '../../../lib/messaging/client';
import { call } from '../api';

export type Instrument = { instrument_id: number; symbol: string; price_decimals: number; quantity_decimals: number; max_leverage: number; tick_size?: string; lot_size?: string };
export type Ticker = { instrument_id: number; mark_price: string; index_price: string; mid_price: string; last_price: string; funding_rate: string };
export type Statistic = { instrument_id: number; open_price: string; volume: string };
export type Position = {
  instrument_id: number;
  symbol: string;
  size: string;
  entry_price: string;
  leverage: number;
  cross: boolean;
  initial_margin: string;
  maintenance_margin: string;
  position_value: string;
  liquidation_price: string;
  unrealized_pnl: string;
  return_on_equity: string;
  cumulative_funding: string;
};
export type Portfolio = { positions: Position[]; margin: { total_account_value: string; total_initial_margin: string; total_maintenance_margin: string; total_position_value: string }; withdrawable: string };
export type OrderView = { order_id: number; client_order_id?: string; instrument_id: number; buy: boolean; price: string; quantity: string; filled_quantity: string; resting_quantity: string; status: string; tpsl?: { kind: string; trp: string } };
export type Book = { bids: [string, string][]; asks: [string, string][] };
export type FeeRates = { taker: string; maker: string };

const WINDOW_MS = 60_000;
const FAST_MS = 2_000;

/** The smallest price step of an instrument (sandbox extra `tick_size`, else 10^-price_decimals). */
export const tickOf = (i: Instrument) => i.tick_size ?? (i.price_decimals > 0 ? `0.${'0'.repeat(i.price_decimals - 1)}1` : '1');
/** The smallest size step (sandbox extra `lot_size`, else 10^-quantity_decimals). */
export const lotOf = (i: Instrument) => i.lot_size ?? (i.quantity_decimals > 0 ? `0.${'0'.repeat(i.quantity_decimals - 1)}1` : '1');

export type PerpsStore = ReturnType<typeof createPerpsStore>;

/** Creates the store for `account` (undefined: public reads only). Call `start()` when shown, `stop()` when gone. */
export function createPerpsStore(account: string | undefined) {
  const instruments = signal<Instrument[]>([]);
  const iid = signal<number | undefined>(undefined);
  const book = signal<Book | undefined>(undefined);
  const tickers = signal<Ticker[]>([]);
  const statistics = signal<Statistic[]>([]);
  const portfolio = signal<Portfolio | undefined>(undefined);
  const openOrders = signal<OrderView[]>([]);
  const fees = signal<FeeRates | undefined>(undefined);
  const spend = signal(0);
  const error = signal<string | undefined>(undefined);
  const spent: { at: number; w: number }[] = [];
  let interval = FAST_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let lastSlow = 0;

  async function read<T>(name: PerpsReadName, query?: Record<string, string | number>): Promise<T> {
    const r = PERPS_READS[name];
    const now = Date.now();
    spent.push({ at: now, w: r.weight });
    while (spent.length && spent[0]!.at < now - WINDOW_MS) spent.shift();
    spend.value = spent.reduce((a, x) => a + x.w, 0);
    return call<'perps.read', T>('perps.read', { ...(r.auth === 'proxy-headers' && account ? { account } : {}), name, ...(query ? { query } : {}) });
  }

  const rateLimited = (e: unknown) => e instanceof RemoteError && (typeof e.data.retryAfterMs === 'number' || e.code === 429 || /rate/i.test(e.name));

  async function refresh(): Promise<void> {
    const id = iid.value;
    const jobs: Promise<unknown>[] = [read<Ticker[]>('tickers').then((t) => (tickers.value = t))];
    if (id !== undefined) jobs.push(read<Book>('book', { instrument_id: id, depth: 10 }).then((b) => (book.value = b)));
    if (account) {
      jobs.push(read<Portfolio>('portfolio').then((p) => (portfolio.value = p)));
      jobs.push(read<OrderView[]>('openOrders').then((o) => (openOrders.value = o)));
    }
    if (Date.now() - lastSlow > 30_000) {
      lastSlow = Date.now();
      jobs.push(read<Statistic[]>('statistics').then((s) => (statistics.value = s)));
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed && rateLimited(failed.reason)) interval = Math.min(interval * 2, 30_000);
    else interval = FAST_MS;
    error.value = failed ? ((failed.reason as { shortMessage?: string }).shortMessage ?? 'A read failed.') : undefined;
  }

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(async () => {
      if (document.visibilityState !== 'hidden') await refresh().catch(() => undefined);
      schedule();
    }, interval);
  }

  async function start(): Promise<void> {
    if (running) return;
    running = true;
    try {
      const [list, f] = await Promise.all([
        read<Instrument[]>('instruments'),
        read<{ fee_schedule: { taker_fee_rate: string; maker_fee_rate: string }[] }>('fees').catch(() => undefined),
      ]);
      instruments.value = list;
      if (iid.value === undefined) iid.value = list[0]?.instrument_id;
      if (f?.fee_schedule[0]) fees.value = { taker: f.fee_schedule[0].taker_fee_rate, maker: f.fee_schedule[0].maker_fee_rate };
    } catch (e) {
      error.value = (e as { shortMessage?: string }).shortMessage ?? 'The gateway did not answer.';
    }
    await refresh().catch(() => undefined);
    schedule();
  }

  /** Shows another instrument: clears its book and reads at once. */
  function select(id: number): void {
    if (iid.value === id) return;
    iid.value = id;
    book.value = undefined;
    void refresh().catch(() => undefined);
  }

  function stop(): void {
    running = false;
    clearTimeout(timer);
  }

  return { instruments, iid, book, tickers, statistics, portfolio, openOrders, fees, spend, error, read, refresh, select, start, stop };
}
