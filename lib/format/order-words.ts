/**
 * The number primitives of the order words (`lib/perps/words.ts`, `lib/clob/words.ts`: the one wording per venue,
 * which every surface calls): a signed decimal padded to the step a gateway reports (`signedDecimal`), an order-book
 * order's shares, USDC and implied price from its signed amounts (`clobOrderWords`), the average price of fills
 * (`averagePrice`). A step (tick, lot) may pad a number with zeros to its decimals, never round, snap or restate it; a
 * value off that step is reported (`offStep`) for the words to flag. Pure.
 */
import { formatUnitsMin2, groupDecimal } from './index';

const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** Decimals of a decimal string (`"0.50"` → 2, `"100"` → 0). */
const decimalsOf = (s: string) => (s.split('.')[1] ?? '').length;

/** A non-negative decimal string as an integer at `scale` decimals (exact: `scale` ≥ its decimals). */
function unitsAt(s: string, scale: number): bigint {
  const neg = s.startsWith('-');
  const [int = '0', frac = ''] = (neg ? s.slice(1) : s).split('.');
  const u = BigInt(int + frac.padEnd(scale, '0'));
  return neg ? -u : u;
}

/**
 * A signed decimal as a person reads it: thousands grouped and, when `step` is given, padded with zeros
 * to the step's decimals — never rounded or cut (`("0.013", "1")` → `"0.013"`, `("64400.5", "0.01")` →
 * `"64,400.50"`). `offStep`: `value` is not a whole multiple of `step` (false without a step). A value
 * that is not a decimal string is returned as it is, `offStep` true when a step was given.
 */
export function signedDecimal(value: string, step?: string): { text: string; offStep: boolean } {
  if (!DECIMAL.test(value)) return { text: value, offStep: step !== undefined };
  if (step === undefined || !DECIMAL.test(step) || step.startsWith('-'))
    return { text: groupDecimal(value), offStep: step !== undefined };
  const stepScale = decimalsOf(step.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''));
  const scale = Math.max(decimalsOf(value), stepScale);
  const su = unitsAt(step, scale);
  const offStep = su === 0n || unitsAt(value, scale) % su !== 0n;
  const [int, frac = ''] = value.split('.');
  const padded = frac.length >= stepScale ? value : `${int}.${frac.padEnd(stepScale, '0')}`;
  return { text: groupDecimal(padded), offStep };
}

/**
 * An order-book order's numbers from its signed amounts (base units, 6 decimals): shares, USDC, the price they imply.
 */
export type ClobOrderWords = {
  side: 'BUY' | 'SELL';
  /** Shares and USDC (BUY: paid, the maker amount; SELL: received, the taker amount), at least 2 decimals, exact. */
  shares: string;
  usdc: string;
  /** USDC per share, up to 6 decimals; `≈` in front when the ratio has more (then cut, never rounded up). */
  price: string;
  /**
   * The same numbers as integers at 6 decimals, for comparing with what was asked: `shares`, `usdc`, and
   * `price` (USDC per share, cut) with `exact` (the ratio ends within 6 decimals). `price` is 0 without shares.
   */
  units: { shares: bigint; usdc: bigint; price: bigint; exact: boolean };
};

/**
 * The numbers of an order-book order from its signed `side`, `makerAmount`, `takerAmount` (base-unit integer strings).
 */
export function clobOrderWords(o: { side: 'BUY' | 'SELL'; makerAmount: string; takerAmount: string }): ClobOrderWords {
  const buy = o.side === 'BUY';
  const shares = BigInt(buy ? o.takerAmount : o.makerAmount);
  const usdc = BigInt(buy ? o.makerAmount : o.takerAmount);
  const q = shares > 0n ? (usdc * 10n ** 6n) / shares : 0n;
  const exact = shares > 0n && (usdc * 10n ** 6n) % shares === 0n;
  const price = shares > 0n ? `${exact ? '' : '≈'}${formatUnitsMin2(q.toString(), 6)}` : '—';
  return {
    side: o.side,
    shares: formatUnitsMin2(shares.toString(), 6),
    usdc: formatUnitsMin2(usdc.toString(), 6),
    price,
    units: { shares, usdc, price: q, exact },
  };
}

/**
 * The average price of fills as the venue reports them (Σ price·qty / Σ qty; decimal strings), cut at
 * 8 decimals — never rounded — and padded to `tick`; `≈` in front when the division did not end there.
 * `undefined` without a fill of positive quantity or when a value is not a decimal string.
 */
export function averagePrice(fills: readonly { price: string; quantity: string }[], tick?: string): string | undefined {
  const S = 8;
  const ok = (x: string) => /^\d{1,30}(?:\.\d{1,30})?$/.test(x);
  if (!fills.every((f) => ok(f.price) && ok(f.quantity))) return undefined;
  const scale = Math.max(S, ...fills.flatMap((f) => [decimalsOf(f.price), decimalsOf(f.quantity)]));
  let qty = 0n;
  let value = 0n;
  for (const f of fills) {
    const q = unitsAt(f.quantity, scale);
    qty += q;
    value += unitsAt(f.price, scale) * q; // at 2 × scale
  }
  if (qty === 0n) return undefined;
  const avg = value / qty; // at scale
  const exactDiv = value % qty === 0n;
  const cut = avg / 10n ** BigInt(scale - S);
  const exactCut = exactDiv && avg % 10n ** BigInt(scale - S) === 0n;
  const s = cut.toString().padStart(S + 1, '0');
  const text = `${s.slice(0, -S)}.${s.slice(-S)}`.replace(/0+$/, '').replace(/\.$/, '');
  return `${exactCut ? '' : '≈'}${signedDecimal(text, tick).text}`;
}
