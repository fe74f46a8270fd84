/**
 * Flags for the approval window when a gateway's step changed what a page asked: order-book prices are
 * rounded to the tick the exchange reports before the window (and a grant) evaluates the order
 * (`SigningService.prepareClob`); the rounded price is what is signed, shown and counted, and the
 * window says so in words beside the price asked. Pure.
 */
import type { ClobArtifact } from '../signer/artifact';
import { clobOrderWords } from '../format/order-words';
import { truncUnits } from '../decimal';

/** One order-book order as the page asked it (`price` a decimal string, USDC per share). */
export type AskedClobOrder = { price: string; orderType?: string };

/**
 * One flag per limit order (GTC / GTD) whose signed price (`clobOrderWords` over the artifact's amounts) differs from
 * the price the page asked, naming both and the tick the exchange reported. None when they agree.
 */
export function clobRoundingFlags(asked: readonly AskedClobOrder[], a: ClobArtifact): string[] {
  const out: string[] = [];
  a.orders.forEach((o, i) => {
    const want = asked[i]?.price;
    // Limit orders only: a market-style order's amounts price its size in USDC, not at a single price.
    if (want === undefined || (o.body.orderType !== 'GTC' && o.body.orderType !== 'GTD')) return;
    const buy = o.body.order.side === 'BUY';
    const shares = BigInt(buy ? o.body.order.takerAmount : o.body.order.makerAmount);
    const usdc = BigInt(buy ? o.body.order.makerAmount : o.body.order.takerAmount);
    // Signed price = usdc / shares; asked price at 6 decimals: they differ when usdc × 10^6 ≠ asked × shares.
    if (shares > 0n && usdc * 10n ** 6n === truncUnits(want, 6) * shares && /^\d+(\.\d{0,6})?$/.test(want)) return;
    const signed = clobOrderWords(o.body.order).price;
    out.push(`${a.orders.length > 1 ? `Order ${i + 1}: the` : 'The'} price asked, ${want}, is signed as ${signed} at the tick ${o.tickSize} the exchange reports.`);
  });
  return out;
}
