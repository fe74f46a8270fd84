/**
 * What a gateway's step changed in an order-book order a page asked for: the price is rounded to the
 * tick the exchange reports (limit orders to the nearest tick, FOK / FAK down) and the size cut to 2
 * decimals before the window or a grant evaluates the order (`SigningService.prepareClob`). The rounded
 * order is what is signed, shown and counted; when rounding changed the price or the size asked, the
 * window says so in words beside the value asked, and a grant covers nothing (`ProviderService`). Pure;
 * source: PROTOCOL.md §2.3 and §3.4.
 */
import type { ClobArtifact } from '../signer/artifact';
import { clobOrderWords } from '../format/order-words';
import { formatUnitsMin2 } from '../format';
import { toUnits } from '../decimal';

/**
 * One order-book order as the page asked it: `price` in USDC per share, `size` in shares (a FOK / FAK
 * BUY: the USDC to spend), both decimal strings. Its side and order type are read from the artifact.
 */
export type AskedClobOrder = { price: string; size: string };

/** Base units per token (6 decimals): amounts and prices are compared at this scale. */
const SCALE = 6;

/**
 * The limit price an order's signed amounts carry at the tick it was built at (units at 6 decimals), as
 * the exchange reads it: a limit order's exact ratio (undefined when it is not exact); a FOK / FAK
 * order's ratio rounded to the tick in the taker's favour (down for a BUY, up for a SELL), because its
 * amounts were cut.
 */
function signedLimit(w: ReturnType<typeof clobOrderWords>, marketStyle: boolean, tickSize: string): bigint | undefined {
  const { price, exact, shares } = w.units;
  if (shares === 0n) return undefined;
  if (!marketStyle) return exact ? price : undefined;
  const tick = toUnits(tickSize, SCALE);
  if (tick === undefined || tick === 0n) return undefined;
  const off = price % tick;
  if (w.side === 'BUY' || (off === 0n && exact)) return price - off;
  return price - off + tick;
}

/**
 * One flag per change rounding made to an order the page asked (`asked[i]` against `a.orders[i]`, every
 * order type): the price asked beside the price signed and the tick the exchange reported; the size
 * asked beside the size signed. None when the signed order is the one asked.
 */
export function clobRoundingFlags(asked: readonly AskedClobOrder[], a: ClobArtifact): string[] {
  const out: string[] = [];
  a.orders.forEach((o, i) => {
    const want = asked[i];
    if (!want) return;
    const lead = a.orders.length > 1 ? `Order ${i + 1}: the` : 'The';
    const w = clobOrderWords(o.body.order);
    const marketStyle = o.body.orderType === 'FOK' || o.body.orderType === 'FAK';
    const limit = signedLimit(w, marketStyle, o.tickSize);
    if (limit === undefined || limit !== toUnits(want.price, SCALE)) {
      const signed = limit === undefined ? w.price : formatUnitsMin2(limit.toString(), SCALE);
      out.push(
        `${lead} price asked, ${want.price}, is signed as ${signed} at the tick ${o.tickSize} the exchange reports.`,
      );
    }
    const inUsdc = marketStyle && w.side === 'BUY';
    if ((inUsdc ? w.units.usdc : w.units.shares) !== toUnits(want.size, SCALE)) {
      out.push(
        `${lead} size asked, ${want.size}, is signed as ` +
          `${inUsdc ? `${w.usdc} USDC` : `${w.shares} shares`} (the exchange takes 2 decimals).`,
      );
    }
  });
  return out;
}
