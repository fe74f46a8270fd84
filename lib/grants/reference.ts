/**
 * A grant's reference price, borne out by the order book the extension reads anyway (the same book the
 * approval window prices orders with). The venue's price read — the perps ticker's mark (or mid), the
 * order book exchange's midpoint — is used only when it lies within `REF_AGREEMENT_PCT` of the book's
 * mid (best bid + best ask) / 2; otherwise, or when the book has no two sides, the reference carries a
 * `conflict` in words and the grant covers nothing (the request asks in a window that says so).
 *
 * The bound: a gateway that lies in one read moves a grant's band by at most `REF_AGREEMENT_PCT` of the
 * price; one that lies consistently in both reads moves it freely — the band then holds only against
 * honest reads, while the per-order and 24 h notional caps still bound what is signed (README "What a
 * gateway can and cannot make Countersign show or sign"). Pure; decimals as bigints, never floats.
 */
import { fromUnits, truncUnits } from '../decimal';
import type { RefPrice } from './evaluate';
import { isVenueDecimal } from '../validation';

/** How far (percent of the book's mid) a price read may lie from the book's mid before the reads disagree. */
export const REF_AGREEMENT_PCT = 1;

const S = 8;

/** The best bid and best ask of a book read (price decimal strings, best first), when it has them. */
export type BookTop = { bid?: string | undefined; ask?: string | undefined };

/**
 * `ref` when the book's mid bears it out (within `REF_AGREEMENT_PCT`), else a reference whose
 * `conflict` says why no order can be checked against it. `market` names the market in those words.
 * `undefined` stays `undefined` (no price read: nothing is covered). Throws nothing.
 */
export function borneOut(ref: RefPrice | undefined, top: BookTop, market: string): RefPrice | undefined {
  if (!ref) return undefined;
  const bid = top.bid ? truncUnits(top.bid, S) : 0n;
  const ask = top.ask ? truncUnits(top.ask, S) : 0n;
  const price = truncUnits(ref.price, S);
  if (bid <= 0n || ask <= 0n || ask < bid) {
    return {
      ...ref,
      conflict:
        `the venue's order book for ${market} has no two sides to bear out ` +
        `its ${ref.source} price ${ref.price}, so the order cannot be checked`,
    };
  }
  const mid2 = bid + ask; // 2 × mid
  const diff2 = price * 2n > mid2 ? price * 2n - mid2 : mid2 - price * 2n;
  // |price − mid| / mid ≤ pct / 100  ⇔  |2 price − 2 mid| × 100 ≤ pct × 2 mid.
  if (diff2 * 100n > BigInt(REF_AGREEMENT_PCT) * mid2) {
    return {
      ...ref,
      conflict:
        `the venue's reads disagree on ${market}: its ${ref.source} price ${ref.price} is more than ` +
        `${REF_AGREEMENT_PCT}% from its order book's mid ${fromUnits(mid2 / 2n, S)}, so the order cannot be checked`,
    };
  }
  return ref;
}

/**
 * A perps instrument's reference price from its ticker (`mark`, else `mid`: each a venue decimal string
 * above zero, as the tickers read or the `tickers::` stream carry them), borne out by the book's best bid
 * and ask (`borneOut`); undefined when the ticker has neither. `market` names the instrument in a
 * conflict's words.
 */
export function tickerReference(
  ticker: { mark?: unknown; mid?: unknown } | undefined,
  top: BookTop,
  market: string,
): RefPrice | undefined {
  const ok = (x: unknown): x is string => isVenueDecimal(x) && !/^0(\.0*)?$/.test(x);
  const read: RefPrice | undefined = ok(ticker?.mark)
    ? { price: ticker.mark, source: 'mark' }
    : ok(ticker?.mid)
      ? { price: ticker.mid, source: 'mid' }
      : undefined;
  return borneOut(read, top, market);
}
