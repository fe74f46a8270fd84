/**
 * The one wording of an order-book order: every sentence or phrase that describes an order-book order — the
 * approval window's line and its "Order" row, the ticket's amounts line, the open orders and trades lists, the
 * notification lines, the audit entry of an order found at the venue, a grant's words about the orders it covers —
 * is built here, and the other places call it. Pure: no I/O.
 *
 * The style, the perps venue's (`lib/perps/words.ts`; the table in `words.test.ts` pins it per surface):
 * - an order as signed: `Buy 10.00 shares of token 123456…7890 at 0.55 (pay 5.50 USDC), good-til-cancelled,
 *   post-only` — side, shares, the token (`clobTokenWords`), `at` the price the signed amounts imply, what it pays
 *   or receives, then the order type spelled out (`good-til-cancelled`, `good-til-date until <ISO time>`,
 *   `fill-or-kill`, `fill-and-kill`) and the flags, lowercase and comma-separated (`post-only`, `negative-risk
 *   market`, `maker <address>` when the maker is not the signer);
 * - the numbers of a signed order come from its maker / taker amounts (`clobOrderWords`, `lib/format/order-words.ts`:
 *   shares and USDC to at least 2 decimals, exact; the price they imply, `≈` in front when the ratio is cut);
 * - an order or fill the exchange reports: `Buy 10 “Yes” shares (token 123456…7890) at 0.55`, `Sold 10 …`, its
 *   numbers as the exchange reports them (grouped, never rounded; `?` for anything that is not a decimal).
 */
import { formatUnitsMin2, shortAddress } from '../format';
import { clobOrderWords, signedDecimal } from '../format/order-words';
import { isVenueDecimal } from '../validation';
import { shortToken, venueText } from '../validation/venue-text';

/** Order types spelled out (`GTC` → `good-til-cancelled`); an unknown one is shown as given. */
const ORDER_TYPES: Readonly<Record<string, string>> = {
  GTC: 'good-til-cancelled',
  GTD: 'good-til-date',
  FOK: 'fill-or-kill',
  FAK: 'fill-and-kill',
};

/** Orders and fills of a list or a notice shown before "and N more". */
const LISTED = 3;

/** A number the exchange reports (a venue decimal string) as it is, grouped; `?` for anything that is not one. */
const venueNumber = (x: unknown): string => (isVenueDecimal(x) ? signedDecimal(x).text : '?');

/**
 * How every surface names the token of an order-book order: the exchange's outcome label (validated;
 * the venue's claim) beside the token id — `“Yes” shares (token 123456…7890)` — or the id alone,
 * `shares of token 123456…7890`, when there is no label, it is refused, or it is the id's own stand-in
 * (`token 123456…7890`, what `clobOpenOrderSchema` puts in place of a refused label).
 */
export function clobTokenWords(assetId: string, outcome: unknown): string {
  const token = `token ${shortToken(assetId)}`;
  const label = venueText(outcome, { max: 40 });
  return label && label !== token ? `“${label}” shares (${token})` : `shares of ${token}`;
}

/**
 * An order-book order as signed: its `POST /order` body's fields — side, token id, maker / taker amounts (base units,
 * 6 decimals), expiration (Unix seconds, GTD only), maker and signer addresses — its order type and post-only flag, and
 * whether its market is negative-risk.
 */
export type ClobOrderFacts = {
  order: {
    side: 'BUY' | 'SELL';
    tokenId: string;
    makerAmount: string;
    takerAmount: string;
    expiration?: string | undefined;
    maker?: string | undefined;
    signer?: string | undefined;
  };
  orderType: string;
  postOnly?: boolean | undefined;
  negRisk?: boolean | undefined;
};

/**
 * The words of one signed order-book order — the approval window's line and its "Order" row, the page path's audit
 * entry — decoded from the signed amounts (`clobOrderWords`): `Buy 10.00 shares of token 123456…7890 at 0.55 (pay 5.50
 * USDC), good-til-cancelled, post-only`.
 */
export function clobOrderLine(o: ClobOrderFacts): string {
  const w = clobOrderWords(o.order);
  const buy = w.side === 'BUY';
  const pay = buy ? `pay ${w.usdc} USDC` : `receive ${w.usdc} USDC`;
  const kind = Object.hasOwn(ORDER_TYPES, o.orderType) ? (ORDER_TYPES[o.orderType] ?? o.orderType) : o.orderType;
  const until =
    o.orderType === 'GTD' && o.order.expiration !== undefined
      ? ` until ${new Date(Number(o.order.expiration) * 1000).toISOString()}`
      : '';
  const parts = [
    `${buy ? 'Buy' : 'Sell'} ${w.shares} ${clobTokenWords(o.order.tokenId, undefined)} at ${w.price} (${pay})`,
    `${kind}${until}`,
  ];
  if (o.postOnly) parts.push('post-only');
  if (o.negRisk) parts.push('negative-risk market');
  const { maker, signer } = o.order;
  if (maker && signer && maker.toLowerCase() !== signer.toLowerCase()) parts.push(`maker ${shortAddress(maker)}`);
  return parts.join(', ');
}

/**
 * The ticket's amounts line before an order is signed: what it pays and receives in human units and in base units (6
 * decimals) and the price — `You pay 4.00 USDC (4000000 base units) for 10.00 shares (10000000 base units) at 0.40`.
 */
export function clobTicketWords(a: {
  side: 'BUY' | 'SELL';
  makerAmount: string;
  takerAmount: string;
  price: string;
}): string {
  const [pays, gets] = a.side === 'BUY' ? ['USDC', 'shares'] : ['shares', 'USDC'];
  return (
    `You pay ${formatUnitsMin2(a.makerAmount, 6)} ${pays} (${a.makerAmount} base units) for ` +
    `${formatUnitsMin2(a.takerAmount, 6)} ${gets} (${a.takerAmount} base units) at ${a.price}`
  );
}

/**
 * An order the exchange reports (open orders read, user channel): `Buy 10 “Yes” shares (token 123456…7890) at 0.55` —
 * side, size, token, price as reported. The open orders list, the cancel notice and the audit entry of an order found
 * at the venue read it so.
 */
export function clobVenueOrderWords(o: {
  side: string;
  size: string;
  price: string;
  asset_id: string;
  outcome: unknown;
}): string {
  const side = o.side.toUpperCase() === 'BUY' ? 'Buy' : 'Sell';
  return `${side} ${venueNumber(o.size)} ${clobTokenWords(o.asset_id, o.outcome)} at ${venueNumber(o.price)}`;
}

/**
 * The notification line of an order-book order cancelled outside Countersign: the order as the exchange reports it and
 * how much of it had filled — `Buy 10 “Yes” shares (token …) at 0.55 (3 had filled)`.
 */
export function clobCancelNoticeWords(o: {
  side: string;
  original_size: string;
  size_matched: string;
  price: string;
  asset_id: string;
  outcome: unknown;
}): string {
  const filled = Number(o.size_matched) > 0 ? ` (${o.size_matched} had filled)` : '';
  return `${clobVenueOrderWords({ ...o, size: o.original_size })}${filled}`;
}

/**
 * The person's own orders in one trade (`ClobTrade.own`), each as `Sold 10 “Yes” shares (token …) at 0.6`: side
 * (past tense), the size matched of it, the token, its price; at most `max` of them, then how many more.
 */
export function clobOwnFillWords(
  own: readonly { side: string; size: string; price: string; asset_id: string; outcome: unknown }[],
  max = LISTED,
): string {
  const words = own.slice(0, max).map((f, i) => {
    const verb = f.side.toUpperCase() === 'BUY' ? 'Bought' : 'Sold';
    return (
      `${i === 0 ? verb : verb.toLowerCase()} ${venueNumber(f.size)} ` +
      `${clobTokenWords(f.asset_id, f.outcome)} at ${venueNumber(f.price)}`
    );
  });
  const more = own.length > max ? `; and ${own.length - max} more of your orders` : '';
  return `${words.join('; ')}${more}`;
}

/**
 * The audit entry's words for an order-book order found at the venue after Countersign's records were lost
 * (`lib/audit/lost-storage` prefixes `Found at the venue: `): the order as the exchange reports it and where it was
 * found — `Buy 10 “Yes” shares (token …) at 0.55 (open)`, `… (traded)`.
 */
export function clobFoundOrderWords(
  o: { side: string; size: string; price: string; asset_id: string; outcome: unknown },
  where: 'open' | 'traded',
): string {
  return `${clobVenueOrderWords(o)} (${where})`;
}

/**
 * An order-book grant's words about the orders it covers (`describeGrant`, `lib/grants/evaluate.ts`): the size per
 * order and post-only, each a rule `evaluateGrant` enforces.
 */
export function clobGrantOrderWords(g: { maxSize?: string; postOnly?: boolean }): string[] {
  return [...(g.maxSize ? [`At most ${g.maxSize} per order.`] : []), ...(g.postOnly ? ['Post-only orders only.'] : [])];
}
