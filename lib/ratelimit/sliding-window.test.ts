import { describe, expect, it } from 'vitest';
import { seeded } from '../../test/kits/seeded';
import { MultiWindow, SlidingWindow, type Budget } from './sliding-window';

/** The budget's rule written out plainly: every entry in (now - windowMs, now], summed on each ask. */
class PlainWindow {
  private readonly log = new Map<string, { at: number; cost: number }[]>();
  constructor(readonly budget: Budget) {}
  private entries(key: string, now: number) {
    const list = (this.log.get(key) ?? []).filter((e) => e.at > now - this.budget.windowMs);
    this.log.set(key, list);
    return list;
  }
  used(key: string, now: number): number {
    return this.entries(key, now).reduce((n, e) => n + e.cost, 0);
  }
  check(key: string, cost: number, now: number, limit = this.budget.limit): number {
    if (cost <= 0) return 0;
    const list = [...this.entries(key, now)].sort((a, b) => a.at - b.at);
    let used = list.reduce((n, e) => n + e.cost, 0);
    if (used + cost <= limit) return 0;
    if (cost > limit) return this.budget.windowMs;
    for (const e of list) {
      used -= e.cost;
      if (used + cost <= limit) return Math.max(1, e.at + this.budget.windowMs - now);
    }
    return this.budget.windowMs;
  }
  record(key: string, cost: number, now: number): void {
    if (cost > 0) this.entries(key, now).push({ at: now, cost });
  }
}

describe('sliding-window budgets', () => {
  it('admits, refuses and names the wait as the plain rule, with entries back-dated or the clock stepped back', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = seeded(seed).next;
      const budget = { limit: 20, windowMs: 1_000 };
      const fast = new SlidingWindow(budget);
      const plain = new PlainWindow(budget);
      let now = 1_000_000;
      for (let step = 0; step < 600; step++) {
        const key = r() < 0.8 ? 'a' : 'b';
        now += Math.floor(r() * 60) - (r() < 0.05 ? 400 : 0); // now and then the clock steps back
        const cost = Math.floor(r() * 6);
        const at = r() < 0.1 ? now - Math.floor(r() * 1_500) : now; // someone else's use, dated earlier
        const ctx = `seed ${seed} step ${step}`;
        if (at === now) {
          expect(fast.take(key, cost, now), ctx).toBe(
            plain.check(key, cost, now) === 0 ? 0 : plain.check(key, cost, now),
          );
          if (plain.check(key, cost, now) === 0) plain.record(key, cost, now);
        } else {
          fast.record(key, cost, at);
          plain.record(key, cost, at);
        }
        expect(fast.used(key, now), ctx).toBe(plain.used(key, now));
        expect(fast.check(key, 7, now, 15), ctx).toBe(plain.check(key, 7, now, 15));
      }
    }
  });

  it('lets weight go as the window passes, to the millisecond', () => {
    const w = new SlidingWindow({ limit: 10, windowMs: 1_000 });
    expect(w.take('k', 10, 0)).toBe(0);
    expect(w.take('k', 1, 500)).toBe(500);
    expect(w.take('k', 1, 999)).toBe(1);
    expect(w.take('k', 1, 1_000)).toBe(0);
    expect(w.used('k', 1_999)).toBe(1);
    expect(w.used('k', 2_000)).toBe(0);
    expect(w.take('k', 10, 2_000)).toBe(0);
  });

  it('a cost above the limit waits a whole window and records nothing', () => {
    const w = new SlidingWindow({ limit: 5, windowMs: 1_000 });
    expect(w.take('k', 6, 0)).toBe(1_000);
    expect(w.used('k', 0)).toBe(0);
  });

  it('keeps a busy key exact over many windows', () => {
    const w = new SlidingWindow({ limit: 1_000, windowMs: 100 });
    for (let t = 0; t < 50_000; t++) expect(w.take('k', 1, t)).toBe(0);
    expect(w.used('k', 49_999)).toBe(100);
  });

  it('a multi-window budget admits only when every window does, and records in each', () => {
    const m = new MultiWindow([
      { limit: 2, windowMs: 100 },
      { limit: 3, windowMs: 1_000 },
    ]);
    expect(m.take('k', 1, 0)).toBe(0);
    expect(m.take('k', 1, 10)).toBe(0);
    expect(m.take('k', 1, 20)).toBe(80);
    expect(m.take('k', 1, 100)).toBe(0);
    expect(m.take('k', 1, 200)).toBe(800);
  });

  it('forgets a key whose window emptied: when it is asked, and once many other keys were recorded', () => {
    const w = new SlidingWindow({ limit: 10, windowMs: 1_000 });
    for (let i = 0; i < 2_000; i++) w.take(`ip ${i}`, 1, 0); // one request each, never again
    expect(w.keys).toBe(2_000);
    expect(w.used('ip 0', 1_000)).toBe(0);
    expect(w.keys, 'asked after its window: forgotten').toBe(1_999);
    expect(w.check('never seen', 1, 1_000)).toBe(0);
    expect(w.keys, 'a check of an unknown key keeps nothing').toBe(1_999);
    for (let i = 0; i < 1_100; i++) w.take(`later ${i}`, 1, 5_000);
    expect(w.keys, 'the keys of the first second are swept').toBeLessThanOrEqual(1_100);
    expect(w.take('later 0', 10, 5_000), 'a live key keeps its weight').toBeGreaterThan(0);
  });
});
