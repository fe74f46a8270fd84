/** The limits of a standing grant as a person sets them (validated at every boundary that accepts them). */
import * as v from 'valibot';
import { positiveDecimalString } from '../validation';

/** Valibot schema of `GrantLimits` (lib/grants/evaluate): decimal strings, integers, at most 50 markets. */
export const grantLimitsSchema = v.strictObject({
  allow: v.strictObject({ order: v.boolean(), cancel: v.boolean(), leverage: v.boolean() }),
  instruments: v.optional(v.pipe(v.array(v.pipe(v.number(), v.safeInteger(), v.minValue(0))), v.maxLength(50))),
  markets: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^\d{1,78}$/))), v.maxLength(50))),
  maxSize: v.optional(positiveDecimalString),
  maxNotional: v.optional(positiveDecimalString),
  dailyNotional: v.optional(positiveDecimalString),
  maxLeverage: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(1000))),
  priceBandPct: v.optional(positiveDecimalString),
  postOnly: v.optional(v.boolean()),
  reduceOnly: v.optional(v.boolean()),
  ratePerMinute: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(10_000))),
});

