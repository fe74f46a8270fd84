/**
 * Contract of the keyless gateway reads the popup shows (books, catalogue, data service, trades):
 * every answer is validated at the boundary by the background and reduced to the fields shown.
 */
import * as v from 'valibot';
import { address, nonNegativeSafeInteger, uint256String, venueDecimalString as decimal } from '../validation';
import { bookSchema } from '../perps/wire';
import { cursor, EXT, POPUP, procedure } from './procedure';
import { clobTradeSchema } from '../clob/trades';
import { shortToken, venueLabelOr, venueLabelString } from '../validation/venue-text';
/** A `[price, size]` level, decimal strings. */
const level = v.tuple([v.string(), v.string()]);

/** A market of the catalogue as the popup lists it (`tokenIds` and `outcomes` in the same order). */
const catalogueMarketSchema = v.object({
  question: v.string(),
  slug: v.string(),
  tokenIds: v.array(v.string()),
  outcomes: v.array(v.string()),
  negRisk: v.boolean(),
});

/**
 * An order-book token's book as the popup shows it: tick and minimum size, best bid / ask (null when
 * that side is empty), 10 levels each side best first, the taker fee rate in basis points (0 when unknown).
 */
const clobBookViewSchema = v.object({
  tickSize: v.string(),
  minSize: v.string(),
  negRisk: v.boolean(),
  bestBid: v.nullable(v.string()),
  bestAsk: v.nullable(v.string()),
  bids: v.array(level),
  asks: v.array(level),
  feeRateBps: v.number(),
});

/**
 * One position of the data service (`GET /v2/positions`, PROTOCOL.md §3.4): decimal strings, `unrealized_pnl` signed.
 */
export const dataPositionSchema = v.pipe(
  v.object({
    token_id: v.pipe(v.string(), v.regex(/^\d{1,78}$/)),
    /** The market title and outcome label (venue-text); named by the token when refused. */
    title: venueLabelString,
    outcome: venueLabelString,
    current_size: decimal,
    avg_price: decimal,
    current_price: decimal,
    current_value: decimal,
    unrealized_pnl: v.pipe(v.string(), v.regex(/^-?\d{1,20}(\.\d{1,20})?$/)),
  }),
  v.transform((p) => ({
    ...p,
    title: venueLabelOr(p.title, `market of token ${shortToken(p.token_id)}`),
    outcome: venueLabelOr(p.outcome, `token ${shortToken(p.token_id)}`),
  })),
);

/** Gateway-read procedures (no key is used; every answer validated in `lib/background/procedures/reads.ts`). */
export const READ_CONTRACT = {
  /** The public book of a perps instrument (`GET /v1/info/book`). */
  'perps.book': procedure({
    input: v.strictObject({ iid: nonNegativeSafeInteger }),
    output: bookSchema,
    senders: POPUP,
    activity: false,
  }),
  /** Ten open markets of the catalogue matching `q`, after `cursor`; `next_cursor` null at the end. */
  'catalogue.markets': procedure({
    input: v.strictObject({ q: v.optional(v.pipe(v.string(), v.maxLength(100))), cursor: v.optional(cursor) }),
    output: v.object({ markets: v.array(catalogueMarketSchema), next_cursor: v.nullable(v.string()) }),
    senders: POPUP,
    activity: true,
  }),
  // The approval window reads it too: an order-book request shows its cost and fee.
  'clob.book': procedure({
    input: v.strictObject({ tokenId: uint256String }),
    output: clobBookViewSchema,
    senders: EXT,
    activity: false,
  }),
  /** The account's latest 50 trades, newest first. */
  'clob.trades': procedure({
    input: v.strictObject({ account: address }),
    output: v.array(clobTradeSchema),
    senders: POPUP,
    activity: false,
  }),
  /**
   * 20 positions of the account after `cursor`, its total value (decimal string, null when unknown), the next cursor.
   */
  'data.portfolio': procedure({
    input: v.strictObject({ account: address, cursor: v.optional(cursor) }),
    output: v.object({
      positions: v.array(dataPositionSchema),
      value: v.nullable(v.string()),
      next_cursor: v.nullable(v.string()),
    }),
    senders: POPUP,
    activity: false,
  }),
} as const;
