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
 */
import type { Address } from 'viem';
import type { PerpsOrderInput } from '../../perps/commands';
import { abs, fromUnits, minB, toUnits } from '../decimal';

export const PX_SCALE = 8;
const NOTIONAL_DIV = 10n ** BigInt(2 * PX_SCALE - 6);

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
  trigger?: { tpsl: 'tp' | 'sl'; trp: bigint; market: boolean };
  status: OrderStatus;
  reason?: string;
  seq: number;
  created: number;
  updated: number;
};

export type Position = { size: bigint; entry: bigint };

export type Proxy = { proxy: Address; secret: string; expiry: number; label: string };

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

export type Transfer = {
  transfer_id: number;
  asset: string;
  amount: string;
  direction: 'in' | 'out';
  counterparty: string;
  created_timestamp: number;
  label: string;
};

export type Account = {
  owner: Address;
  balance: bigint;
  positions: Map<number, Position>;
  config: Map<number, { leverage: number; cross: boolean }>;
  proxies: Map<string, Proxy>;
  deposits: Deposit[];
  transfers: Transfer[];
  withdrawals: { withdraw_id: number; amount: bigint; to: string; token: string; ts: number }[];
  invite?: string;
  parent?: string;
  children: number;
  autoCancelAt?: number;
};

export const DEFAULT_LEVERAGE = 10;

/** Thrown by the engine when a command must fail as a whole (`{ status: "err", error }`). */
export class VenueError extends Error {
  constructor(
    readonly error: string,
    readonly status = 400,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(error);
  }
}

const px = (s: string) => toUnits(s, PX_SCALE);

export class PerpsVenue {
  readonly accounts = new Map<string, Account>();
  readonly instruments = new Map<number, Instrument>();
  readonly orders = new Map<number, PerpsOrder>();
  private readonly books = new Map<number, { bids: PerpsOrder[]; asks: PerpsOrder[] }>();
  private nextOid = 1000;
  private nextSeq = 1;
  nextTransferId = 1;
  nextWithdrawId = 1;

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
      this.cancelAll(a);
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
    }
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
    if (o.trigger) {
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
      this.fill(a, o, q, m.price!);
      this.fill(this.account(m.owner), m, q, m.price!);
      if (m.filled === m.qty) {
        m.status = 'filled';
        opposite.shift();
      }
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
  }

  private fill(a: Account, o: PerpsOrder, qty: bigint, price: bigint): void {
    o.filled += qty;
    o.updated = this.now();
    const inst = this.instruments.get(o.iid)!;
    inst.mark = price;
    const p = a.positions.get(o.iid) ?? { size: 0n, entry: 0n };
    const signed = o.buy ? qty : -qty;
    if (p.size === 0n || p.size > 0n === signed > 0n) {
      const size = abs(p.size) + qty;
      p.entry = (abs(p.size) * p.entry + qty * price) / size;
      p.size += signed;
    } else {
      const closing = minB(qty, abs(p.size));
      const pnl = (closing * (price - p.entry) * (p.size > 0n ? 1n : -1n)) / NOTIONAL_DIV;
      a.balance += pnl;
      const newSize = p.size + signed;
      if (newSize === 0n) p.entry = 0n;
      else if (newSize > 0n !== p.size > 0n) p.entry = price;
      p.size = newSize;
    }
    if (p.size === 0n) a.positions.delete(o.iid);
    else a.positions.set(o.iid, p);
  }

  /** Cancels one open (or untriggered) order of `a`; false when it is not there. */
  cancel(a: Account, o: PerpsOrder | undefined): boolean {
    if (!o || o.owner !== a.owner.toLowerCase() || (o.status !== 'open' && o.status !== 'untriggered')) return false;
    if (o.status === 'open') {
      const book = this.book(o.iid);
      const side = o.buy ? book.bids : book.asks;
      const i = side.indexOf(o);
      if (i >= 0) side.splice(i, 1);
    }
    o.status = 'cancelled';
    o.reason = 'cancelled_by_user';
    o.updated = this.now();
    return true;
  }

  cancelAll(a: Account, iid?: number): number[] {
    const out: number[] = [];
    for (const o of this.orders.values()) {
      if ((iid === undefined || o.iid === iid) && this.cancel(a, o)) out.push(o.oid);
    }
    return out;
  }

  /** The order view get-orders returns (decimals as strings, times in ms). */
  view(o: PerpsOrder) {
    return {
      oid: o.oid,
      ...(o.coid ? { coid: o.coid } : {}),
      iid: o.iid,
      buy: o.buy,
      ...(o.price === undefined ? {} : { p: fromUnits(o.price, PX_SCALE) }),
      qty: fromUnits(o.qty, PX_SCALE),
      filled_qty: fromUnits(o.filled, PX_SCALE),
      resting_qty: o.status === 'open' ? fromUnits(o.qty - o.filled, PX_SCALE) : '0',
      ...(o.tif ? { tif: o.tif } : {}),
      po: o.po,
      ro: o.ro,
      ...(o.trigger ? { tr: { tpsl: o.trigger.tpsl, trp: fromUnits(o.trigger.trp, PX_SCALE), market: o.trigger.market } } : {}),
      status: o.status,
      ...(o.reason ? { reason: o.reason } : {}),
      created_timestamp: o.created,
      updated_timestamp: o.updated,
    };
  }

  /** Aggregated book levels, best first: `[price, qty]` as decimal strings. */
  levels(iid: number, depth = 20) {
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
