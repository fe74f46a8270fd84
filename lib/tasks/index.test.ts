import { afterEach, describe, expect, it, vi } from 'vitest';
import { SEND_GRACE_MS, SEND_WAIT_MAX_MS, afterSends, backgroundTask, nextTask, pressingWrite } from '.';

describe('deferring to a later task (page path)', () => {
  it(
    'nextTask and backgroundTask resolve after every microtask ' +
      'the current task queued, in call order among themselves',
    async () => {
      const order: string[] = [];
      const a = nextTask().then(() => order.push('next'));
      const b = backgroundTask().then(() => order.push('background'));
      // A chain of microtasks as long as a reply's way back (many awaits) still goes first.
      let p: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < 50; i++) p = p.then(() => undefined);
      void p.then(() => order.push('reply'));
      await Promise.all([a, b]);
      expect(order).toEqual(['reply', 'next', 'background']);
    },
  );

  it('backgroundTask uses scheduler.postTask at background priority where there is one', async () => {
    const seen: unknown[] = [];
    const g = globalThis as { scheduler?: unknown };
    const before = g.scheduler;
    g.scheduler = { postTask: (cb: () => void, o: unknown) => (seen.push(o), Promise.resolve().then(cb)) };
    try {
      await backgroundTask();
    } finally {
      g.scheduler = before;
    }
    expect(seen).toEqual([{ priority: 'background' }]);
  });
});

describe("an answer's bookkeeping lets the next send's durable write go first", () => {
  afterEach(() => vi.useRealTimers());

  /** Whether `p` settled, after the timers and microtasks due so far ran. */
  async function settled(p: Promise<unknown>): Promise<boolean> {
    let done = false;
    void p.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    return done;
  }

  it('waits its grace, then for the journal record in flight, whatever came first', async () => {
    vi.useFakeTimers();
    const later = afterSends();
    await vi.advanceTimersByTimeAsync(SEND_GRACE_MS - 1);
    expect(await settled(later), 'not before the grace: the next request is on its way').toBe(false);
    let store!: () => void;
    void pressingWrite(new Promise<void>((r) => (store = r))); // the next request's journal record
    await vi.advanceTimersByTimeAsync(1 + 20);
    expect(await settled(later), 'not while a send waits for its record').toBe(false);
    store();
    expect(await settled(later), 'at once when the record is stored').toBe(true);
  });

  it('goes at its grace when nothing is in flight, and never waits past the longest wait', async () => {
    vi.useFakeTimers();
    const quiet = afterSends();
    await vi.advanceTimersByTimeAsync(SEND_GRACE_MS);
    expect(await settled(quiet)).toBe(true);

    let answer!: () => void;
    void pressingWrite(new Promise<void>((r) => (answer = r))); // a write the storage does not answer
    const stuck = afterSends();
    await vi.advanceTimersByTimeAsync(SEND_GRACE_MS + SEND_WAIT_MAX_MS - 1);
    expect(await settled(stuck)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(stuck), 'a storage that does not answer does not hold the log').toBe(true);
    answer();
  });

  it('a refused record counts as done', async () => {
    vi.useFakeTimers();
    const refused = pressingWrite(Promise.reject(new Error('quota')));
    refused.catch(() => undefined);
    const after = afterSends();
    await vi.advanceTimersByTimeAsync(SEND_GRACE_MS);
    expect(await settled(after)).toBe(true);
  });
});
