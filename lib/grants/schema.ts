/**
 * The limits of a standing grant as a person sets them, validated at every boundary that accepts them
 * (the `grant.create` message and `GrantService.create`): one venue, a non-empty explicit
 * list of instruments / markets, and the per-order cap, the 24 h cap and the price band are required;
 * a perps grant has a slippage allowance (default `DEFAULT_SLIPPAGE_PCT`). A failure names the field
 * (`InvalidFieldError` from `parseOrThrow`, e.g. `limits.maxNotional`).
 */
import * as v from 'valibot';
import { positiveDecimalString } from '../validation';
import { toUnits } from '../decimal';
import { DEFAULT_SLIPPAGE_PCT, MAX_PRICE_BAND_PCT, MAX_SLIPPAGE_PCT } from './evaluate';

const atMost = (max: string) => (s: string) => {
  const a = toUnits(s, 18);
  return a !== undefined && a <= toUnits(max, 18)!;
};
const pct = (max: string, what: string) =>
  v.pipe(positiveDecimalString, v.check(atMost(max), `${what} must be at most ${max}%`));
/** A USDC amount with at most 6 decimals. */
const usdc = v.pipe(
  positiveDecimalString,
  v.check((s) => toUnits(s, 6) !== undefined, 'must have at most 6 decimals (USDC)'),
);

const common = {
  maxNotional: usdc,
  dailyNotional: usdc,
  priceBandPct: pct(MAX_PRICE_BAND_PCT, 'the price band'),
  maxSize: v.optional(positiveDecimalString),
  postOnly: v.optional(v.boolean()),
  ratePerMinute: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(10_000))),
};
const nonEmpty = <T extends v.GenericSchema>(item: T, what: string) =>
  v.pipe(
    v.array(item),
    v.minLength(1, `must name at least one ${what}`),
    v.maxLength(50, `must name at most 50 ${what}s`),
  );
const no = v.optional(v.literal(false, 'cannot be granted on the order book'));

const perps = v.pipe(
  v.strictObject({
    venue: v.literal('perps'),
    instruments: nonEmpty(v.pipe(v.number(), v.safeInteger(), v.minValue(0)), 'instrument'),
    allow: v.strictObject({
      order: v.boolean(),
      cancel: v.optional(v.boolean()),
      leverage: v.optional(v.boolean()),
      market: v.optional(v.boolean()),
      triggers: v.optional(v.boolean()),
    }),
    slippagePct: v.optional(pct(MAX_SLIPPAGE_PCT, 'the slippage allowance'), DEFAULT_SLIPPAGE_PCT),
    maxLeverage: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(1000))),
    reduceOnly: v.optional(v.boolean()),
    ...common,
  }),
  v.forward(
    v.check((g) => !g.allow.leverage || g.maxLeverage !== undefined, 'is required when leverage changes are allowed'),
    ['maxLeverage'],
  ),
  v.forward(
    v.check(
      (g) => !g.allow.triggers || g.allow.market === true,
      'trigger orders execute as market orders: allow market orders too',
    ),
    ['allow', 'triggers'],
  ),
);
const clob = v.strictObject({
  venue: v.literal('clob'),
  markets: nonEmpty(v.pipe(v.string(), v.regex(/^\d{1,78}$/, 'must be an order-book token id')), 'market'),
  allow: v.strictObject({ order: v.boolean(), cancel: no, leverage: no, market: no, triggers: no }),
  ...common,
});

/** Valibot schema of `GrantLimits` (lib/grants/evaluate): one venue, explicit scope, required caps and band. */
export const grantLimitsSchema = v.variant('venue', [perps, clob], 'must say which venue: "perps" or "clob"');

/** What a caller may send as limits (before defaults such as the slippage allowance are applied). */
export type GrantLimitsInput = v.InferInput<typeof grantLimitsSchema>;
