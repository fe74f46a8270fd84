/**
 * Maker/taker amounts of an order-book order from price, size and tick size, in exact bigint decimal
 * math (never binary floats). Source: PROTOCOL.md §2.3.
 *
 * Units: inputs are human decimal strings (price in collateral per outcome token, size in outcome
 * tokens, market BUY `amount` in collateral); outputs are integer **base units** (6 decimals for both
 * the collateral and outcome tokens) as decimal strings.
 *
 * Rounding:
 * - size is rounded down to 2 decimals (and must stay > 0);
 * - the price as asked must lie in [tick, 1 − tick] (refused otherwise, as the official client's
 *   `priceValid` refuses it: never rounded into the range); then a limit price is rounded to the nearest
 *   tick (half up) and a market-style (FOK/FAK) price down;
 * - the product is cut to (price decimals + 2) decimals; a market BUY's share amount is truncated.
 *
 * Where the official client (`@polymarket/clob-client-v2` 1.1.0) builds other amounts, on purpose (each
 * asserted by `test/conformance/clob-differential.test.ts`; everywhere else the two agree to the byte):
 * - large orders: it computes `size × price` (a market BUY's `amount / price`) in binary floats, which
 *   drift by one unit of the last amount decimal once the value × 10^(price decimals + 6) nears 2^52 —
 *   from about 225 000 USDC (or shares) at ticks 0.0001 and 0.0025, 2.25 million at 0.001 and 0.005.
 *   These amounts stay exact;
 * - a size (market amount) below 0.01 rounds down to 0: it signs an order of zero amounts; this refuses;
 * - inputs are plain decimal strings: it takes JS numbers, so `"5e-1"`, `"+0.5"`, `".5"`, `"00.5"`,
 *   `" 0.5"` or `"0x10"` are orders to it; this refuses them (`positiveDecimalString`);
 * - a price outside [tick, 1 − tick] is refused by both;
 * - at ticks 0.005 and 0.0025 a price between two ticks is rounded to a multiple of the tick here; it
 *   rounds to the tick's decimals only (`0.123` stays `0.123` at tick 0.005) and signs the off-tick price
 *   (PROTOCOL.md §2.3 reads "to the tick's decimals"); a price on the tick is what the exchange's tick
 *   rule asks for, and the window shows the price asked beside the price signed.
 */
import * as v from 'valibot';
import { InvalidFieldError, parseOrThrow, positiveDecimalString } from '../validation';

/** Decimals of collateral and outcome tokens. */
export const CLOB_TOKEN_DECIMALS = 6;
/** Decimals a size is kept to. */
export const CLOB_SIZE_DECIMALS = 2;

/** Order side. */
export type Side = 'BUY' | 'SELL';

/** Result of an amounts computation: base units as decimal strings, plus the rounded price and size. */
export type OrderAmounts = {
  makerAmount: string;
  takerAmount: string;
  /** The price actually used (rounded to the tick), as a decimal string. */
  price: string;
  /** The size in outcome tokens actually used (2 decimals), as a decimal string. */
  size: string;
};

/** A parsed non-negative decimal: `units / 10^scale`. */
type Dec = { units: bigint; scale: number };

const pow10 = (n: number): bigint => 10n ** BigInt(n);

function parseDec(s: string): Dec {
  const [int, frac = ''] = s.split('.');
  return { units: BigInt(int! + frac), scale: frac.length };
}

function formatUnits(units: bigint, scale: number): string {
  if (scale === 0) return units.toString();
  const s = units.toString().padStart(scale + 1, '0');
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** floor(value × 10^scale) as an integer. */
function floorTo(d: Dec, scale: number): bigint {
  return scale >= d.scale ? d.units * pow10(scale - d.scale) : d.units / pow10(d.scale - scale);
}

const tickSizeSchema = v.pipe(
  positiveDecimalString,
  v.check((s) => {
    const d = parseDec(s);
    return d.scale >= 1 && d.scale <= 4 && d.units < pow10(d.scale);
  }, 'must be a tick below 1 with at most 4 decimals (e.g. "0.01")'),
);

const inputSchema = v.object({
  side: v.picklist(['BUY', 'SELL'], 'must be "BUY" or "SELL"'),
  price: positiveDecimalString,
  size: positiveDecimalString,
  tickSize: tickSizeSchema,
});

const marketInputSchema = v.object({
  side: v.picklist(['BUY', 'SELL'], 'must be "BUY" or "SELL"'),
  price: positiveDecimalString,
  amount: positiveDecimalString,
  tickSize: tickSizeSchema,
});

/**
 * Rounds `price` to the tick: 'nearest' (half up) for limit orders, 'down' for market-style orders. Units at price
 * decimals.
 */
function priceUnits(
  price: string,
  tickSize: string,
  mode: 'nearest' | 'down',
): { units: bigint; pd: number; tick: bigint } {
  const t = parseDec(tickSize);
  const pd = t.scale;
  const p = parseDec(price);
  // The price as asked must lie in [tick, 1 − tick] (as the official client checks it): one outside is
  // refused, never rounded into the range.
  const asked = p.units * pow10(pd); // price × 10^(pd + p.scale)
  const scaleP = pow10(p.scale);
  if (asked < t.units * scaleP || asked > (pow10(pd) - t.units) * scaleP) {
    throw new InvalidFieldError({
      field: 'price',
      reason:
        `must lie between ${tickSize} and ${formatUnits(pow10(pd) - t.units, pd)} ` +
        `(tick ${tickSize}); ${price} is outside`,
    });
  }
  const num = p.units * pow10(pd); // price × 10^pd × 10^p.scale
  const den = pow10(p.scale) * t.units;
  const ticks = mode === 'nearest' ? (2n * num + den) / (2n * den) : num / den;
  const units = ticks * t.units;
  if (units < t.units || units > pow10(pd) - t.units) {
    throw new InvalidFieldError({
      field: 'price',
      reason: `must lie between ${tickSize} and ${formatUnits(pow10(pd) - t.units, pd)} (tick ${tickSize})`,
    });
  }
  return { units, pd, tick: t.units };
}

/**
 * Limit-order amounts (GTC / GTD). BUY: `makerAmount = size × price` collateral for
 * `takerAmount = size` tokens; SELL: `makerAmount = size` tokens for `takerAmount = size × price`.
 * `price`, `size`, `tickSize` are decimal strings. Throws `InvalidFieldError` (`price`, `size`, `tickSize`, `side`).
 */
export function toOrderAmounts(input: { side: Side; price: string; size: string; tickSize: string }): OrderAmounts {
  const i = parseOrThrow(inputSchema, input);
  const { units: pu, pd } = priceUnits(i.price, i.tickSize, 'nearest');
  const size2 = floorTo(parseDec(i.size), CLOB_SIZE_DECIMALS);
  if (size2 === 0n) throw new InvalidFieldError({ field: 'size', reason: 'rounds down to zero at 2 decimals' });
  const productScale = pd + CLOB_SIZE_DECIMALS; // ≤ 6
  const product = size2 * pu; // exact at productScale
  const collateral = product * pow10(CLOB_TOKEN_DECIMALS - productScale);
  const shares = size2 * pow10(CLOB_TOKEN_DECIMALS - CLOB_SIZE_DECIMALS);
  return {
    makerAmount: (i.side === 'BUY' ? collateral : shares).toString(),
    takerAmount: (i.side === 'BUY' ? shares : collateral).toString(),
    price: formatUnits(pu, pd),
    size: formatUnits(size2, CLOB_SIZE_DECIMALS),
  };
}

/**
 * Market-style amounts (FOK / FAK). BUY: `amount` is collateral to spend (2 decimals), the price is
 * rounded down to the tick and the share amount `amount / price` is truncated to (price decimals + 2)
 * decimals. SELL: `amount` is shares (2 decimals) and `takerAmount = amount × price`.
 * Throws `InvalidFieldError` (`amount`, `price`, `tickSize`, `side`).
 */
export function toMarketOrderAmounts(input: {
  side: Side;
  amount: string;
  price: string;
  tickSize: string;
}): OrderAmounts {
  const i = parseOrThrow(marketInputSchema, input);
  const { units: pu, pd } = priceUnits(i.price, i.tickSize, 'down');
  const amount2 = floorTo(parseDec(i.amount), CLOB_SIZE_DECIMALS);
  if (amount2 === 0n) throw new InvalidFieldError({ field: 'amount', reason: 'rounds down to zero at 2 decimals' });
  const productScale = pd + CLOB_SIZE_DECIMALS;
  const toBase = (units: bigint, scale: number) => units * pow10(CLOB_TOKEN_DECIMALS - scale);
  if (i.side === 'BUY') {
    // shares = amount2 / 100 / (pu / 10^pd), truncated at productScale decimals.
    const sharesUnits = (amount2 * pow10(pd) * pow10(productScale)) / (pow10(CLOB_SIZE_DECIMALS) * pu);
    if (sharesUnits === 0n) throw new InvalidFieldError({ field: 'amount', reason: 'buys no shares at this price' });
    return {
      makerAmount: toBase(amount2, CLOB_SIZE_DECIMALS).toString(),
      takerAmount: toBase(sharesUnits, productScale).toString(),
      price: formatUnits(pu, pd),
      size: formatUnits(sharesUnits, productScale),
    };
  }
  return {
    makerAmount: toBase(amount2, CLOB_SIZE_DECIMALS).toString(),
    takerAmount: toBase(amount2 * pu, productScale).toString(),
    price: formatUnits(pu, pd),
    size: formatUnits(amount2, CLOB_SIZE_DECIMALS),
  };
}

/**
 * Amounts of an order request by its type: FOK / FAK orders are market-style — a BUY is sized in
 * collateral (`size` is the USDC to spend), a SELL in shares, and the price is rounded **down** to the
 * tick for both sides, as the official client does (PROTOCOL.md §3.4); GTC / GTD are limit orders sized
 * in shares with the price rounded to the nearest tick. Throws `InvalidFieldError` like the two above.
 */
export function orderRequestAmounts(req: {
  side: Side;
  price: string;
  size: string;
  orderType: 'GTC' | 'GTD' | 'FOK' | 'FAK';
  tickSize: string;
}): OrderAmounts {
  const marketStyle = req.orderType === 'FOK' || req.orderType === 'FAK';
  return marketStyle
    ? toMarketOrderAmounts({ side: req.side, amount: req.size, price: req.price, tickSize: req.tickSize })
    : toOrderAmounts({ side: req.side, price: req.price, size: req.size, tickSize: req.tickSize });
}
