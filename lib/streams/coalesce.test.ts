import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { coalesced } from './coalesce';

describe('coalesced', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const flush = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };

  it('runs the first request at once, folds a flood of 1 000 requests into one more run after the gap', async () => {
    let runs = 0;
    const c = coalesced(
      async () => void runs++,
      5_000,
      () => Date.now(),
    );
    c.request();
    expect(runs).toBe(1);
    for (let i = 0; i < 1_000; i++) c.request();
    await flush();
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toBe(2); // nothing asked since
  });

  it('keeps one run in flight: a request during a slow run waits for it, then runs once', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const c = coalesced(
      () =>
        new Promise<void>((r) => {
          runs++;
          release = r;
        }),
      10,
      () => Date.now(),
    );
    c.request();
    await vi.advanceTimersByTimeAsync(100);
    c.request();
    c.request();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
    release();
    await flush();
    expect(runs).toBe(2);
  });

  it('a failing run does not stop later ones; stop() cancels a scheduled run', async () => {
    let runs = 0;
    const c = coalesced(
      async () => {
        runs++;
        throw new Error('read failed');
      },
      1_000,
      () => Date.now(),
    );
    c.request();
    await flush();
    c.request();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
    c.request();
    c.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(2);
  });
});
