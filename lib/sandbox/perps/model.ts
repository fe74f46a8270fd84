/**
 * The sandbox perps venue's data model: instruments, orders, positions, fills, funding payments,
 * deposits, transfers, accounts, the events the streams hear, the fee rates and the venue's refusal
 * (`VenueError`). Prices and quantities are bigint at `PX_SCALE` (8) decimals, USDC in base units
 * (6 decimals), times Unix ms. The venue itself is `./engine.ts`.
 */
import type { Address } from 'viem';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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

/**
 * A resting or finished order in the engine: prices and quantities scaled by 10^`PX_SCALE`, times Unix ms (the read
 * view is `view()`: `OrderView` of lib/perps/wire).
 */
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
  /**
   * A TP / SL trigger: `armedQty` while the account holds a position it reduces (status `armed`), `fired`
   * once the mark crossed `trp`. `scope` `position` (a leg of a `"position"` group, quantity 0): it arms
   * for, and closes, the whole position as it is when it fires.
   */
  trigger?: {
    tpsl: 'tp' | 'sl';
    trp: bigint;
    market: boolean;
    scope: 'order' | 'position';
    armedQty?: bigint;
    fired?: boolean;
  };
  status: OrderStatus;
  reason?: string;
  seq: number;
  created: number;
  updated: number;
};

/**
 * A position: `size` signed (PX units), `entry` price (PX units), cumulative `funding` (USDC base units, + received).
 */
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

/**
 * A deposit seen on chain: `amount` base units (USDC 6 decimals), credited after `requiredConfirmations`; `created`
 * Unix ms.
 */
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
 * A change in the venue, as the streams report it (PROTOCOL.md §5.1–§5.2). `order`: an
 * order's state changed (placed, matched, cancelled); `fill`: one fill of `owner`'s order; `account`:
 * `owner`'s balance, positions or leverage changed; `funding`: one funding payment of `owner`;
 * `trade`: a public trade (taker side; it also moves the instrument's mark to its price); `book`: the
 * book of `iid` changed; `mark`: the mark of `iid` was set (`setMark`: the admin route).
 * Emitted synchronously where the state changes; listeners must not change the venue.
 */
export type PerpsVenueEvent =
  | { kind: 'order'; order: PerpsOrder }
  | { kind: 'fill'; owner: string; fill: Fill }
  | { kind: 'account'; owner: string }
  | { kind: 'funding'; owner: string; payment: FundingPayment }
  | { kind: 'trade'; trade: Trade }
  | { kind: 'book'; iid: number }
  | { kind: 'mark'; iid: number };

/** A public trade (taker side): prices and quantities PX units, `ts` Unix ms. */
export type Trade = { tradeId: number; iid: number; buy: boolean; price: bigint; qty: bigint; ts: number };

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
