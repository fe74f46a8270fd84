/**
 * Fixed-point helpers: decimal strings ↔ bigint units at a given scale (prices, sizes, USDC), so that
 * no amount ever passes through a binary float. Inputs are already validated decimal strings (see
 * `lib/validation`); a leading `-` is allowed.
 */

/** Units of `s` at `scale` decimals, or `undefined` when `s` has more decimals than `scale`. */
export function toUnits(s: string, scale: number): bigint | undefined {
  const [int, frac = ''] = s.split('.');
  if (frac.replace(/0+$/, '').length > scale) return undefined;
  return BigInt(int! + frac.padEnd(scale, '0').slice(0, scale));
}

/** Decimal string of `units` at `scale`, trailing zeros trimmed (`"3120.5"`, `"1"`, `"-0.25"`). */
export function fromUnits(units: bigint, scale: number): string {
  const neg = units < 0n;
  const s = (neg ? -units : units).toString().padStart(scale + 1, '0');
  const int = s.slice(0, s.length - scale);
  const frac = s.slice(s.length - scale).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** |x| for bigint. */
export const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/** min for bigint. */
export const minB = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/**
 * Units of a (possibly signed) decimal string at `scale`, extra decimals truncated toward zero; `0n`
 * for anything that is not a decimal. For arithmetic on values already validated elsewhere.
 */
export function truncUnits(s: string, scale: number): bigint {
  const neg = s.startsWith('-');
  const [int = '0', frac = ''] = (neg ? s.slice(1) : s).split('.');
  if (!/^\d+$/.test(int) || !/^\d*$/.test(frac)) return 0n;
  const v = BigInt(int + frac.slice(0, scale).padEnd(scale, '0'));
  return neg ? -v : v;
}

/** Fixed-point product and quotient at `scale` (both truncate toward zero; division by zero gives 0). */
export const mulUnits = (a: bigint, b: bigint, scale: number): bigint => (a * b) / 10n ** BigInt(scale);
/** `a / b` as units at `scale` decimals (`a · 10^scale / b`, truncated toward zero); 0 when `b` is 0. */
export const divUnits = (a: bigint, b: bigint, scale: number): bigint =>
  b === 0n ? 0n : (a * 10n ** BigInt(scale)) / b;
