/**
 * Order-book trades as the exchange reports them (user channel `trade` event, PROTOCOL.md §5.4; `GET /data/trades`
 * row, §3.1) and as the person reads them: the person's own order(s) in each trade, whichever side they took.
 * Shared by the user channel client (`lib/streams/clob.ts`), the trades read (`lib/reads/venue-reads.ts`), the
 * stream pushes and the popup's contract (`lib/messaging/`).
 */
import * as v from 'valibot';
import { venueDecimalString as decimal } from '../validation';
import { venueLabelOr, venueLabelString } from '../validation/venue-text';

const tokenIdString = v.pipe(v.string(), v.regex(/^\d{1,78}$/));
const sideSchema = v.pipe(v.string(), v.toUpperCase(), v.picklist(['BUY', 'SELL']));
const orderId = v.pipe(v.string(), v.maxLength(100));
const matchTime = v.pipe(v.string(), v.regex(/^\d{1,13}$/));

/**
 * One of the person's own orders in a trade, as the person reads it: `side` the order's side, `size` the
 * shares matched of it in this trade and `price` its price (USDC per share), decimal strings; `asset_id`
 * the token the order is for (decimal uint256 string); `outcome` the exchange's label of that token —
 * the venue's claim, validated at the boundary (venue-text), `''` when absent or refused — shown only
 * beside the token id (`clobTokenWords`, `lib/clob/words.ts`); `order_id` the order's id at the
 * exchange, when named.
 */
const ownClobFillSchema = v.pipe(
  v.object({
    order_id: v.optional(orderId),
    side: v.picklist(['BUY', 'SELL']),
    size: decimal,
    price: decimal,
    asset_id: tokenIdString,
    outcome: venueLabelString,
  }),
  v.transform((f) => ({ ...f, outcome: venueLabelOr(f.outcome, '') })),
);

/**
 * One trade of the account as the person reads it (user channel `trade` event, PROTOCOL.md §5.4;
 * `GET /data/trades` row, §3.1), computed by `ownClobTrade`: `trader_side` the role the person's order
 * played; `own` the person's order(s) in it — the row's top-level fields (the taker's order) when the
 * person took, the row's `maker_orders` entries that are the person's when the person's resting order
 * was the maker; **empty** when the row says MAKER and names none of the person's orders (nothing else is
 * shown in their place). `match_time` Unix seconds as a string.
 */
export const clobTradeSchema = v.object({
  id: v.pipe(v.string(), v.maxLength(100)),
  match_time: matchTime,
  trader_side: v.picklist(['TAKER', 'MAKER']),
  own: v.pipe(v.array(ownClobFillSchema), v.maxLength(1_000)),
});
/** A trade as the person reads it (see `clobTradeSchema`). */
export type ClobTrade = v.InferOutput<typeof clobTradeSchema>;

/**
 * A maker order of a trade as the exchange reports it (`maker_orders[]`, PROTOCOL.md §5.4; the official
 * clients' `MakerOrder`): `matched_amount` shares matched of it, `price`, `side`, `asset_id` and `outcome`
 * its own (a maker's token may be the other outcome: the exchange matches a buy of "Yes" with a buy of
 * "No"); `byAccountKey` whether its `owner` is the account's API key — compared where the key is held
 * (the channel client, the trades read), so the key itself is never carried.
 */
export type ClobVenueMakerOrder = {
  order_id: string;
  maker_address?: string;
  byAccountKey: boolean;
  side: 'BUY' | 'SELL';
  matched_amount: string;
  price: string;
  asset_id: string;
  outcome: string;
};

/**
 * A trade as the exchange reports it (user channel `trade` event, PROTOCOL.md §5.4; `GET /data/trades`
 * row, §3.1), reduced to what `ownClobTrade` reads. The top-level `side`, `size`, `price`, `asset_id`,
 * `outcome` (and `taker_order_id`) describe the **taker's** order, whoever the account was; the makers'
 * figures are in `maker_orders`. `trader_side` the account's role, when the exchange says it.
 */
export type ClobVenueTrade = {
  id: string;
  match_time: string;
  trader_side?: 'TAKER' | 'MAKER';
  taker_order_id?: string;
  side: 'BUY' | 'SELL';
  size: string;
  price: string;
  asset_id: string;
  outcome: string;
  maker_orders: ClobVenueMakerOrder[];
};

/** A trade row as the exchange sends it (user channel or `GET /data/trades`), in the fields `venueTradeOf` reads. */
export type ClobTradeRow = {
  id: string;
  match_time: string;
  trader_side?: 'TAKER' | 'MAKER' | null;
  taker_order_id?: string | null;
  side: 'BUY' | 'SELL';
  size: string;
  price: string;
  asset_id: string;
  outcome?: string | null;
  maker_orders?:
    | readonly {
        order_id: string;
        owner?: string | null;
        maker_address?: string | null;
        side: 'BUY' | 'SELL';
        matched_amount: string;
        price: string;
        asset_id: string;
        outcome?: string | null;
      }[]
    | null;
};

/**
 * `row` reduced to `ClobVenueTrade`: each maker order's `owner` becomes `byAccountKey` (it is the account's
 * API key `apiKey`; compared here, the key never carried); absent optional fields read as none.
 */
export function venueTradeOf(row: ClobTradeRow, apiKey: string | undefined): ClobVenueTrade {
  return {
    id: row.id,
    match_time: row.match_time,
    ...(row.trader_side ? { trader_side: row.trader_side } : {}),
    ...(row.taker_order_id ? { taker_order_id: row.taker_order_id } : {}),
    side: row.side,
    size: row.size,
    price: row.price,
    asset_id: row.asset_id,
    outcome: row.outcome ?? '',
    maker_orders: (row.maker_orders ?? []).map((m) => ({
      order_id: m.order_id,
      ...(m.maker_address ? { maker_address: m.maker_address } : {}),
      byAccountKey: !!apiKey && m.owner === apiKey,
      side: m.side,
      matched_amount: m.matched_amount,
      price: m.price,
      asset_id: m.asset_id,
      outcome: m.outcome ?? '',
    })),
  };
}

/**
 * The person's own view of trade `t` (`ClobTrade`): the role the exchange names (`trader_side`; when it
 * names none, MAKER if a maker order is the person's, else TAKER); as taker, the top-level figures; as
 * maker, every maker order that is the person's — its `owner` is the account's API key (`byAccountKey`)
 * or its `maker_address` is one of `addresses` (the account and the funder its orders name, compared
 * case-insensitively). A MAKER trade naming none of them gives `own: []`. Outcome labels validated.
 */
export function ownClobTrade(t: ClobVenueTrade, addresses: readonly string[]): ClobTrade {
  const ours = new Set(addresses.map((a) => a.toLowerCase()));
  const makers = t.maker_orders.filter(
    (m) => m.byAccountKey || (m.maker_address !== undefined && ours.has(m.maker_address.toLowerCase())),
  );
  const role = t.trader_side ?? (makers.length > 0 ? 'MAKER' : 'TAKER');
  const label = (x: string) => venueLabelOr(x, '');
  const own =
    role === 'TAKER'
      ? [
          {
            ...(t.taker_order_id ? { order_id: t.taker_order_id } : {}),
            side: t.side,
            size: t.size,
            price: t.price,
            asset_id: t.asset_id,
            outcome: label(t.outcome),
          },
        ]
      : makers.map((m) => ({
          order_id: m.order_id,
          side: m.side,
          size: m.matched_amount,
          price: m.price,
          asset_id: m.asset_id,
          outcome: label(m.outcome),
        }));
  return { id: t.id, match_time: t.match_time, trader_side: role, own };
}

const makerOrderRowSchema = v.object({
  order_id: orderId,
  owner: v.pipe(v.string(), v.maxLength(100)),
  maker_address: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100)))),
  matched_amount: decimal,
  price: decimal,
  asset_id: tokenIdString,
  outcome: v.optional(v.nullable(venueLabelString)),
  side: sideSchema,
});

/**
 * A page of `GET /data/trades` (PROTOCOL.md §3.1; the official clients' `Trade`): each row's fields
 * `ownClobTrade` reads, the rest dropped. `maker_orders` absent or null reads as none.
 */
export const clobTradesWirePageSchema = v.object({
  data: v.pipe(
    v.array(
      v.object({
        id: v.pipe(v.string(), v.maxLength(100)),
        taker_order_id: v.optional(v.nullable(orderId)),
        side: sideSchema,
        size: decimal,
        price: decimal,
        asset_id: tokenIdString,
        outcome: v.optional(v.nullable(venueLabelString)),
        match_time: matchTime,
        trader_side: v.optional(v.nullable(v.picklist(['TAKER', 'MAKER']))),
        maker_orders: v.optional(v.nullable(v.pipe(v.array(makerOrderRowSchema), v.maxLength(1_000)))),
      }),
    ),
    v.maxLength(1_000),
  ),
});

/**
 * The person's view of each row of a trades page (`ownClobTrade`): a maker order is the account's when
 * its `owner` is `apiKey` (compared here, never returned) or its `maker_address` is one of `addresses`.
 */
export function ownClobTradesPage(
  page: v.InferOutput<typeof clobTradesWirePageSchema>,
  apiKey: string,
  addresses: readonly string[],
): ClobTrade[] {
  return page.data.map((r) => ownClobTrade(venueTradeOf(r, apiKey), addresses));
}
