/**
 * Validation primitives shared by every trust boundary (page → content script → background,
 * popup → background, gateway response → app). Built on valibot; every rejection becomes an
 * `InvalidFieldError` that names the field by its path (`orders[0].qty`).
 *
 * Rules:
 * - decimals are strings of ASCII digits with an optional fraction: `0`, `12`, `0.5`, `3120.50`;
 *   no sign, exponent, spaces, `NaN`, `Infinity`, leading zeros (`01`), bare points (`.5`, `5.`);
 *   a JS number is refused even where its value would be fine (floats lose precision);
 * - addresses: `0x` + 40 hex, all lowercase or EIP-55 checksummed;
 * - ids (instrument, order): non-negative safe integers given as JS numbers.
 */
import * as v from 'valibot';
import { isAddress, type Address } from 'viem';
import { BaseError } from '../errors/base';

/** Longest decimal string accepted anywhere (characters). */
export const MAX_DECIMAL_LENGTH = 64;

const DECIMAL_RE = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
const SIGNED_DECIMAL_RE = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
const UINT_RE = /^(?:0|[1-9][0-9]*)$/;
const ZERO_RE = /^-?0(?:\.0+)?$/;

/**
 * A decimal as the venues write it in their answers: no sign, at most 20 integer and 20 fraction digits (`"3120.50"`,
 * `"007"` passes).
 */
export const VENUE_DECIMAL_RE = /^\d{1,20}(?:\.\d{1,20})?$/;
/** A decimal string a venue answers (`VENUE_DECIMAL_RE`): prices, sizes, amounts of the gateways' reads. */
export const venueDecimalString = v.pipe(
  v.string(),
  v.regex(VENUE_DECIMAL_RE, 'must be a decimal string (at most 20 + 20 digits)'),
);
/** Whether `x` is a decimal string a venue answers (`VENUE_DECIMAL_RE`). */
export const isVenueDecimal = (x: unknown): x is string => typeof x === 'string' && VENUE_DECIMAL_RE.test(x);

/** A string of a non-negative decimal, e.g. `"3120.50"`. */
export const decimalString = v.pipe(
  v.string('must be a decimal string such as "1.25" (numbers are refused: they lose precision)'),
  v.maxLength(MAX_DECIMAL_LENGTH, `must be at most ${MAX_DECIMAL_LENGTH} characters`),
  v.regex(DECIMAL_RE, 'must be a plain decimal such as "1.25" (no sign, exponent, spaces or leading zeros)'),
);

/** A decimal string strictly greater than zero. */
export const positiveDecimalString = v.pipe(
  decimalString,
  v.check((s) => !ZERO_RE.test(s), 'must be greater than zero'),
);

/** A signed, non-zero decimal string (e.g. a margin change `"-12.5"`). */
export const signedDecimalString = v.pipe(
  v.string('must be a decimal string such as "-1.25" (numbers are refused: they lose precision)'),
  v.maxLength(MAX_DECIMAL_LENGTH, `must be at most ${MAX_DECIMAL_LENGTH} characters`),
  v.regex(SIGNED_DECIMAL_RE, 'must be a plain signed decimal such as "-1.25"'),
  v.check((s) => !ZERO_RE.test(s), 'must not be zero'),
);

/** A string of an integer amount in base units, greater than zero, below 2^256. */
export const baseUnitsString = v.pipe(
  v.string('must be a string of integer base units such as "10000000"'),
  v.maxLength(78, 'must be below 2^256'),
  v.regex(UINT_RE, 'must be a string of integer base units such as "10000000"'),
  v.check((s) => s !== '0', 'must be greater than zero'),
  v.check((s) => BigInt(s) < 2n ** 256n, 'must be below 2^256'),
);

/** A string of a uint256 (may be zero), e.g. an outcome token id. */
export const uint256String = v.pipe(
  v.string('must be a string of an unsigned integer'),
  v.maxLength(78, 'must be below 2^256'),
  v.regex(UINT_RE, 'must be a string of an unsigned integer (ASCII digits, no leading zeros)'),
  v.check((s) => BigInt(s) < 2n ** 256n, 'must be below 2^256'),
);

/** `0x` + 40 hex characters, lowercase or EIP-55 checksummed. */
export const address = v.pipe(
  v.string('must be an address string'),
  v.check(
    (s) => isAddress(s, { strict: true }),
    'must be 0x followed by 40 hex characters, all lowercase or EIP-55 checksummed',
  ),
  v.transform((s) => s as Address),
);

/** A 32-byte hex string (`0x` + 64 hex). */
export const bytes32 = v.pipe(
  v.string('must be a 0x-prefixed 32-byte hex string'),
  v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters'),
  v.transform((s) => s as `0x${string}`),
);

/** Non-negative safe integer given as a JS number (instrument id, order id). */
export const nonNegativeSafeInteger = v.pipe(
  v.number('must be an integer number'),
  v.safeInteger('must be a safe integer'),
  v.minValue(0, 'must not be negative'),
);

/** Positive safe integer (timestamps, expiries). */
export const positiveSafeInteger = v.pipe(
  v.number('must be an integer number'),
  v.safeInteger('must be a safe integer'),
  v.minValue(1, 'must be greater than zero'),
);

/** Unsigned 32-bit integer (salt of a perps `Op`). */
export const uint32 = v.pipe(
  v.number('must be an integer number'),
  v.integer('must be an integer'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(0xffffffff, 'must fit in 32 bits'),
);

/** Client order id: exactly 32 lowercase hex characters. */
export const clientOrderId = v.pipe(
  v.string('must be a string of 32 lowercase hex characters'),
  v.regex(/^[0-9a-f]{32}$/, 'must be exactly 32 lowercase hex characters'),
);

/** UTF-8 byte length of a string. */
export function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** Thrown when an input fails validation; `field` is the dot path of the first offending field. */
export class InvalidFieldError extends BaseError {
  override name = 'InvalidFieldError';
  static override readonly code = -32602;
  readonly field: string;
  readonly reason: string;
  constructor({ field, reason }: { field: string; reason: string }) {
    super(`Invalid ${field}: ${reason}.`);
    this.field = field;
    this.reason = reason;
  }
}

function issuePath(issue: v.BaseIssue<unknown>, root: string): string {
  let out = root;
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || 'input';
}

/**
 * Parses `input` with `schema`; returns the typed output or throws `InvalidFieldError` naming the
 * first failing field (prefixed with `root`, e.g. `args`).
 */
export function parseOrThrow<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  root = '',
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  let reason = issue.message;
  // valibot's default messages for unknown keys / wrong types are technical; keep them short.
  if (issue.kind === 'schema' && issue.type === 'strict_object' && issue.expected === 'never') {
    reason = 'is not a known field';
  }
  throw new InvalidFieldError({ field: issuePath(issue, root), reason });
}
