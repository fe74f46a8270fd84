/**
 * The order-book cancels Countersign itself sent or signed (notifications): so that an
 * order the user channel reports `CANCELED` can be told apart from one the venue (a lapsed heartbeat,
 * the market closing) or another client cancelled — the channel does not say who did. L2 routes
 * (PROTOCOL.md §3.1): `DELETE /order` (body `{ orderID }`), `DELETE /orders` (body: an array of ids),
 * `DELETE /cancel-all` and `DELETE /cancel-market-orders` (every order, as far as this log knows).
 */

/** How long a cancel is remembered (ms): the channel's `CANCELED` comes within seconds. */
const KEEP_MS = 120_000;

/**
 * The order ids one L2 request cancels: a list, `'all'`, or none (not a cancel). `body` as sent: an object, an array or
 * its JSON text.
 */
function cancelledBy(method: string, requestPath: string, body: unknown): string[] | 'all' | undefined {
  if (method.toUpperCase() !== 'DELETE') return undefined;
  const path = requestPath.split('?')[0];
  if (path === '/cancel-all' || path === '/cancel-market-orders') return 'all';
  let b = body;
  if (typeof b === 'string') {
    try {
      b = JSON.parse(b);
    } catch {
      return 'all'; // unreadable: count it as covering everything (no notification is the quiet side)
    }
  }
  if (path === '/order' && b !== null && typeof b === 'object' && 'orderID' in b && typeof b.orderID === 'string')
    return [b.orderID];
  if (path === '/orders' && Array.isArray(b)) return b.filter((x): x is string => typeof x === 'string');
  return path === '/order' || path === '/orders' ? 'all' : undefined;
}

/** The log: `record` each L2 request as it is sent or signed, `covers` an order id reported cancelled. */
export class ClobCancelLog {
  private entries: { at: number; ids: Set<string> | 'all' }[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes one L2 request (`method`, `requestPath`, `body` as sent) when it is a cancel. */
  record(method: string, requestPath: string, body: unknown): void {
    const ids = cancelledBy(method, requestPath, body);
    if (!ids) return;
    const now = this.now();
    this.entries = [
      ...this.entries.filter((e) => now - e.at < KEEP_MS).slice(-199),
      { at: now, ids: ids === 'all' ? 'all' : new Set(ids) },
    ];
  }

  /** Whether a cancel Countersign sent or signed in the last 2 minutes covers `orderId`. */
  covers(orderId: string): boolean {
    const now = this.now();
    return this.entries.some((e) => now - e.at < KEEP_MS && (e.ids === 'all' || e.ids.has(orderId)));
  }
}
