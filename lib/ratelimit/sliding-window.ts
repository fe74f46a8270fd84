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
  private readonly log = new Map<string, { at: number; cost: number }[]>();
  constructor(readonly budget: Budget) {}

  private entries(key: string, now: number) {
    const from = now - this.budget.windowMs;
    const list = (this.log.get(key) ?? []).filter((e) => e.at > from);
    this.log.set(key, list);
    return list;
  }

  /** Used weight of `key` in the window ending at `now`. */
  used(key: string, now: number): number {
    return this.entries(key, now).reduce((n, e) => n + e.cost, 0);
  }

  /**
   * Returns 0 and records `cost` when it fits; otherwise records nothing and returns the ms until
   * enough weight has left the window (≥ 1).
   */
  take(key: string, cost: number, now: number): number {
    const wait = this.check(key, cost, now);
    if (wait === 0 && cost > 0) this.entries(key, now).push({ at: now, cost });
    return wait;
  }

  /** Like `take` but records nothing; `limit` (default the budget's) is the most the window may hold with `cost`. */
  check(key: string, cost: number, now: number, limit = this.budget.limit): number {
    if (cost <= 0) return 0;
    const list = this.entries(key, now);
    let used = list.reduce((n, e) => n + e.cost, 0);
    if (used + cost <= limit) return 0;
    if (cost > limit) return this.budget.windowMs;
    for (const e of list) {
      used -= e.cost;
      if (used + cost <= limit) return Math.max(1, e.at + this.budget.windowMs - now);
    }
    return this.budget.windowMs;
  }

  /** Records `cost` unconditionally (after `check` said it fits). */
  record(key: string, cost: number, now: number): void {
    if (cost > 0) this.entries(key, now).push({ at: now, cost });
  }
}

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
