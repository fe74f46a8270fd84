/**
 * What the background keeps of the streams between events, pure:
 * - `ClobBooks`: the order-book market channel's books per token, a `book` dump replacing a token's
 *   levels and each `price_change` setting one level's total (PROTOCOL.md §5.3: "0" removes it);
 * - `Recency`: which orders a stream reported since a REST resync began, so the resync's snapshot — read
 *   before those events but answered after them — cannot put an order's status back (the "snapshot race").
 */
import type { ClobLevel, ClobStreamEvent } from './clob';

/** A token's book as the popup shows it: `depth` levels each side best first, best bid / ask (null when empty). */
export type ClobBookView = { bids: ClobLevel[]; asks: ClobLevel[]; bestBid: string | null; bestAsk: string | null };

/** The order-book books of the market channel, by token id (sizes and prices decimal strings). */
export class ClobBooks {
  private readonly books = new Map<string, { bids: Map<string, string>; asks: Map<string, string> }>();

  /** Applies a market-channel event; returns the token ids whose book changed. */
  apply(e: ClobStreamEvent): string[] {
    if (e.kind === 'book') {
      this.books.set(e.tokenId, { bids: new Map(e.bids), asks: new Map(e.asks) });
      return [e.tokenId];
    }
    if (e.kind !== 'price_change') return [];
    const changed = new Set<string>();
    for (const c of e.changes) {
      const b = this.books.get(c.tokenId);
      if (!b) continue; // no dump yet: the dump that follows a subscribe carries it
      const side = c.side === 'BUY' ? b.bids : b.asks;
      if (Number(c.size) === 0) side.delete(c.price);
      else side.set(c.price, c.size);
      changed.add(c.tokenId);
    }
    return [...changed];
  }

  /** The view of `tokenId` (`depth` levels a side), undefined before its dump. */
  view(tokenId: string, depth = 10): ClobBookView | undefined {
    const b = this.books.get(tokenId);
    if (!b) return undefined;
    const sorted = (m: Map<string, string>, desc: boolean) =>
      [...m.entries()].sort(([x], [y]) => (desc ? Number(y) - Number(x) : Number(x) - Number(y)));
    const bids = sorted(b.bids, true);
    const asks = sorted(b.asks, false);
    return {
      bids: bids.slice(0, depth),
      asks: asks.slice(0, depth),
      bestBid: bids[0]?.[0] ?? null,
      bestAsk: asks[0]?.[0] ?? null,
    };
  }

  /** Forgets every token but `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const id of this.books.keys()) if (!keep.has(id)) this.books.delete(id);
  }
}

/**
 * The latest stream state of each order (by id) with a counter of arrival, so a REST snapshot can be
 * merged without going back in time: `mark()` before the read, `merge(snapshot, mark)` after it.
 */
export class Recency<K, T> {
  private tick = 0;
  private readonly seen = new Map<K, { at: number; item: T; open: boolean }>();

  /** Records a stream event: `item` is order `key`'s state now, `open` whether it still rests. */
  note(key: K, item: T, open: boolean): void {
    this.seen.set(key, { at: ++this.tick, item, open });
    const oldest = this.seen.keys().next();
    if (this.seen.size > 1_000 && !oldest.done) this.seen.delete(oldest.value);
  }

  /** A mark to take just before a REST read starts. */
  mark(): number {
    return this.tick;
  }

  /**
   * The open orders of `snapshot` (read after `mark`) corrected by the stream events that arrived
   * since: such an order takes the event's state, and is dropped when the event says it no longer rests.
   */
  merge(snapshot: readonly T[], keyOf: (item: T) => K, mark: number): T[] {
    const newer = new Map([...this.seen].filter(([, s]) => s.at > mark));
    const out = snapshot.flatMap((o) => {
      const n = newer.get(keyOf(o));
      return n ? (n.open ? [n.item] : []) : [o];
    });
    const present = new Set(snapshot.map(keyOf));
    for (const [k, n] of newer) if (n.open && !present.has(k)) out.push(n.item);
    return out;
  }
}
