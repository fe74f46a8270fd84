/** Display formatting shared by the popup and the approval window (pure). */

/** `0x99…A4dc`: first 4 and last 4 characters of an address. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/** A decimal string with thousands separators, decimals kept as given: `"3120.50"` → `"3,120.50"`. */
export function groupDecimal(s: string): string {
  const neg = s.startsWith('-');
  const [int, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

/**
 * Base units (integer string) of a token with `decimals` as a human amount with at least 2 decimals: `"10000000"`, 6 →
 * `"10.00"`.
 */
export function formatUnitsMin2(base: string, decimals: number): string {
  const s = base.padStart(decimals + 1, '0');
  const int = s.slice(0, s.length - decimals);
  let frac = s.slice(s.length - decimals).replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return groupDecimal(`${int}.${frac}`);
}

/** Decimals of a step (tick or lot) as a decimal string: `"0.5"` → 1, `"0.001"` → 3, `"1"` → 0. */
function stepDecimals(step: string): number {
  return (step.split('.')[1] ?? '').replace(/0+$/, '').length;
}

/** Units of a decimal string at `scale`, rounded half away from zero (display only; `0n` for non-decimals). */
function roundUnits(value: string, scale: number): bigint {
  const neg = value.startsWith('-');
  const body = neg ? value.slice(1) : value;
  const [int = '0', frac = ''] = body.split('.');
  if (!/^\d+$/.test(int) || !/^\d*$/.test(frac)) return 0n;
  let units = BigInt(int + frac.slice(0, scale).padEnd(scale, '0'));
  if ((frac[scale] ?? '0') >= '5') units += 1n;
  return neg ? -units : units;
}

/** Fixed-decimal text of `units` at `scale` (zeros kept: `65005`, 1 → `"6500.5"`; `650`, 1 → `"65.0"`). */
function unitsText(units: bigint, scale: number): string {
  const neg = units < 0n;
  const s = (neg ? -units : units).toString().padStart(scale + 1, '0');
  const int = s.slice(0, s.length - scale);
  return `${neg ? '-' : ''}${int}${scale > 0 ? `.${s.slice(s.length - scale)}` : ''}`;
}

/**
 * A price or size (decimal string) rounded to the nearest multiple of `step` (the instrument's tick or
 * lot, from the venue's `instruments` read) and shown with the step's
 * decimals and thousands separators: `("65005.83333333", "0.5")` → `"65,006.0"`, `("0.1234", "0.001")`
 * → `"0.123"`. A value that is not a decimal string is returned unchanged.
 */
export function formatStep(value: string, step: string): string {
  if (!/^-?\d+(\.\d*)?$/.test(value)) return value;
  const scale = Math.max(stepDecimals(step), 0);
  const stepUnits = roundUnits(step, scale);
  let units = roundUnits(value, scale + 1);
  if (stepUnits > 0n) {
    const s10 = stepUnits * 10n;
    const neg = units < 0n;
    const a = neg ? -units : units;
    const snapped = ((a + s10 / 2n) / s10) * stepUnits;
    units = neg ? -snapped : snapped;
  }
  return groupDecimal(unitsText(units, scale));
}

/** A USDC amount (decimal string) with 2 decimals, separators and its unit: `"-3.125"` → `"-3.13 USDC"`. */
export function formatUsdc(value: string): string {
  if (!/^-?\d+(\.\d*)?$/.test(value)) return `${value} USDC`;
  const units = roundUnits(value, 2);
  return `${groupDecimal(unitsText(units, 2)).replace(/^-(0\.00)$/, '$1')} USDC`;
}

/**
 * The spread in ticks and basis points of the mid: best ask and
 * best bid as decimal strings, `tick` the instrument's tick. `undefined` when a side is missing or the
 * book is crossed. Basis points to one decimal.
 */
export function spreadText(
  bestAsk: string | undefined,
  bestBid: string | undefined,
  tick: string,
): { spread: string; ticks: string; bp: string } | undefined {
  if (!bestAsk || !bestBid) return undefined;
  const scale = Math.max(stepDecimals(tick), stepDecimals(bestAsk), stepDecimals(bestBid));
  const a = roundUnits(bestAsk, scale);
  const b = roundUnits(bestBid, scale);
  const t = roundUnits(tick, scale);
  if (a < b || a + b === 0n) return undefined;
  const d = a - b;
  const ticks = t > 0n ? unitsText((d * 10n) / t, 1).replace(/\.0$/, '') : '—';
  // bp = d / mid × 10 000 = 20 000 d / (a + b), shown to 0.1 bp.
  const bp = unitsText((d * 200_000n + (a + b) / 2n) / (a + b), 1);
  return { spread: formatStep(unitsText(d, scale), tick), ticks, bp };
}

/**
 * Cumulative quantity down a side of the book (best first): `[["1","2"],["0.5","3"]]` → `["2","5"]`,
 * exact decimals.
 */
export function cumulative(levels: readonly (readonly [string, string])[]): string[] {
  const scale = Math.max(0, ...levels.map(([, q]) => stepDecimals(q)));
  let sum = 0n;
  return levels.map(([, q]) => {
    sum += roundUnits(q, scale);
    return unitsText(sum, scale);
  });
}

/**
 * What an order's fills came to (result notices give the average fill price and the fee):
 * `fills` as the venue's fills read answers them (`price`, `quantity` instrument units, `fee` USDC;
 * decimal strings), filtered to `orderId`. The average is Σ price·qty / Σ qty shown to `tick`; the
 * fee summed, in USDC. `undefined` when the order has no fill in `fills`.
 */
export function fillSummary(
  fills: readonly { order_id: number; price: string; quantity: string; fee: string }[],
  orderId: number,
  tick: string,
): { avgPrice: string; fee: string } | undefined {
  const mine = fills.filter((f) => f.order_id === orderId);
  if (mine.length === 0) return undefined;
  const S = 12;
  let qty = 0n;
  let value = 0n;
  let fee = 0n;
  for (const f of mine) {
    const q = roundUnits(f.quantity, S);
    qty += q;
    value += (roundUnits(f.price, S) * q) / 10n ** BigInt(S);
    fee += roundUnits(f.fee, S);
  }
  if (qty === 0n) return undefined;
  return {
    avgPrice: formatStep(unitsText((value * 10n ** BigInt(S)) / qty, S), tick),
    fee: formatUsdc(unitsText(fee, S)),
  };
}
