/**
 * Coalesced REST resyncs after stream gaps (`lib/background/hostile-venue.test.ts`, "a flood of
 * sq-gapped frames"). A venue — broken or hostile — can send frames whose per-channel
 * `sq` skips on every frame; each gap asks for a REST resync, and unbounded resyncs spend the client's
 * weight budget (and the venue's) until the person's own orders are refused. A coalesced run has at
 * most one run in flight; a request made while one runs, or within `minGapMs` of the last run's start,
 * schedules exactly one more run, `minGapMs` after that start. So a flood costs at most one resync per
 * `minGapMs`, and the state read last is never older than the last gap.
 */

/** Default spacing of gap resyncs (ms): 12 per minute at most, each a few weight units. */
export const RESYNC_MIN_GAP_MS = 5_000;

/**
 * A coalesced task: `request()` asks for a run (see the module docstring); `stop()` cancels a scheduled one for good.
 */
export type Coalesced = { request(): void; stop(): void };

/**
 * Wraps `run` (errors are swallowed: the next gap or reconnect asks again). `now` Unix ms (injected in
 * tests); `minGapMs` ms between the starts of two runs.
 */
export function coalesced(
  run: () => Promise<void>,
  minGapMs = RESYNC_MIN_GAP_MS,
  now: () => number = Date.now,
): Coalesced {
  let running = false;
  let queued = false;
  let stopped = false;
  let lastStart = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    timer = undefined;
    if (stopped) return;
    queued = false;
    running = true;
    lastStart = now();
    void run()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (queued) schedule();
      });
  };
  const schedule = () => {
    if (stopped || running || timer !== undefined) return;
    const wait = lastStart + minGapMs - now();
    if (wait <= 0) start();
    else timer = setTimeout(start, wait);
  };
  return {
    request() {
      queued = true;
      schedule();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
