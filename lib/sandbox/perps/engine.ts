/**
 * The sandbox perps venue: accounts, instruments, a price-time-priority matching engine per
 * instrument, positions and margin. Pure in-memory state driven by a clock; the HTTP layer
 * (`routes.ts`) verifies signatures before anything here runs.
 *
 * Units: prices and quantities are bigint at `PX_SCALE` (8) decimals; collateral balances are bigint
 * USDC base units (6 decimals). Notional (base units) = price × qty / 10^(2·8 − 6).
 *
 * Margin model (deliberately simple, documented in README): each account has one collateral balance;
 * used margin = Σ |position| × entry / leverage + Σ resting-order remaining × price / leverage;
 * an order (or the part of it that grows the position) needs notional / leverage of free collateral,
 * else the whole command fails with `insufficient_margin` and nothing changes.
 *
 * Fees, funding and risk (the venue's values are unshown; chosen here and documented in README): taker
 * fee 5 bp and maker fee 1 bp of notional, charged on each fill; funding settles every hour on the hour
 * (`fundingRate`): a long pays `size × mark × rate`, a short receives it; maintenance margin is half the
 * initial margin at the instrument's maximum leverage (`notional / (2 × maxLeverage)`); the liquidation
 * price is where account value (balance + unrealised PnL) equals the maintenance margin, other positions
 * held at their mark.
 */
import type { Address } from 'viem';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { PerpsOrderInput } from '../../perps/commands';
import { abs, fromUnits, minB, toUnits } from '../../decimal';
import type { Book, OrderView } from '../../perps/wire';

/** Decimals of perps prices and quantities: both are bigint at 8 decimals. */
export const PX_SCALE = 8;
/** Divisor from price × quantity (PX units each) to USDC base units. */
export const NOTIONAL_DIV = 10n ** BigInt(2 * PX_SCALE - 6);

/** An instrument. `tick` / `lot` / `mark` in PX units. */
export type Instrument = {
  iid: number;
  symbol: string;
  tick: bigint;
  lot: bigint;
  mark: bigint;
  maxLeverage: number;
};

/** Order status as get-orders reports it. */
export type OrderStatus = 'open' | 'filled' | 'cancelled' | 'rejected' | 'untriggered';

/** A resting or finished order in the engine: prices and quantities scaled by 10^`PX_SCALE`, times Unix ms (the read view is `view()`: `OrderView` of lib/perps/wire). */
export type PerpsOrder = {
  oid: number;
  coid?: string;
  owner: string;
  iid: number;
  buy: boolean;
  price?: bigint;
  qty: bigint;
  filled: bigint;
  tif?: 'gtc' | 'ioc' | 'fok';
  po: boolean;
  ro: boolean;
  /** A TP / SL trigger: `armedQty` while the account holds a position it reduces (status `armed`), `fired` once the mark crossed `trp`. */
  trigger?: { tpsl: 'tp' | 'sl'; trp: bigint; market: boolean; armedQty?: bigint; fired?: boolean };
  status: OrderStatus;
  reason?: string;
  seq: number;
  created: number;
  updated: number;
};

/** A position: `size` signed (PX units), `entry` price (PX units), cumulative `funding` (USDC base units, + received). */
export type Position = { size: bigint; entry: bigint; funding?: bigint };

/** One fill of an account's order. Prices / quantities PX units; `fee`, `pnl` USDC base units; `ts` ms. */
export type Fill = {
  tradeId: number;
  oid: number;
  iid: number;
  buy: boolean;
  price: bigint;
  qty: bigint;
  taker: boolean;
  fee: bigint;
  prevSize: bigint;
  prevEntry: bigint;
  pnl: bigint;
  ts: number;
};

/** One hourly funding payment: `amount` USDC base units (+ received, − paid); `rate` decimal string; `ts` ms. */
export type FundingPayment = { id: number; iid: number; size: bigint; rate: string; amount: bigint; ts: number };

/** Taker fee rate (5 bp) as a fraction of notional. */
export const TAKER_FEE = { num: 5n, den: 10_000n };
/** Maker fee rate (1 bp) as a fraction of notional. */
export const MAKER_FEE = { num: 1n, den: 10_000n };

/** A registered proxy key of an account: its address, secret (a credential), expiry (Unix ms) and label. */
export type Proxy = { proxy: Address; secret: string; expiry: number; label: string };

/** A deposit seen on chain: `amount` base units (USDC 6 decimals), credited after `requiredConfirmations`; `created` Unix ms. */
export type Deposit = {
  hash: string;
  asset: string;
  amount: bigint;
  from: string;
  to: string;
  requiredConfirmations: number;
  created: number;
  credited: boolean;
  removed?: boolean;
};

/** An internal transfer as the `internalTransfers` read answers it (`amount` USDC decimal string, times Unix ms). */
export type Transfer = {
  transfer_id: number;
  asset: string;
  amount: string;
  direction: 'in' | 'out';
  counterparty: string;
  created_timestamp: number;
  label: string;
};

/** An account's state: USDC `balance` in base units, positions and leverage per instrument, proxies, history. */
export type Account = {
  owner: Address;
  balance: bigint;
  positions: Map<number, Position>;
  config: Map<number, { leverage: number; cross: boolean }>;
  proxies: Map<string, Proxy>;
  deposits: Deposit[];
  transfers: Transfer[];
  withdrawals: { withdraw_id: number; amount: bigint; to: string; token: string; ts: number }[];
  fills: Fill[];
  funding: FundingPayment[];
  /** Funding is settled up to this hour boundary (ms). */
  fundingSettledTo: number;
  /** Equity and cumulative PnL (realised + funding − fees) after each change: `[ts, equity, pnl]`, base units. */
  history: [number, bigint, bigint][];
  realized: bigint;
  invite?: string;
  parent?: string;
  children: number;
  autoCancelAt?: number;
};

/**
 * A change in the venue, as the streams report it (issue #22, PROTOCOL.md §5.1–§5.2). `order`: an
 * order's state changed (placed, matched, cancelled); `fill`: one fill of `owner`'s order; `account`:
 * `owner`'s balance, positions or leverage changed; `funding`: one funding payment of `owner`;
 * `trade`: a public trade (taker side; it also moves the instrument's mark to its price); `book`: the
 * book of `iid` changed; `mark`: the mark of `iid` was set (`setMark`: the admin route, issue #19).
 * Emitted synchronously where the state changes; listeners must not change the venue.
 */
export type PerpsVenueEvent =
  | { kind: 'order'; order: PerpsOrder }
  | { kind: 'fill'; owner: string; fill: Fill }
  | { kind: 'account'; owner: string }
  | { kind: 'funding'; owner: string; payment: FundingPayment }
  | { kind: 'trade'; trade: PerpsVenue['trades'][number] }
  | { kind: 'book'; iid: number }
  | { kind: 'mark'; iid: number };

/** Leverage of an instrument the account never set (cross margin). */
export const DEFAULT_LEVERAGE = 10;

/** Thrown by the engine when a command must fail as a whole (`{ status: "err", error }`). */
export class VenueError extends Error {
  constructor(
    readonly error: string,
    readonly status: ContentfulStatusCode = 400,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(error);
  }
}

const px = (s: string) => toUnits(s, PX_SCALE);

/**
 * The sandbox's in-memory perps venue: instruments, accounts, a price-time-priority book per instrument,
 * matching, margin, funding and history. Prices and quantities are bigint at `PX_SCALE` decimals, USDC in
 * base units (6 decimals), times Unix ms. Refusals throw `VenueError` (the gateway's error answer).
 */
export class PerpsVenue {
  readonly accounts = new Map<string, Account>();
  readonly instruments = new Map<number, Instrument>();
  readonly orders = new Map<number, PerpsOrder>();
  private readonly books = new Map<number, { bids: PerpsOrder[]; asks: PerpsOrder[] }>();
  private nextOid = 1000;
  private nextSeq = 1;
  nextTransferId = 1;
  nextWithdrawId = 1;
  private nextTradeId = 1;
  /** Increases with every change to any book (the book read's `sequence`). */
  bookSequence = 0;
  private nextFundingId = 1;
  /** Public trades (taker side), newest last. */
  readonly trades: { tradeId: number; iid: number; buy: boolean; price: bigint; qty: bigint; ts: number }[] = [];
  /** Hourly funding rate of an instrument at `ts` (decimal string); the context sets it. */
  fundingRate: (iid: number, ts: number) => string = () => '0';
  /** Listeners of {@link PerpsVenueEvent}s (the sandbox streams). */
  readonly listeners = new Set<(e: PerpsVenueEvent) => void>();

  /** Tells every listener of a change (see {@link PerpsVenueEvent}). */
  emit(e: PerpsVenueEvent): void {
    for (const l of this.listeners) l(e);
  }

  constructor(readonly now: () => number) {}

  addInstrument(i: Instrument): void {
    this.instruments.set(i.iid, i);
    this.books.set(i.iid, { bids: [], asks: [] });
  }

  /** The account of `owner`, created empty when missing. */
  account(owner: string): Account {
    const key = owner.toLowerCase();
    let a = this.accounts.get(key);
    if (!a) {
      a = {
        owner: owner as Address,
        balance: 0n,
        positions: new Map(),
        config: new Map(),
        proxies: new Map(),
        deposits: [],
        transfers: [],
        withdrawals: [],
        children: 0,
        fills: [],
        funding: [],
        fundingSettledTo: Math.floor(this.now() / 3_600_000) * 3_600_000,
        history: [],
        realized: 0n,
      };
      this.accounts.set(key, a);
    }
    return a;
  }

  findAccount(owner: string): Account | undefined {
    return this.accounts.get(owner.toLowerCase());
  }

  configOf(a: Account, iid: number) {
    return a.config.get(iid) ?? { leverage: DEFAULT_LEVERAGE, cross: true };
  }

  book(iid: number) {
    return this.books.get(iid)!;
  }

  /** Collateral used by positions and resting orders, in base units. */
  usedMargin(a: Account): bigint {
    let used = 0n;
    for (const [iid, p] of a.positions) {
      used += (abs(p.size) * p.entry) / NOTIONAL_DIV / BigInt(this.configOf(a, iid).leverage);
    }
    for (const o of this.orders.values()) {
      if (o.owner === a.owner.toLowerCase() && o.status === 'open' && o.price !== undefined) {
        used += ((o.qty - o.filled) * o.price) / NOTIONAL_DIV / BigInt(this.configOf(a, o.iid).leverage);
      }
    }
    return used;
  }

  /** Free collateral (base units), never below zero. */
  available(a: Account): bigint {
    const free = a.balance - this.usedMargin(a);
    return free > 0n ? free : 0n;
  }

  /** Credits deposits whose confirmations are complete (lazily, on every read and command). */
  settleDeposits(a: Account, confirmationMs: number): void {
    for (const d of a.deposits) {
      if (!d.credited && !d.removed && this.confirmations(d, confirmationMs) >= d.requiredConfirmations) {
        d.credited = true;
        a.balance += d.amount;
        this.snapshot(a);
        this.emit({ kind: 'account', owner: a.owner.toLowerCase() });
      }
    }
  }

  confirmations(d: Deposit, confirmationMs: number): number {
    return Math.min(d.requiredConfirmations, Math.max(0, Math.floor((this.now() - d.created) / confirmationMs)));
  }

  /** Cancels every open order of `a` when its auto-cancel time has passed. */
  checkAutoCancel(a: Account): void {
    if (a.autoCancelAt && this.now() >= a.autoCancelAt) {
      a.autoCancelAt = undefined;
      this.cancelAll(a, undefined, 'auto_cancel');
    }
  }

  // -------------------------------------------------------------------------------------------
  // Orders

  /**
   * Admits a batch of orders atomically: validation and margin are checked for all first; on any
   * failure nothing changes and a `VenueError` is thrown. Returns one order record per input, in order;
   * each is then matched (its outcome is read with get-orders).
   */
  placeOrders(a: Account, inputs: PerpsOrderInput[]): PerpsOrder[] {
    const now = this.now();
    const drafts: PerpsOrder[] = [];
    let extraMargin = 0n;
    for (const o of inputs) {
      const inst = this.instruments.get(o.iid);
      if (!inst) throw new VenueError('unknown_instrument');
      const qty = px(o.qty);
      const price = o.p === undefined ? undefined : px(o.p);
      if (qty === undefined || qty % inst.lot !== 0n) throw new VenueError('invalid_quantity');
      if (o.p !== undefined && (price === undefined || price % inst.tick !== 0n)) throw new VenueError('invalid_price');
      if (o.c && [...this.orders.values()].some((x) => x.owner === a.owner.toLowerCase() && x.coid === o.c && (x.status === 'open' || x.status === 'untriggered'))) {
        throw new VenueError('duplicate_client_order_id');
      }
      const trp = o.tr ? px(o.tr.trp) : undefined;
      if (o.tr && (trp === undefined || trp % inst.tick !== 0n)) throw new VenueError('invalid_trigger_price');
      const draft: PerpsOrder = {
        oid: 0,
        owner: a.owner.toLowerCase(),
        iid: o.iid,
        buy: o.buy,
        qty,
        filled: 0n,
        po: o.po ?? false,
        ro: o.ro ?? false,
        status: 'open',
        seq: 0,
        created: now,
        updated: now,
        ...(o.c ? { coid: o.c } : {}),
        ...(price === undefined ? {} : { price }),
        ...(o.tif ? { tif: o.tif } : {}),
        ...(o.tr ? { trigger: { tpsl: o.tr.tpsl, trp: trp!, market: o.tr.market === true } } : {}),
      };
      if (!draft.ro && !draft.trigger) {
        const lev = BigInt(this.configOf(a, o.iid).leverage);
        const refPx = price ?? this.worstPrice(o.iid, o.buy) ?? inst.mark;
        extraMargin += (qty * refPx) / NOTIONAL_DIV / lev;
      }
      drafts.push(draft);
    }
    if (extraMargin > this.available(a)) throw new VenueError('insufficient_margin');
    for (const d of drafts) {
      d.oid = this.nextOid++;
      d.seq = this.nextSeq++;
      this.orders.set(d.oid, d);
      this.execute(a, d);
      this.emit({ kind: 'order', order: d });
    }
    this.afterMarkMove();
    return drafts;
  }

  private worstPrice(iid: number, buy: boolean): bigint | undefined {
    const side = buy ? this.book(iid).asks : this.book(iid).bids;
    return side.length ? side[side.length - 1]!.price : undefined;
  }

  private reject(o: PerpsOrder, reason: string): void {
    o.status = 'rejected';
    o.reason = reason;
    o.updated = this.now();
  }

  private execute(a: Account, o: PerpsOrder): void {
    if (o.trigger && !o.trigger.fired) {
      o.status = 'untriggered';
      return;
    }
    const pos = a.positions.get(o.iid)?.size ?? 0n;
    if (o.ro) {
      const reduces = o.buy ? pos < 0n : pos > 0n;
      if (!reduces) return this.reject(o, 'reduce_only_would_increase_position');
      if (o.qty > abs(pos)) o.qty = abs(pos) - (abs(pos) % this.instruments.get(o.iid)!.lot);
    }
    const book = this.book(o.iid);
    const opposite = o.buy ? book.asks : book.bids;
    const crosses = (m: PerpsOrder) => o.price === undefined || (o.buy ? m.price! <= o.price : m.price! >= o.price);
    if (o.po && opposite.length > 0 && crosses(opposite[0]!)) return this.reject(o, 'post_only_would_cross');
    if (o.tif === 'fok') {
      let fillable = 0n;
      for (const m of opposite) {
        if (!crosses(m)) break;
        fillable += m.qty - m.filled;
      }
      if (fillable < o.qty) return this.reject(o, 'fok_not_filled');
    }
    while (o.filled < o.qty && opposite.length > 0 && crosses(opposite[0]!)) {
      const m = opposite[0]!;
      const q = minB(o.qty - o.filled, m.qty - m.filled);
      this.fill(a, o, q, m.price!, true);
      this.fill(this.account(m.owner), m, q, m.price!, false);
      if (m.filled === m.qty) {
        m.status = 'filled';
        opposite.shift();
      }
      this.emit({ kind: 'order', order: m });
    }
    o.updated = this.now();
    if (o.filled === o.qty) {
      o.status = 'filled';
    } else if (o.tif === 'gtc' && o.price !== undefined) {
      const same = o.buy ? book.bids : book.asks;
      const idx = same.findIndex((x) => (o.buy ? x.price! < o.price! : x.price! > o.price!));
      same.splice(idx === -1 ? same.length : idx, 0, o);
    } else {
      o.status = 'cancelled';
      o.reason = o.filled > 0n ? 'ioc_remainder_cancelled' : 'no_liquidity';
    }
    this.emit({ kind: 'book', iid: o.iid });
  }

  private fill(a: Account, o: PerpsOrder, qty: bigint, price: bigint, taker: boolean): void {
    this.settleFunding(a);
    o.filled += qty;
    o.updated = this.now();
    this.bookSequence++;
    const inst = this.instruments.get(o.iid)!;
    inst.mark = price;
    const p = a.positions.get(o.iid) ?? { size: 0n, entry: 0n, funding: 0n };
    const prevSize = p.size;
    const prevEntry = p.entry;
    const signed = o.buy ? qty : -qty;
    let pnl = 0n;
    if (p.size === 0n || p.size > 0n === signed > 0n) {
      const size = abs(p.size) + qty;
      p.entry = (abs(p.size) * p.entry + qty * price) / size;
      p.size += signed;
    } else {
      const closing = minB(qty, abs(p.size));
      pnl = (closing * (price - p.entry) * (p.size > 0n ? 1n : -1n)) / NOTIONAL_DIV;
      a.balance += pnl;
      const newSize = p.size + signed;
      if (newSize === 0n) p.entry = 0n;
      else if (newSize > 0n !== p.size > 0n) p.entry = price;
      p.size = newSize;
    }
    const rate = taker ? TAKER_FEE : MAKER_FEE;
    const fee = ((qty * price) / NOTIONAL_DIV) * rate.num / rate.den;
    a.balance -= fee;
    a.realized += pnl - fee;
    if (p.size === 0n) a.positions.delete(o.iid);
    else a.positions.set(o.iid, p);
    const tradeId = taker ? this.nextTradeId++ : this.nextTradeId - 1;
    const trade = taker ? { tradeId, iid: o.iid, buy: o.buy, price, qty, ts: this.now() } : undefined;
    if (trade) this.trades.push(trade);
    const done: Fill = { tradeId, oid: o.oid, iid: o.iid, buy: o.buy, price, qty, taker, fee, prevSize, prevEntry, pnl, ts: this.now() };
    a.fills.push(done);
    this.snapshot(a);
    const owner = a.owner.toLowerCase();
    this.emit({ kind: 'fill', owner, fill: done });
    if (trade) this.emit({ kind: 'trade', trade });
    this.emit({ kind: 'account', owner });
  }

  /** Settles hourly funding of `a`'s positions up to now (at most 30 days of hours at once). */
  settleFunding(a: Account): void {
    const HOUR = 3_600_000;
    const last = Math.floor(this.now() / HOUR) * HOUR;
    let changed = false;
    for (let h = Math.max(a.fundingSettledTo + HOUR, last - 720 * HOUR); h <= last; h += HOUR) {
      for (const [iid, p] of a.positions) {
        const rate = this.fundingRate(iid, h);
        const mark = this.instruments.get(iid)!.mark;
        const r = toUnits(rate.replace(/^-/, ''), 8) ?? 0n;
        const value = (abs(p.size) * mark) / NOTIONAL_DIV;
        const paid = (value * r) / 10n ** 8n;
        // Positive rate: longs pay, shorts receive.
        const amount = (rate.startsWith('-') ? 1n : -1n) * (p.size > 0n ? 1n : -1n) * paid;
        a.balance += amount;
        a.realized += amount;
        p.funding = (p.funding ?? 0n) + amount;
        const payment = { id: this.nextFundingId++, iid, size: p.size, rate, amount, ts: h };
        a.funding.push(payment);
        this.emit({ kind: 'funding', owner: a.owner.toLowerCase(), payment });
        changed = true;
      }
    }
    a.fundingSettledTo = Math.max(a.fundingSettledTo, last);
    if (changed) {
      this.snapshot(a);
      this.emit({ kind: 'account', owner: a.owner.toLowerCase() });
    }
  }

  /** Unrealised PnL of a position at the instrument's mark (USDC base units). */
  unrealized(iid: number, p: Position): bigint {
    return (p.size * (this.instruments.get(iid)!.mark - p.entry)) / NOTIONAL_DIV;
  }

  /** Account value: balance + Σ unrealised PnL (base units). */
  equity(a: Account): bigint {
    let e = a.balance;
    for (const [iid, p] of a.positions) e += this.unrealized(iid, p);
    return e;
  }

  /** Maintenance margin of a position: notional at mark / (2 × max leverage), base units. */
  maintenance(iid: number, p: Position): bigint {
    const inst = this.instruments.get(iid)!;
    return (abs(p.size) * inst.mark) / NOTIONAL_DIV / BigInt(2 * inst.maxLeverage);
  }

  /**
   * Liquidation price of the position in `iid` (PX units; 0 when none is reachable): where account
   * value equals total maintenance margin, the other positions held at their mark.
   * Solves `B + s·(P − e) = |s|·P·m + M_others` for P, with m = 1 / (2 × max leverage).
   */
  liquidationPrice(a: Account, iid: number): bigint {
    const p = a.positions.get(iid);
    if (!p || p.size === 0n) return 0n;
    const inst = this.instruments.get(iid)!;
    let rest = a.balance;
    for (const [j, q] of a.positions) if (j !== iid) rest += this.unrealized(j, q) - this.maintenance(j, q);
    // In PX units: s·P − |s|·P/(2L) = s·e − rest·DIV  →  P = (s·e − rest·DIV) / (s − |s|/(2L)).
    const twoL = BigInt(2 * inst.maxLeverage);
    const num = (p.size * p.entry - rest * NOTIONAL_DIV) * twoL;
    const den = p.size * twoL - abs(p.size);
    const price = num / den;
    return price > 0n ? price : 0n;
  }

  /** Records an equity / PnL point for `a` now. */
  snapshot(a: Account): void {
    a.history.push([this.now(), this.equity(a), a.realized]);
    if (a.history.length > 5_000) a.history.splice(0, 1_000);
  }

  /** Cancels one open (or untriggered) order of `a`; false when it is not there. */
  cancel(a: Account, o: PerpsOrder | undefined, reason = 'cancelled_by_user'): boolean {
    if (!o || o.owner !== a.owner.toLowerCase() || (o.status !== 'open' && o.status !== 'untriggered')) return false;
    if (o.status === 'open') {
      const book = this.book(o.iid);
      const side = o.buy ? book.bids : book.asks;
      const i = side.indexOf(o);
      if (i >= 0) side.splice(i, 1);
    }
    const wasOpen = o.status === 'open';
    o.status = 'cancelled';
    o.reason = reason;
    o.updated = this.now();
    this.emit({ kind: 'order', order: o });
    if (wasOpen) this.emit({ kind: 'book', iid: o.iid });
    return true;
  }

  cancelAll(a: Account, iid?: number, reason = 'cancelled_by_user'): number[] {
    const out: number[] = [];
    for (const o of this.orders.values()) {
      if ((iid === undefined || o.iid === iid) && this.cancel(a, o, reason)) out.push(o.oid);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Triggers and liquidation (issue #19): what happens when the mark moves.

  /** Sets an instrument's mark price (PX units; the admin route `/admin/mark`), then fires triggers and liquidates. */
  setMark(iid: number, mark: bigint): void {
    const inst = this.instruments.get(iid);
    if (!inst) throw new VenueError('unknown_instrument');
    inst.mark = mark;
    this.emit({ kind: 'mark', iid });
    this.afterMarkMove();
  }

  /** After any mark change: arm, fire, liquidate — until nothing more happens (a fill moves the mark again; at most 20 rounds). */
  afterMarkMove(): void {
    for (let round = 0; round < 20; round++) {
      this.armTriggers();
      const fired = this.fireTriggers();
      const liquidated = this.liquidateAll();
      if (!fired && !liquidated) return;
    }
  }

  /**
   * A waiting TP / SL is `armed` (with `armedQty`) while its account holds a position the order reduces,
   * `untriggered` otherwise; a change (armed, disarmed, another armed size) is an `order` event.
   */
  private armTriggers(): void {
    for (const o of this.orders.values()) {
      if (!o.trigger || o.status !== 'untriggered') continue;
      const pos = this.findAccount(o.owner)?.positions.get(o.iid)?.size ?? 0n;
      const reduces = o.buy ? pos < 0n : pos > 0n;
      const armedQty = reduces ? minB(o.qty, abs(pos)) : undefined;
      if (armedQty === o.trigger.armedQty) continue;
      o.trigger.armedQty = armedQty;
      o.updated = this.now();
      this.emit({ kind: 'order', order: o });
    }
  }

  /** Whether the mark crossed a trigger: an exit that sells fires at or above its TP / at or below its SL; an exit that buys the reverse. */
  private crossed(o: PerpsOrder, mark: bigint): boolean {
    const t = o.trigger;
    if (!t) return false;
    const up = o.buy ? t.tpsl === 'sl' : t.tpsl === 'tp';
    return up ? mark >= t.trp : mark <= t.trp;
  }

  /** Fires every armed trigger whose price the mark crossed: it executes as a reduce-only order (market, or its limit). Returns whether any fired. */
  private fireTriggers(): boolean {
    let any = false;
    for (const o of [...this.orders.values()]) {
      if (!o.trigger || o.status !== 'untriggered' || !o.trigger.armedQty) continue;
      const inst = this.instruments.get(o.iid);
      if (!inst || !this.crossed(o, inst.mark)) continue;
      const a = this.findAccount(o.owner);
      if (!a) continue;
      o.trigger.fired = true;
      o.ro = true;
      o.tif = 'ioc';
      if (o.trigger.market) delete o.price;
      o.status = 'open';
      this.execute(a, o);
      this.emit({ kind: 'order', order: o });
      any = true;
    }
    return any;
  }

  /** Liquidates every account whose value fell below its total maintenance margin. Returns whether any was. */
  private liquidateAll(): boolean {
    let any = false;
    for (const a of this.accounts.values()) {
      if (a.positions.size === 0) continue;
      let maint = 0n;
      for (const [iid, p] of a.positions) maint += this.maintenance(iid, p);
      if (this.equity(a) >= maint) continue;
      this.liquidate(a);
      any = true;
    }
    return any;
  }

  /**
   * Liquidates `a`: cancels its open orders and closes every position at the mark against the venue
   * (no book; the taker fee is charged), recorded as filled reduce-only orders with reason `liquidation`.
   */
  liquidate(a: Account): void {
    this.cancelAll(a, undefined, 'liquidation');
    for (const [iid, p] of [...a.positions]) {
      const inst = this.instruments.get(iid);
      if (!inst || p.size === 0n) continue;
      const o: PerpsOrder = { oid: this.nextOid++, owner: a.owner.toLowerCase(), iid, buy: p.size < 0n, qty: abs(p.size), filled: 0n, tif: 'ioc', po: false, ro: true, status: 'filled', reason: 'liquidation', seq: this.nextSeq++, created: this.now(), updated: this.now() };
      this.orders.set(o.oid, o);
      this.fill(a, o, o.qty, inst.mark, true);
    }
  }

  /**
   * The order as the venue's reads answer it (`@polymarket/bindings/perps` `PerpsOrderSchema`): status
   * `open` / `partial` / `filled` / `cancelled` / `auto_cancelled` / `ioc_expired` / `ioc_no_fill` /
   * `post_only_rejected` / `fok_unfilled` / `reduce_only_invalid`; a trigger order `untriggered` /
   * `armed` / `triggered` / `reduce_only_invalid_at_trigger` / `cancelled` (`triggerStatus`). Market orders show price `0`; trigger orders carry `tpsl`.
   */
  view(o: PerpsOrder): OrderView {
    const STATUS: Record<string, string> = {
      cancelled_by_user: 'cancelled',
      auto_cancel: 'auto_cancelled',
      ioc_remainder_cancelled: 'ioc_expired',
      no_liquidity: 'ioc_no_fill',
      post_only_would_cross: 'post_only_rejected',
      fok_not_filled: 'fok_unfilled',
      reduce_only_would_increase_position: 'reduce_only_invalid',
    };
    const status = o.trigger ? triggerStatus(o) : o.status === 'open' ? (o.filled > 0n ? 'partial' : 'open') : o.status === 'filled' ? 'filled' : (STATUS[o.reason ?? ''] ?? (o.status === 'rejected' ? 'rejected' : 'cancelled'));
    return {
      order_id: o.oid,
      instrument_id: o.iid,
      buy: o.buy,
      price: o.price === undefined ? '0' : fromUnits(o.price, PX_SCALE),
      quantity: fromUnits(o.qty, PX_SCALE),
      tif: o.tif ?? 'gtc',
      post_only: o.po,
      ro: o.ro,
      status,
      resting_quantity: o.status === 'open' ? fromUnits(o.qty - o.filled, PX_SCALE) : '0',
      filled_quantity: fromUnits(o.filled, PX_SCALE),
      created_timestamp: o.created,
      updated_timestamp: o.updated,
      ...(o.coid ? { client_order_id: o.coid } : {}),
      ...(o.trigger ? { tpsl: { kind: o.trigger.tpsl, scope: 'order', trp: fromUnits(o.trigger.trp, PX_SCALE), ...(o.trigger.armedQty ? { armed_qty: fromUnits(o.trigger.armedQty, PX_SCALE) } : {}) } } : {}),
    };
  }

  /** Aggregated book levels, best first: `[price, qty]` as decimal strings (the `Book` of `GET /v1/info/book`, lib/perps/wire). */
  levels(iid: number, depth = 20): Book {
    const agg = (side: PerpsOrder[]) => {
      const out: [string, string][] = [];
      let last: bigint | undefined;
      let sum = 0n;
      for (const o of side) {
        if (o.price !== last && last !== undefined) {
          out.push([fromUnits(last, PX_SCALE), fromUnits(sum, PX_SCALE)]);
          sum = 0n;
          if (out.length >= depth) break;
        }
        last = o.price;
        sum += o.qty - o.filled;
      }
      if (last !== undefined && out.length < depth) out.push([fromUnits(last, PX_SCALE), fromUnits(sum, PX_SCALE)]);
      return out;
    };
    const b = this.book(iid);
    return { bids: agg(b.bids), asks: agg(b.asks) };
  }
}

/** The read status of a trigger order: waiting (`untriggered` / `armed`), `triggered` once fired (its fill in `filled_quantity`), or why it ended. */
function triggerStatus(o: PerpsOrder): string {
  if (o.status === 'untriggered') return o.trigger?.armedQty ? 'armed' : 'untriggered';
  if (o.trigger?.fired) return o.status === 'rejected' ? 'reduce_only_invalid_at_trigger' : 'triggered';
  return o.reason === 'auto_cancel' ? 'auto_cancelled' : 'cancelled';
}
