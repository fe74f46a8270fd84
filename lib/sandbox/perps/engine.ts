/**
 * The sandbox perps venue: accounts, instruments, a price-time-priority matching engine per
 * instrument, positions and margin. Pure in-memory state driven by a clock; the HTTP layer
 * (`routes.ts`) verifies signatures before anything here runs. The data model is `./model.ts` (re-exported
 * here), new accounts and order drafts `./orders.ts`, the position arithmetic `./risk.ts`, arming and firing
 * the trigger orders (TP / SL) `./triggers.ts`, the order and book reads `./views.ts`.
 *
 * Units: prices and quantities are bigint at `PX_SCALE` (8) decimals; collateral balances are bigint
 * USDC base units (6 decimals). Notional (base units) = price × qty / 10^(2·8 − 6).
 *
 * Margin model (deliberately simple; documented in `lib/sandbox/README.md`, "Sandbox gateway", the
 * "Perps venue" paragraph): each account has one collateral balance;
 * used margin = Σ |position| × entry / leverage + Σ resting-order remaining × price / leverage;
 * an order (or the part of it that grows the position) needs notional / leverage of free collateral,
 * else the whole command fails with `insufficient_margin` and nothing changes.
 *
 * Fees, funding and risk (the venue's values are unshown; chosen here and documented in
 * `lib/sandbox/README.md`, "Sandbox gateway", the "Perps venue" paragraph): taker fee 5 bp and maker fee
 * 1 bp of notional, charged on each fill; funding settles every hour on the hour (`fundingRate`): a long
 * pays `size × mark × rate`, a short receives it; maintenance margin is half the initial margin at the
 * instrument's maximum leverage (`notional / (2 × maxLeverage)`); the liquidation price is where account
 * value (balance + unrealised PnL) equals the maintenance margin, other positions held at their mark.
 */
import type { Address } from 'viem';
import type { PerpsOrderInput } from '../../perps/commands';
import { abs, minB } from '../../decimal';
import type { Book, OrderView } from '../../perps/wire';
import {
  DEFAULT_LEVERAGE,
  NOTIONAL_DIV,
  VenueError,
  type Account,
  type Deposit,
  type Fill,
  type Instrument,
  type PerpsOrder,
  type PerpsVenueEvent,
  type Position,
  type Trade,
} from './model';
import { bookLevels, orderView } from './views';
import { draftOrder, emptyAccount } from './orders';
import { applyFill, fillFee, fundingAmount, liquidationPriceOf, maintenanceMargin, unrealizedPnl } from './risk';
import { armTriggers, fireTriggers } from './triggers';

export * from './model';

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
  readonly trades: Trade[] = [];
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
      a = emptyAccount(owner as Address, this.now());
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
  placeOrders(a: Account, inputs: PerpsOrderInput[], group?: string): PerpsOrder[] {
    const now = this.now();
    const drafts: PerpsOrder[] = [];
    let extraMargin = 0n;
    const owner = a.owner.toLowerCase();
    const coidOpen = (c: string) =>
      [...this.orders.values()].some(
        (x) => x.owner === owner && x.coid === c && (x.status === 'open' || x.status === 'untriggered'),
      );
    for (const o of inputs) {
      const inst = this.instruments.get(o.iid);
      if (!inst) throw new VenueError('unknown_instrument');
      const draft = draftOrder(o, inst, owner, now, coidOpen, group);
      if (!draft.ro && !draft.trigger) {
        const lev = BigInt(this.configOf(a, o.iid).leverage);
        const refPx = draft.price ?? this.worstPrice(o.iid, o.buy) ?? inst.mark;
        extraMargin += (draft.qty * refPx) / NOTIONAL_DIV / lev;
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
    const pnl = applyFill(p, o.buy ? qty : -qty, price);
    const fee = fillFee(qty, price, taker);
    a.balance += pnl - fee;
    a.realized += pnl - fee;
    if (p.size === 0n) a.positions.delete(o.iid);
    else a.positions.set(o.iid, p);
    const tradeId = taker ? this.nextTradeId++ : this.nextTradeId - 1;
    const trade = taker ? { tradeId, iid: o.iid, buy: o.buy, price, qty, ts: this.now() } : undefined;
    if (trade) this.trades.push(trade);
    const done: Fill = {
      tradeId,
      oid: o.oid,
      iid: o.iid,
      buy: o.buy,
      price,
      qty,
      taker,
      fee,
      prevSize,
      prevEntry,
      pnl,
      ts: this.now(),
    };
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
        const amount = fundingAmount(p, this.instruments.get(iid)!.mark, rate);
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
    return unrealizedPnl(p, this.instruments.get(iid)!.mark);
  }

  /** Account value: balance + Σ unrealised PnL (base units). */
  equity(a: Account): bigint {
    let e = a.balance;
    for (const [iid, p] of a.positions) e += this.unrealized(iid, p);
    return e;
  }

  /** Maintenance margin of a position: notional at mark / (2 × max leverage), base units. */
  maintenance(iid: number, p: Position): bigint {
    return maintenanceMargin(p, this.instruments.get(iid)!);
  }

  /**
   * Liquidation price of the position in `iid` (PX units; 0 when none is reachable): where account
   * value equals total maintenance margin, the other positions held at their mark.
   * Solves `B + s·(P − e) = |s|·P·m + M_others` for P, with m = 1 / (2 × max leverage) (`liquidationPriceOf`).
   */
  liquidationPrice(a: Account, iid: number): bigint {
    const p = a.positions.get(iid);
    if (!p || p.size === 0n) return 0n;
    let rest = a.balance;
    for (const [j, q] of a.positions) if (j !== iid) rest += this.unrealized(j, q) - this.maintenance(j, q);
    return liquidationPriceOf(p, this.instruments.get(iid)!.maxLeverage, rest);
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
  // Triggers (`./triggers.ts`) and liquidation: what happens when the mark moves.

  /** Sets an instrument's mark price (PX units; the admin route `/admin/mark`), then fires triggers and liquidates. */
  setMark(iid: number, mark: bigint): void {
    const inst = this.instruments.get(iid);
    if (!inst) throw new VenueError('unknown_instrument');
    inst.mark = mark;
    this.emit({ kind: 'mark', iid });
    this.afterMarkMove();
  }

  /**
   * After any mark change: arm, fire, liquidate — until nothing more happens (a fill moves the mark again; at most 20
   * rounds).
   */
  afterMarkMove(): void {
    for (let round = 0; round < 20; round++) {
      armTriggers(this);
      const fired = fireTriggers(this, (a, o) => this.execute(a, o));
      const liquidated = this.liquidateAll();
      if (!fired && !liquidated) return;
    }
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
      const o: PerpsOrder = {
        oid: this.nextOid++,
        owner: a.owner.toLowerCase(),
        iid,
        buy: p.size < 0n,
        qty: abs(p.size),
        filled: 0n,
        tif: 'ioc',
        po: false,
        ro: true,
        status: 'filled',
        reason: 'liquidation',
        seq: this.nextSeq++,
        created: this.now(),
        updated: this.now(),
      };
      this.orders.set(o.oid, o);
      this.fill(a, o, o.qty, inst.mark, true);
    }
  }

  /** The order as the venue's reads answer it (`orderView`, `./views.ts`). */
  view(o: PerpsOrder): OrderView {
    return orderView(o);
  }

  /** Aggregated book levels of `iid`, best first (`bookLevels`, `./views.ts`). */
  levels(iid: number, depth = 20): Book {
    return bookLevels(this.book(iid), depth);
  }
}
