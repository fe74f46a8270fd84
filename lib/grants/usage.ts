/**
 * A grant's uses in memory, with its rolling usage kept up to date ("flat as a grant is
 * used"): the notional of the last 24 h and the uses of the last 60 s are running figures moved forward
 * as the clock passes, so judging an order does not read every use of the day. Uses are kept in the
 * order they were made (times ascending); the orders they placed are indexed separately (at most
 * `MAX_OWNED_ORDERS` of them live). Used only inside `GrantService`'s mutex.
 */
import { toUnits } from '../decimal';
import { DAY_MS, type GrantUsage, type GrantUse } from './evaluate';

const units = (notional: string) => toUnits(notional, 18) ?? 0n;

/** The uses of one grant and their running 24 h / 60 s figures (see the module docstring). */
export class UseWindow {
  readonly uses: GrantUse[];
  /** The uses that placed orders, oldest first (at most `MAX_OWNED_ORDERS` of them). */
  private owning: GrantUse[];
  private day = 0;
  private minute = 0;
  private sum = 0n;
  private last = -Infinity;
  private top = 0;

  /** `uses` in any order (sorted here by time). */
  constructor(uses: readonly GrantUse[]) {
    this.uses = [...uses].sort((a, b) => a.at - b.at);
    for (const u of this.uses) this.top = Math.max(this.top, u.seq ?? 0);
    this.owning = this.uses.filter((u) => u.orders?.length);
    this.rewind();
  }

  private rewind(): void {
    this.day = 0;
    this.minute = 0;
    this.sum = this.uses.reduce((a, u) => a + units(u.notional), 0n);
    this.last = -Infinity;
  }

  /**
   * The usage at `now` (Unix ms): notional of the uses of the last 24 h (18-decimal units) and the count of the last 60
   * s.
   */
  at(now: number): GrantUsage & { uses24h: number } {
    if (now < this.last) this.rewind(); // the clock went back: count from the start again
    this.last = now;
    for (let u = this.uses[this.day]; u && u.at <= now - DAY_MS; u = this.uses[++this.day])
      this.sum -= units(u.notional);
    if (this.minute < this.day) this.minute = this.day;
    for (let u = this.uses[this.minute]; u && u.at <= now - 60_000; u = this.uses[++this.minute]);
    return { used24h: this.sum, lastMinute: this.uses.length - this.minute, uses24h: this.uses.length - this.day };
  }

  /** The next use's sequence number. */
  nextSeq(): number {
    return this.top + 1;
  }

  /** Counts `use` (made now: its time is not before any earlier use's). */
  push(use: GrantUse): void {
    this.uses.push(use);
    this.top = Math.max(this.top, use.seq ?? 0);
    this.sum += units(use.notional);
  }

  /** The uses that placed orders, oldest first. */
  withOrders(): GrantUse[] {
    return [...this.owning];
  }

  /** Replaces the stored use with the same `seq` and time by `use`. */
  replace(use: GrantUse): void {
    const same = (u: GrantUse) => u.seq === use.seq && u.at === use.at;
    const i = this.uses.findLastIndex(same);
    if (i >= 0) this.uses[i] = use;
    this.owning = this.owning.filter((u) => !same(u));
    if (use.orders?.length)
      this.owning = [...this.owning, use].sort((a, b) => a.at - b.at || (a.seq ?? 0) - (b.seq ?? 0));
  }
}
