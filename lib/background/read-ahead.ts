/**
 * Reads ahead of the popup. Its `streams.watch` names the instrument it shows and the account; when the
 * background holds no fresh book for it (none, or older than `FRESH_BOOK_MS`) or no live session for the
 * account — a worker the browser had stopped, another instrument chosen, streams down — the popup reads them
 * over REST next (`perps.read`: `book`, `portfolio`, `openOrders`), at open only after its first render, tens
 * of ms later on a cold worker. `watch` starts those reads as the watch is answered (at most three, 2 weight
 * each, on the person's share), and `take` hands each one to the popup's matching read (same account, read and
 * query) instead of sending it again.
 *
 * Rules: a read ahead serves one read, of the popup (the person's weight share, as it was drawn) and only within
 * `READ_AHEAD_MS` of its start; one that failed serves nothing (the popup's read is sent as always). A lock, panic, an
 * account switch, a trading session or a venue change (the person's authority ending, `lib/authority/epoch.ts`) drops
 * every read ahead at once: none answers across it. Nothing of a site's path reads here. Held in memory only: a worker
 * that stops forgets them.
 */
import { PERSON_SCOPES, type Authority, type AuthorityTicket } from '../authority/epoch';
import type { PerpsReadName } from '../perps/reads';

/** How long a read started ahead may answer the popup's read (ms): the popup's "fresh" book is at most 1 s old. */
export const READ_AHEAD_MS = 1_000;

/**
 * The age (ms) of a held book the popup shows as fresh and reads no book after (`entrypoints/popup/stores/perps.ts`
 * adds the time its first render waited; a book that turns stale meanwhile is read by the popup as before).
 */
export const FRESH_BOOK_MS = 1_000;

/** The perps read the popup would send: `name`, `account` (proxy-header reads only) and `query`. */
export type AheadRead = { account?: string; name: PerpsReadName; query?: Record<string, string | number> };

/** What `streams.watch` was asked and answered (the parts read ahead of). */
export type WatchSeen = {
  asked: { perpsIid?: number; account?: string };
  answer: { perpsBook: { ageMs: number } | null; perpsAccount: unknown };
};

/** The key of a read: account (lower case), name and query in a fixed order. */
function keyOf(r: AheadRead): string {
  const q = Object.entries(r.query ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([r.account?.toLowerCase() ?? '', r.name, q]);
}

/**
 * The reads a popup makes at open on what its first watch did not bring: the shown instrument's book (10 levels, as
 * the popup asks it) when no book at most 1 s old came, and the account's portfolio and open orders when no live
 * session held them.
 */
export function readsAfterWatch(w: WatchSeen): AheadRead[] {
  const out: AheadRead[] = [];
  const iid = w.asked.perpsIid;
  if (iid !== undefined && !(w.answer.perpsBook && w.answer.perpsBook.ageMs <= FRESH_BOOK_MS))
    out.push({ name: 'book', query: { instrument_id: iid, depth: 10 } });
  const account = w.asked.account;
  if (account && !w.answer.perpsAccount) out.push({ account, name: 'portfolio' }, { account, name: 'openOrders' });
  return out;
}

/**
 * The reads started ahead (see the module docstring). `read` sends one (the background's `perpsRead`, drawing on the
 * person's share); `authority` is the background's epoch (the reads ahead end with the person's authority); `now` is
 * the clock (ms).
 */
export class ReadAhead {
  private readonly ahead = new Map<
    string,
    { at: number; answer: Promise<unknown>; failed: boolean; ticket: AuthorityTicket }
  >();

  constructor(
    private readonly read: (r: AheadRead) => Promise<unknown>,
    private readonly authority: Pick<Authority, 'capture' | 'endedBy' | 'onEnd'>,
    private readonly now: () => number = Date.now,
  ) {
    authority.onEnd(() => {
      for (const [k, e] of this.ahead) if (authority.endedBy(e.ticket) !== undefined) this.ahead.delete(k);
    });
  }

  /**
   * Answers a watch (`answer`: the background's `streams.watch`) and starts the reads `readsAfterWatch` names for it
   * (none when the answer brought everything), under the person's authority as it stood when the watch came: a lock or
   * switch while it was answered leaves none.
   */
  async watch<A extends WatchSeen['answer']>(asked: WatchSeen['asked'], answer: () => Promise<A>): Promise<A> {
    const ticket = this.authority.capture(PERSON_SCOPES);
    const out = await answer();
    this.start({ asked, answer: out }, ticket);
    return out;
  }

  private start(w: WatchSeen, ticket: AuthorityTicket): void {
    if (this.authority.endedBy(ticket) !== undefined) return;
    const at = this.now();
    for (const [k, e] of this.ahead) if (at - e.at > READ_AHEAD_MS) this.ahead.delete(k);
    for (const r of readsAfterWatch(w)) {
      const k = keyOf(r);
      if (this.ahead.has(k)) continue;
      const entry = { at, answer: this.read(r), failed: false, ticket };
      entry.answer.catch(() => {
        entry.failed = true;
        if (this.ahead.get(k) === entry) this.ahead.delete(k);
      });
      this.ahead.set(k, entry);
    }
  }

  /**
   * The answer of the read started ahead that matches `r`, once (undefined: none, too old, or it failed — send the
   * read). A read ahead that fails after it was taken rejects for that read alone: then the caller reads again.
   */
  take(r: AheadRead): Promise<unknown> | undefined {
    const k = keyOf(r);
    const e = this.ahead.get(k);
    if (!e) return undefined;
    this.ahead.delete(k);
    if (e.failed || this.now() - e.at > READ_AHEAD_MS || this.authority.endedBy(e.ticket) !== undefined)
      return undefined;
    return e.answer;
  }
}
