/**
 * The perps gateway's read answers as valibot schemas — defined once, used by the gateway client (which
 * validates every answer: the trust boundary), the message contract (`perps.read`, `perps.book`), the
 * popup's perps store and the sandbox engine's wire types. Source: the seed's "Endpoints" and PROTOCOL.md
 * §3.2; shapes as the sandbox serves them (`lib/sandbox/perps/routes.ts`).
 *
 * Only the fields a reader of this codebase uses are checked, and only they pass: every object drops the
 * fields it does not name (the venue may add fields; one it adds — or a secret a gateway echoes — never
 * travels on to the popup). Prices, sizes and amounts are decimal strings (prices and sizes in the
 * instrument's units, amounts in USDC); ids are JS numbers; times are Unix ms.
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import type { PerpsReadName } from './reads';
import { instrumentSymbols } from '../validation/venue-text';

const str = v.pipe(v.string(), v.maxLength(200));
const num = v.number();
/** A `[price, quantity]` book level, decimal strings. */
const level = v.tuple([str, str]);
/** A fill: `price` / `quantity` instrument units, `fee` / `pnl` USDC (decimal strings), `timestamp` Unix ms. */
const fillSchema = v.object({
  trade_id: num,
  order_id: num,
  instrument_id: num,
  side: v.picklist(['long', 'short']),
  price: str,
  quantity: str,
  fee: str,
  pnl: str,
  taker: v.boolean(),
  timestamp: num,
});
/**
 * A funding payment: `funding` USDC (+ received, − paid), `funding_rate` a fraction, `size` instrument units,
 * `timestamp` Unix ms.
 */
const fundingPaymentSchema = v.object({
  id: num,
  instrument_id: num,
  size: str,
  funding_rate: str,
  funding: str,
  timestamp: num,
});
/** An equity or cumulative-PnL point: `[Unix ms, USDC decimal string]`. */
const historyPoint = v.tuple([num, str]);
/** An order acknowledgement: `oid`, and `coid` when the order carried one. */
const ackSchema = v.object({ status: v.optional(v.string()), oid: v.optional(num), coid: v.optional(str) });
/**
 * The success body of a signed command (seed "Endpoints"): `{ status: 'ok' }` with the command's fields —
 * createOrders answers one acknowledgement per order (`oid`, and `coid` when given), withdraw a
 * `withdraw_id`, internalTransfer a `transfer_id`, updateLeverage the applied `leverage`.
 */
export const perpsCommandAnswerSchema = v.union([
  v.array(ackSchema),
  v.object({
    status: v.optional(v.string()),
    withdraw_id: v.optional(num),
    transfer_id: v.optional(num),
    leverage: v.optional(num),
  }),
]);
/** A signed command's success body (`perpsCommandAnswerSchema`). */
export type PerpsCommandAnswer = v.InferOutput<typeof perpsCommandAnswerSchema>;

/** A history page: rows newest first and whether more exist (`{ data, more }`). */
const page = <T extends v.GenericSchema>(row: T) => v.object({ data: v.array(row), more: v.optional(v.boolean()) });

/** A step (tick or lot) as the venue states it: a positive decimal string. */
const step = v.pipe(
  str,
  v.regex(/^(?:0|[1-9]\d{0,19})(?:\.\d{1,20})?$/),
  v.check((x) => !/^0(?:\.0*)?$/.test(x), 'must be positive'),
);
/** `GET /v1/info/instruments` row. `tick_size` / `lot_size` are sandbox extras (else 10^-decimals). */
const instrumentSchema = v.object({
  instrument_id: num,
  // Optional: the answer is parsed again past the background, where a refused symbol is already unset.
  symbol: v.optional(str),
  price_decimals: v.pipe(num, v.integer(), v.minValue(0), v.maxValue(18)),
  quantity_decimals: v.pipe(num, v.integer(), v.minValue(0), v.maxValue(18)),
  max_leverage: num,
  tick_size: v.optional(step),
  lot_size: v.optional(step),
});
/**
 * An instrument (see `instrumentSchema`). `symbol` is the venue's, validated (`instrumentsSchema`), and
 * unset when it was refused: every surface names the instrument through `instrumentLabel(instrument_id, symbol)`.
 */
export type Instrument = Omit<v.InferOutput<typeof instrumentSchema>, 'symbol'> & { symbol?: string };
/**
 * The instruments answer, its symbols validated at the boundary (`lib/validation/venue-text.ts`): a
 * symbol out of the venue's shape, or one two instruments share, is dropped (`symbol` unset).
 */
const instrumentsSchema = v.pipe(
  v.array(instrumentSchema),
  v.transform((list): Instrument[] => {
    const ok = instrumentSymbols(list);
    return list.map(({ symbol: _served, ...i }) => {
      const symbol = ok.get(i.instrument_id);
      return symbol === undefined ? i : { ...i, symbol };
    });
  }),
);

/** `GET /v1/info/tickers` row: mark, index, mid and last prices and the funding rate. */
const tickerSchema = v.object({
  instrument_id: num,
  mark_price: str,
  index_price: str,
  mid_price: str,
  last_price: str,
  funding_rate: str,
});
/** A ticker (see `tickerSchema`). */
export type Ticker = v.InferOutput<typeof tickerSchema>;

/** `GET /v1/info/statistics` row: 24 h open price and volume. */
const statisticSchema = v.object({ instrument_id: num, open_price: str, volume: str });
/** A 24 h statistic (see `statisticSchema`). */
export type Statistic = v.InferOutput<typeof statisticSchema>;

/** A signed decimal string as the venue writes sizes (`"-0.5"`): no exponent, spaces or second sign. */
const signedDec = v.pipe(str, v.regex(/^-?\d{1,40}(?:\.\d{1,40})?$/));
/** A decimal string as the venue writes prices (`"65000.5"`). */
const unsignedDec = v.pipe(str, v.regex(/^\d{1,40}(?:\.\d{1,40})?$/));
/**
 * One position of `GET /v1/account/portfolio`: signed `size`, margins and value in USDC, `leverage` ×.
 * `size` and `entry_price` (what a close order and its preview are built from) are decimal strings in
 * the venue's shape, else the answer is refused. The venue's `symbol` is dropped at the boundary: a
 * position, polled or pushed, is named by its `instrument_id` through the instruments read
 * (`instrumentLabel`), so a portfolio read cannot rename what a close order closes.
 */
const positionSchema = v.pipe(
  v.object({
    instrument_id: num,
    symbol: v.optional(v.unknown()),
    size: signedDec,
    entry_price: unsignedDec,
    leverage: num,
    cross: v.boolean(),
    initial_margin: str,
    maintenance_margin: str,
    position_value: str,
    liquidation_price: str,
    unrealized_pnl: str,
    return_on_equity: str,
    cumulative_funding: str,
  }),
  v.transform(({ symbol: _served, ...p }) => p),
);
/** A position (see `positionSchema`). */
export type Position = v.InferOutput<typeof positionSchema>;

/** `GET /v1/account/portfolio`: positions, the margin summary (USDC) and the withdrawable amount. */
const portfolioSchema = v.object({
  positions: v.array(positionSchema),
  margin: v.object({
    total_account_value: str,
    total_initial_margin: str,
    total_maintenance_margin: str,
    total_position_value: str,
  }),
  withdrawable: str,
});
/** A portfolio (see `portfolioSchema`). */
export type Portfolio = v.InferOutput<typeof portfolioSchema>;

/**
 * An order as `GET /v1/account/orders` and `/open-orders` answer it; `tpsl` for trigger orders (`armed_qty` while
 * armed).
 */
const orderViewSchema = v.object({
  order_id: num,
  client_order_id: v.optional(str),
  instrument_id: num,
  buy: v.boolean(),
  price: str,
  quantity: str,
  filled_quantity: str,
  resting_quantity: str,
  status: str,
  tif: v.optional(str),
  post_only: v.optional(v.boolean()),
  ro: v.optional(v.boolean()),
  created_timestamp: v.optional(num),
  updated_timestamp: v.optional(num),
  tpsl: v.optional(v.object({ kind: str, scope: v.optional(str), trp: str, armed_qty: v.optional(str) })),
});
/** An order (see `orderViewSchema`). */
export type OrderView = v.InferOutput<typeof orderViewSchema>;

/** `GET /v1/info/book`: aggregated `[price, quantity]` levels, best first. */
export const bookSchema = v.object({ bids: v.array(level), asks: v.array(level) });
/** A book (see `bookSchema`). */
export type Book = v.InferOutput<typeof bookSchema>;

/** `GET /v1/info/fees`: the fee schedule (rates as decimal fractions, e.g. `"0.0005"`). */
const feesSchema = v.object({ fee_schedule: v.array(v.object({ taker_fee_rate: str, maker_fee_rate: str })) });

/** `GET /v1/info/exchange`: the EIP-712 domain's name, version, chain id, and the withdraw contract. */
const exchangeInfoSchema = v.object({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  version: v.pipe(v.string(), v.minLength(1), v.maxLength(20)),
  chain_id: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  contract: v.pipe(
    v.string(),
    v.regex(/^0x[0-9a-fA-F]{40}$/),
    v.transform((s): `0x${string}` => `0x${s.slice(2)}`),
  ),
});

/** Each read's answer schema, by read name (`PERPS_READS`). */
export const PERPS_READ_ANSWERS = {
  invite: v.object({ code: str, referrals_available: v.optional(num), cooldown_ms: v.optional(v.nullable(num)) }),
  deposits: page(
    v.object({
      hash: str,
      amount: str,
      confirmations: num,
      required_confirmations: num,
      status: str,
      created_timestamp: num,
    }),
  ),
  internalTransfers: page(
    v.object({
      transfer_id: num,
      amount: str,
      direction: v.picklist(['in', 'out']),
      counterparty: str,
      created_timestamp: num,
      label: v.string(),
    }),
  ),
  config: v.array(v.object({ instrument_id: num, leverage: num, cross: v.boolean() })),
  funding: page(v.object({ timestamp: num, funding_rate: str })),
  referral: v.object({
    code: v.string(),
    children_count: num,
    referrals_left: num,
    fee_share_rate: str,
    parent: v.optional(str),
  }),
  credentials: v.object({ address: str, keys: v.array(v.object({ proxy: str, expiry: num, label: v.string() })) }),
  exchange: exchangeInfoSchema,
  orders: v.array(orderViewSchema),
  openOrders: v.array(orderViewSchema),
  instruments: instrumentsSchema,
  portfolio: portfolioSchema,
  balances: v.array(v.object({ asset: str, balance: str })),
  stats: v.object({}),
  fills: page(fillSchema),
  fundingPayments: page(fundingPaymentSchema),
  withdrawals: page(v.object({})),
  equity: page(historyPoint),
  pnl: page(historyPoint),
  book: bookSchema,
  tickers: v.array(tickerSchema),
  statistics: v.array(statisticSchema),
  trades: page(v.object({})),
  klines: page(v.unknown()),
  fees: feesSchema,
} as const satisfies Record<PerpsReadName, v.GenericSchema>;

/** The answer of read `N` (e.g. `PerpsReadAnswer<'portfolio'>` = `Portfolio`). */
export type PerpsReadAnswer<N extends PerpsReadName> = v.InferOutput<(typeof PERPS_READ_ANSWERS)[N]>;

/**
 * What `perps.read` carries: read `name`'s answer, parsed in the background by `PERPS_READ_ANSWERS[name]`
 * (which drops every field it does not name). Its shape depends on the input's `name`, which one schema
 * cannot say (a union of objects that drop unnamed fields would keep the first that fits — `stats` fits
 * anything), so the caller narrows it with `parsePerpsAnswer(name, answer)`.
 */
export const perpsReadAnswerSchema = v.unknown();

/**
 * Thrown when a read's answer does not have the venue's shape (`PERPS_READ_ANSWERS[name]`): nothing of
 * it is used or shown. `data.read` names the read, `data.field` the first field that failed.
 */
export class InvalidPerpsAnswerError extends BaseError {
  /**
   * EIP-1474 -32002 "resource unavailable": the venue's answer could not be used (not -32603, which dapp libraries
   * retry).
   */
  static override readonly code: number | undefined = -32002;
  override name = 'Perps.InvalidAnswerError';
  constructor(read: PerpsReadName, field: string) {
    super('The gateway answered in an unexpected shape.', { details: `${read}: ${field}`, data: { read, field } });
  }
}

/**
 * Thrown when a signed command's success body (HTTP 200) does not have `perpsCommandAnswerSchema`'s shape:
 * the gateway took the command, so its outcome must be looked up (open orders, history), never resent.
 */
export class InvalidCommandAnswerError extends BaseError {
  override name = 'Perps.InvalidCommandAnswerError';
  /** EIP-1474 -32002: the outcome must be looked up, never resent (not -32603, which dapp libraries retry). */
  static override readonly code: number | undefined = -32002;
  constructor(field: string) {
    super(
      'The gateway took the command but answered in an unexpected ' +
        'shape; check your open orders and history before trying again.',
      { details: field, data: { field } },
    );
  }
}

/** Parses a signed command's success body (`perpsCommandAnswerSchema`); `InvalidCommandAnswerError` otherwise. */
export function parseCommandAnswer(body: unknown): PerpsCommandAnswer {
  const parsed = v.safeParse(perpsCommandAnswerSchema, body);
  if (parsed.success) return parsed.output;
  throw new InvalidCommandAnswerError(v.getDotPath(parsed.issues[0]) ?? 'answer');
}

/** Thrown when the exchange-info read does not have the seed's shape (a `Perps.InvalidAnswerError` for `exchange`). */
export class InvalidExchangeInfoError extends InvalidPerpsAnswerError {
  override name = 'Perps.InvalidExchangeInfoError';
}

/**
 * Validates `body` as the answer of read `name` (the trust boundary). Throws `InvalidPerpsAnswerError`
 * (`InvalidExchangeInfoError` for `exchange`).
 */
export function parsePerpsAnswer<N extends PerpsReadName>(name: N, body: unknown): PerpsReadAnswer<N> {
  const schema: (typeof PERPS_READ_ANSWERS)[N] = PERPS_READ_ANSWERS[name];
  const parsed = v.safeParse(schema, body);
  if (parsed.success) return parsed.output;
  const field = v.getDotPath(parsed.issues[0]) ?? 'answer';
  throw name === 'exchange'
    ? new InvalidExchangeInfoError('exchange', field)
    : new InvalidPerpsAnswerError(name, field);
}
