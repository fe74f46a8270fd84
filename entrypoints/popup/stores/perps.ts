/**
 * Perps server state for the popup: one signal per venue read, polled on a schedule that
 * stays well inside the request-weight budget (≈ 240 of 1 200 per minute: book, tickers, portfolio and
 * open orders every 2 s; statistics every 30 s; instruments and fees once), paused while the popup is
 * hidden, backing off (doubling up to 30 s) after a rate-limit answer. The spend of the last 60 s is a
 * signal the ticket shows. Screens read these signals; nothing here computes risk (see lib/perps/risk).
 */
import { signal } from '@preact/signals';
import { PERPS_READS, type PerpsReadName } from '../../../lib/perps/reads';
import {
  parsePerpsAnswer,
  type Book,
  type Instrument,
  type OrderView,
  type PerpsReadAnswer,
  type Portfolio,
  type Statistic,
  type Ticker,
} from '../../../lib/perps/wire';
import * as v from 'valibot';
import { instrumentLabel } from '../../../lib/validation/venue-text';
import { RemoteError } from '../../../lib/messaging/client';
import { marketPushSchema, streamPushSchema } from '../../../lib/messaging/streams';
import { call as popupCall, messageOf, onStreamPush } from '../api';
import { firstAnswerOrLater, firstWatchPending, takeFirstWatch } from './first-watch';

/** The popup's caller (`api.ts`); stores take one so tests can pass a fake (`createCaller` over a fake send). */
export type Call = typeof popupCall;

/**
 * Subscribes to the background's stream pushes (`api.ts` `onStreamPush`; tests pass a fake); returns the unsubscribe.
 */
export type Listen = typeof onStreamPush;

/** A fill pushed by the live stream (the fills read's row shape, `lib/perps/wire.ts`). */
export type PushedFill = PerpsReadAnswer<'fills'>['data'][number];
/** Order statuses that leave an order on the book. */
const RESTING = new Set(['accepted', 'open', 'partial', 'untriggered', 'armed']);

export type { Book, Instrument, OrderView, Portfolio, Position, Statistic, Ticker } from '../../../lib/perps/wire';

/** The instrument type's fee rates (decimal fractions, e.g. `"0.0005"`), from `GET /v1/info/fees`. */
export type FeeRates = { taker: string; maker: string };

const WINDOW_MS = 60_000;
/** An error's `shortMessage` (background or gateway-answer errors), else `fallback`. */
export const shortMessageOf = (e: unknown, fallback: string) =>
  e && typeof e === 'object' && 'shortMessage' in e ? messageOf(e) : fallback;
const FAST_MS = 2_000;
/** The smallest price step of an instrument (sandbox extra `tick_size`, else 10^-price_decimals). */
export const tickOf = (i: Instrument) =>
  i.tick_size ?? (i.price_decimals > 0 ? `0.${'0'.repeat(i.price_decimals - 1)}1` : '1');
/** The smallest size step (sandbox extra `lot_size`, else 10^-quantity_decimals). */
export const lotOf = (i: Instrument) =>
  i.lot_size ?? (i.quantity_decimals > 0 ? `0.${'0'.repeat(i.quantity_decimals - 1)}1` : '1');
/**
 * How the popup names instrument `iid`: the instruments read's validated symbol beside the id the
 * signature commits to (`BTC-PERP (#1)`), else `instrument #1` (`instrumentLabel`). Never a name another
 * read (a portfolio, an order) carries.
 */
export const labelOf = (instruments: readonly Instrument[], iid: number): string =>
  instrumentLabel(iid, instruments.find((i) => i.instrument_id === iid)?.symbol);

/**
 * The pushed state of order `oid` in `pushed` once the venue settled it (not accepted / untriggered /
 * armed): at once when known, else the next one a push brings (`waiters` are called on each pushed
 * order) within `ms`; undefined when none came, and at once when the stream is not `live`.
 */
function settledOrder(
  pushed: Map<number, OrderView>,
  waiters: Set<() => void>,
  live: boolean,
  oid: number,
  ms: number,
): Promise<OrderView | undefined> {
  const settled = () => {
    const o = pushed.get(oid);
    return o && o.status !== 'accepted' && o.status !== 'untriggered' && o.status !== 'armed' ? o : undefined;
  };
  const now = settled();
  if (now || !live) return Promise.resolve(now);
  return new Promise((resolve) => {
    const done = (o: OrderView | undefined) => {
      waiters.delete(check);
      clearTimeout(t);
      resolve(o);
    };
    const check = () => {
      const o = settled();
      if (o) done(o);
    };
    const t = setTimeout(() => done(undefined), ms);
    waiters.add(check);
  });
}

/** The perps store's signals: the venue reads shown, the read weight spent in the last 60 s, the streams' state. */
function perpsSignals() {
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
  const live = signal(false);
  /** Whether the book and tickers come from the background's public stream (not polled). */
  const marketLive = signal(false);
  /** Whether the shown book is older than 1 s (the background's cached book, shown until a fresh one). */
  const bookStale = signal(false);
  /** Each account stream's state by venue (`streams.status`; the header's badge). */
  const venues = signal<{ venue: 'perps' | 'clob'; live: boolean }[]>([]);
  const fills = signal<PushedFill[]>([]);
  return {
    instruments,
    iid,
    book,
    bookStale,
    tickers,
    statistics,
    portfolio,
    openOrders,
    fees,
    spend,
    error,
    live,
    marketLive,
    venues,
    fills,
  };
}
/** The perps store's signals (`perpsSignals`). */
type PerpsSignals = ReturnType<typeof perpsSignals>;

/**
 * The store's `read`: reads `name` through the background for `account` (when the read needs proxy headers), counted
 * in `spend` (the weight of the last 60 s); the answer checked against its schema (`Perps.InvalidAnswerError`).
 */
function spendCountedReader(call: Call, account: string | undefined, spend: PerpsSignals['spend']) {
  const spent: { at: number; w: number }[] = [];
  return async function read<N extends PerpsReadName>(
    name: N,
    query?: Record<string, string | number>,
  ): Promise<PerpsReadAnswer<N>> {
    const r = PERPS_READS[name];
    const now = Date.now();
    spent.push({ at: now, w: r.weight });
    for (let first = spent[0]; first && first.at < now - WINDOW_MS; first = spent[0]) spent.shift();
    spend.value = spent.reduce((a, x) => a + x.w, 0);
    const answer = await call('perps.read', {
      ...(r.auth === 'proxy-headers' && account ? { account } : {}),
      name,
      ...(query ? { query } : {}),
    });
    return parsePerpsAnswer(name, answer);
  };
}

/** Whether `e` is the venue's rate-limit answer (a retry delay, 429, or a rate error). */
const rateLimited = (e: unknown) =>
  e instanceof RemoteError && (typeof e.data.retryAfterMs === 'number' || e.code === 429 || /rate/i.test(e.name));

/** Shows `b` (its first 10 levels a side) as the book, `stale` when it is older than 1 s. */
const showBook = (s: Pick<PerpsSignals, 'book' | 'bookStale'>, b: Book, stale: boolean) => (
  (s.book.value = { bids: b.bids.slice(0, 10), asks: b.asks.slice(0, 10) }),
  (s.bookStale.value = stale)
);

/**
 * The store's push listener over its signals `s`: public market data (validated) for the shown instrument, and the
 * pushes of `account`'s stream (another account's or another shape is ignored); an order pushed is kept in
 * `pushedOrders` and each of `orderWaiters` is called.
 */
function pushHandler(
  s: PerpsSignals,
  account: string | undefined,
  pushedOrders: Map<number, OrderView>,
  orderWaiters: Set<() => void>,
): (m: unknown) => void {
  /** Takes one public market-data push (validated): the shown instrument's book, tickers, the stream's state. */
  function onMarket(m: unknown): void {
    const r = v.safeParse(marketPushSchema, m);
    if (!r.success) return;
    const p = r.output.push;
    if (p.kind === 'status' && p.venue === 'perps') s.marketLive.value = p.state === 'live';
    else if (p.kind === 'perpsBook' && p.iid === s.iid.value) showBook(s, p.book, false);
    else if (p.kind === 'perpsTicker') {
      const byId = new Map(s.tickers.value.map((t) => [t.instrument_id, t]));
      for (const t of p.ticker) byId.set(t.instrument_id, t);
      s.tickers.value = [...byId.values()];
    }
  }

  /** Takes one push of the background (validated; another account's or another shape is ignored). */
  function onPush(m: unknown): void {
    onMarket(m);
    const r = v.safeParse(streamPushSchema, m);
    if (!r.success || !account || r.output.account.toLowerCase() !== account.toLowerCase()) return;
    const p = r.output.push;
    if (p.kind === 'status') s.live.value = p.state === 'live';
    else if (p.kind === 'portfolio') s.portfolio.value = p.portfolio;
    else if (p.kind === 'fills') s.fills.value = [...p.fills, ...s.fills.value].slice(0, 50);
    else if (p.kind === 'resync') {
      s.portfolio.value = p.portfolio;
      s.openOrders.value = p.openOrders;
    } else if (p.kind === 'order') {
      const o = p.order;
      pushedOrders.set(o.order_id, o);
      const rest = s.openOrders.value.filter((x) => x.order_id !== o.order_id);
      s.openOrders.value = RESTING.has(o.status) ? [o, ...rest] : rest;
      for (const w of orderWaiters) w();
    }
  }
  return onPush;
}

/** The store `createPerpsStore` returns: its signals and `read`, `refresh`, `select`, `start`, `stop`. */
export type PerpsStore = ReturnType<typeof createPerpsStore>;

/**
 * Creates the store for `account` (undefined: public reads only); `call` defaults to the popup's caller,
 * `listen` to the background's stream pushes; `activeAccount` (default `account`): the active account, whose
 * streams the header's badge shows (`venues`) even without a perps proxy. Call `start()` when shown, `stop()` when
 * gone.
 *
 * While the background's perps stream for `account` is live (`live`, asked every 2 s with
 * `streams.status`, which costs no venue weight), the portfolio and the open orders come from its pushes
 * and are not polled; `fills` collects the fills pushed since the popup opened (newest first), and
 * `orderPushed(oid, ms)` waits for an order's settled state. When the stream is down they are polled
 * over REST as before ("polling" in the header).
 *
 * The public data too: the store tells the background which instrument it shows (`streams.watch`);
 * while the background's public perps stream is live, the book and tickers come from its pushes and
 * are not polled. At open (and on `select`) the book the background holds is shown at once: fresh
 * ("loaded") when at most 1 s old, else marked `bookStale` until a newer book arrives.
 */
export function createPerpsStore(
  account: string | undefined,
  call: Call = popupCall,
  listen: Listen = onStreamPush,
  activeAccount: string | undefined = account,
) {
  const state = perpsSignals();
  const { instruments, iid, book, tickers, statistics, portfolio, openOrders, fees, spend, error, live } = state;
  const { marketLive, bookStale, venues } = state;
  const pushedOrders = new Map<number, OrderView>();
  const orderWaiters = new Set<() => void>();
  let unlisten: (() => void) | undefined;
  let statusTimer: ReturnType<typeof setInterval> | undefined;
  let interval = FAST_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let lastSlow = 0;

  const read = spendCountedReader(call, account, spend);

  /** Reads what the streams do not bring (`skipBook`: the book just came fresh from the background). */
  async function refresh(opts: { skipBook?: boolean } = {}): Promise<void> {
    const id = iid.value;
    const jobs: Promise<unknown>[] = [];
    if (!marketLive.value) jobs.push(read('tickers').then((t) => (tickers.value = t)));
    if (id !== undefined && !opts.skipBook && !(marketLive.value && book.value && !bookStale.value))
      jobs.push(
        read('book', { instrument_id: id, depth: 10 }).then((b) => iid.value === id && showBook(state, b, false)),
      );
    if (account && !live.value) {
      jobs.push(read('portfolio').then((p) => (portfolio.value = p)));
      jobs.push(read('openOrders').then((o) => (openOrders.value = o)));
    }
    if (Date.now() - lastSlow > 30_000) {
      lastSlow = Date.now();
      jobs.push(read('statistics').then((s) => (statistics.value = s)));
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed && rateLimited(failed.reason)) interval = Math.min(interval * 2, 30_000);
    else interval = FAST_MS;
    error.value = failed ? shortMessageOf(failed.reason, 'A read failed.') : undefined;
  }

  function schedule(): void {
    if (!running) return;
    const tick = async () => {
      if (document.visibilityState !== 'hidden') await refresh().catch(() => undefined);
      schedule();
    };
    timer = setTimeout(() => void tick(), interval);
  }

  /**
   * Tells the background what is shown; shows the book it holds (fresh ≤ 1 s, else stale), and the
   * account's portfolio and open orders when its live session holds them (then the stream is live: no
   * account reads follow). True when that book was fresh.
   */
  async function watch(): Promise<boolean> {
    const id = iid.value;
    try {
      const early = await takeFirstWatch(account, id);
      const { perpsBook, perpsAccount } =
        early?.answer ??
        (await call('streams.watch', {
          ...(id === undefined ? {} : { perpsIid: id }),
          ...(account ? { account } : {}),
        }));
      // The book's age now: an early answer may have waited for the first render.
      const waited = early ? Math.max(0, Date.now() - early.at) : 0;
      // Taken only before anything else showed the account (a push may be newer than this answer).
      if (perpsAccount && !portfolio.value) {
        live.value = true;
        portfolio.value = perpsAccount.portfolio;
        openOrders.value = perpsAccount.openOrders;
      }
      if (!perpsBook || iid.value !== id || (book.value && !bookStale.value)) return false;
      showBook(state, perpsBook.book, perpsBook.ageMs + waited > 1_000);
      return !bookStale.value;
    } catch {
      return false;
    }
  }

  async function askStatus(): Promise<void> {
    try {
      const { streams, market } = await call('streams.status', {});
      const of = (a: string | undefined) => streams.filter((x) => !!a && x.account.toLowerCase() === a.toLowerCase());
      live.value = of(account).some((x) => x.venue === 'perps' && x.state === 'live');
      // The badge covers the active account's streams, an order-book-only account's (no perps proxy) too.
      venues.value = of(activeAccount).map((x) => ({ venue: x.venue, live: x.state === 'live' }));
      marketLive.value = market.perps === 'live';
    } catch {
      live.value = false;
      marketLive.value = false;
    }
  }

  /**
   * The pushed state of order `oid` once the venue settled it (not accepted / untriggered / armed), waiting up to `ms`;
   * undefined when none came.
   */
  function orderPushed(oid: number, ms: number): Promise<OrderView | undefined> {
    return settledOrder(pushedOrders, orderWaiters, live.value, oid, ms);
  }

  /**
   * Listens to the pushes; reads instruments, fees, stream status and (an instrument chosen) book, tickers, account; at
   * open those wait for the popup's first watch (`firstAnswerOrLater`).
   */
  async function start(): Promise<void> {
    if (running) return;
    running = true;
    unlisten = listen(pushHandler(state, account, pushedOrders, orderWaiters));
    const pending = firstWatchPending() && account !== undefined; // the popup's first watch is on its way
    // The background's book when fresh (≤ 1 s) spares the first REST book read.
    const watched = iid.value !== undefined ? watch() : undefined;
    if (pending && watched) {
      await firstAnswerOrLater(watched);
      if (!running) return; // stopped meanwhile: nothing asked, no timer started
    }
    const early = watched?.then((fresh) => refresh({ skipBook: fresh })).catch(() => undefined);
    const asked = askStatus(); // beside the first reads, not before them
    statusTimer = setInterval(() => void askStatus(), FAST_MS);
    try {
      const [list, f] = await Promise.all([read('instruments'), read('fees').catch(() => undefined)]);
      instruments.value = list;
      if (iid.value === undefined) iid.value = list[0]?.instrument_id;
      if (f?.fee_schedule[0])
        fees.value = { taker: f.fee_schedule[0].taker_fee_rate, maker: f.fee_schedule[0].maker_fee_rate };
    } catch (e) {
      error.value = shortMessageOf(e, 'The gateway did not answer.');
    }
    await Promise.all([
      asked,
      early ??
        watch()
          .then((fresh) => refresh({ skipBook: fresh }))
          .catch(() => undefined),
    ]);
    schedule();
  }

  /** Shows another instrument: clears its book and reads at once. */
  function select(id: number): void {
    if (iid.value === id) return;
    iid.value = id;
    book.value = undefined;
    bookStale.value = false;
    void watch()
      .then((fresh) => refresh({ skipBook: fresh }))
      .catch(() => undefined);
  }

  /** Stops polling (the popup closed or the screen is gone). */
  function stop(): void {
    running = false;
    clearTimeout(timer);
    clearInterval(statusTimer);
    unlisten?.();
    unlisten = undefined;
  }

  return {
    ...state,
    orderPushed,
    read,
    refresh,
    select,
    start,
    stop,
  };
}
