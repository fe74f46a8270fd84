import { describe, expect, it } from 'vitest';
import { backgroundTask, nextTask } from '.';

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
