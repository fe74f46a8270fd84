/**
 * Sliding-window budgets (shared by the sandbox gateway and the client-side weight meter). Each key (an account, an API
 * key, an IP) has a log of (time, cost) entries; a request fits when the costs within the last `windowMs` plus its own
 * cost stay within `limit`. A refused request is not recorded, so a 429 changes no state.
 */
export type Budget = { limit: number; windowMs: number };

/**
 * One `budget` per key (see the module docstring): `used`, `check`, `record`, and `take` (check and record at once).
 * Times in Unix ms.
 */
export class SlidingWindow {
  /**
   * Per key: the entries in time order, `head` the first one still in the window (the ones before it have left and are
   * dropped in batches), `used` the sum of the costs from `head` on. Pruning walks from the front, so each entry is
   * visited once however often the budget is asked: a busy key costs the same per request at any rate.
   */
  private readonly log = new Map<string, { list: { at: number; cost: number }[]; head: number; used: number }>();
  /** Records since the last sweep of the keys whose window emptied (`SWEEP_EVERY`). */
  private recorded = 0;
  constructor(readonly budget: Budget) {}

  /** How many keys are held (one whose window emptied is forgotten when asked, and by a sweep every 1 024 records). */
  get keys(): number {
    return this.log.size;
  }

  /**
   * `key`'s log with the entries at or before `now - windowMs` dropped from the front. An emptied log is forgotten
   * unless `keep` (a record follows).
   */
  private entries(key: string, now: number, keep = false) {
    const from = now - this.budget.windowMs;
    let l = this.log.get(key);
    if (!l) {
      l = { list: [], head: 0, used: 0 };
      if (keep) this.log.set(key, l);
    }
    for (let e = l.list[l.head]; e !== undefined && e.at <= from; e = l.list[++l.head]) l.used -= e.cost;
    if (l.head === l.list.length) {
      l.list = [];
      l.head = 0;
      l.used = 0; // no float drift carried over an empty window
      if (!keep) this.log.delete(key);
    } else if (l.head > 64 && l.head * 2 > l.list.length) {
      l.list = l.list.slice(l.head);
      l.head = 0;
    }
    return l;
  }

  /** Used weight of `key` in the window ending at `now`. */
  used(key: string, now: number): number {
    return this.entries(key, now).used;
  }

  /**
   * Returns 0 and records `cost` when it fits; otherwise records nothing and returns the ms until
   * enough weight has left the window (≥ 1).
   */
  take(key: string, cost: number, now: number): number {
    const wait = this.check(key, cost, now);
    if (wait === 0) this.record(key, cost, now);
    return wait;
  }

  /** Like `take` but records nothing; `limit` (default the budget's) is the most the window may hold with `cost`. */
  check(key: string, cost: number, now: number, limit = this.budget.limit): number {
    if (cost <= 0) return 0;
    const l = this.entries(key, now);
    let used = l.used;
    if (used + cost <= limit) return 0;
    if (cost > limit) return this.budget.windowMs;
    for (let i = l.head, e = l.list[i]; e !== undefined; e = l.list[++i]) {
      used -= e.cost;
      if (used + cost <= limit) return Math.max(1, e.at + this.budget.windowMs - now);
    }
    return this.budget.windowMs;
  }

  /** Records `cost` unconditionally (after `check` said it fits). */
  record(key: string, cost: number, now: number): void {
    if (cost <= 0) return;
    if (++this.recorded >= SWEEP_EVERY) this.sweep(now);
    const l = this.entries(key, now, true);
    // Kept in time order (an entry dated before the newest — a clock stepped back — goes where it belongs).
    let i = l.list.length;
    while (i > l.head && (l.list[i - 1]?.at ?? now) > now) i--;
    if (i === l.list.length) l.list.push({ at: now, cost });
    else l.list.splice(i, 0, { at: now, cost });
    l.used += cost;
  }

  /** Forgets every key whose newest entry left the window by `now` (a key asked once and never again). */
  private sweep(now: number): void {
    this.recorded = 0;
    const from = now - this.budget.windowMs;
    for (const [key, l] of this.log) if ((l.list[l.list.length - 1]?.at ?? from) <= from) this.log.delete(key);
  }
}

/** Records between two sweeps of the keys whose window emptied (each sweep visits every key once). */
const SWEEP_EVERY = 1_024;

/** A set of sliding windows that must all admit a request (e.g. burst per 10 s and sustained per 10 min). */
export class MultiWindow {
  readonly windows: SlidingWindow[];
  constructor(budgets: Budget[]) {
    this.windows = budgets.map((b) => new SlidingWindow(b));
  }
  /** 0 when admitted (and recorded in every window), else the ms to wait. */
  take(key: string, cost: number, now: number): number {
    const wait = Math.max(0, ...this.windows.map((w) => w.check(key, cost, now)));
    if (wait === 0) for (const w of this.windows) w.record(key, cost, now);
    return wait;
  }
}
