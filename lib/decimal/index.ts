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
