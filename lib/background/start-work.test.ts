/**
 * A just-started worker's start-up work waits for the answers owed at start and for a quiet moment after
 * them (the reads a popup sends right after its first answer go first), and never longer than its bound
 * after the services are built.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startWorkGate } from './start-work';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** An answer that takes `ms`. */
const answer = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));

describe('start-up work of a just-started worker', () => {
  it('a popup read sent right after the first answer is answered before the start-up work begins', async () => {
    const begin = vi.fn();
    const gate = startWorkGate(begin, { quietMs: 40, maxMs: 1_000 });
    gate.built();
    const first = gate.owing(answer(5));
    await vi.advanceTimersByTimeAsync(5);
    await first;
    await vi.advanceTimersByTimeAsync(10); // the popup's next reads arrive 10 ms after the first answer
    expect(begin).not.toHaveBeenCalled();
    const next = gate.owing(answer(40)); // t = 15 → 55
    await vi.advanceTimersByTimeAsync(35); // t = 50: past the first answer's quiet period (45), the read still runs
    expect(begin).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(5);
    await next;
    await vi.advanceTimersByTimeAsync(39); // t = 94
    expect(begin).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1); // t = 95: 40 ms after the last answer
    expect(begin).toHaveBeenCalledTimes(1);
  });

  it(
    'with nothing asked it begins after the quiet period; ' + 'messages never hold it past the bound; it runs once',
    async () => {
      const idle = vi.fn();
      startWorkGate(idle, { quietMs: 40, maxMs: 1_000 }).built();
      await vi.advanceTimersByTimeAsync(40);
      expect(idle).toHaveBeenCalledTimes(1);

      const busy = vi.fn();
      const gate = startWorkGate(busy, { quietMs: 40, maxMs: 1_000 });
      gate.built();
      const waiting = gate.owing(answer(60_000)); // a page request waiting for a person's decision
      await vi.advanceTimersByTimeAsync(999);
      expect(busy).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(busy).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(60_000);
      await waiting;
      await vi.advanceTimersByTimeAsync(100);
      expect(busy).toHaveBeenCalledTimes(1);
    },
  );

  it('nothing begins before the services are built, however quiet', async () => {
    const begin = vi.fn();
    const gate = startWorkGate(begin, { quietMs: 40, maxMs: 1_000 });
    await gate.owing(async () => undefined);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(begin).not.toHaveBeenCalled();
    gate.built();
    await vi.advanceTimersByTimeAsync(40);
    expect(begin).toHaveBeenCalledTimes(1);
  });
});
