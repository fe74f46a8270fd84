/**
 * When a just-started worker runs its start-up work (the lifetime's start hooks, the audit journal's
 * recovery): once the answers owed at start are given AND no message came for `quietMs` — the messages a
 * popup or an approval window sends right after its first answer (its reads, the status) are answered
 * first, not queued behind the start-up work — and at the latest `maxMs` after the services are built, so a
 * page request waiting minutes for a person's decision never holds it back longer. Pure timing; the work itself is
 * `begin`, run once.
 */

/** Default quiet period after the last owed answer before the start-up work begins (ms). */
export const START_WORK_QUIET_MS = 40;
/**
 * The longest start-up work waits after the services are built (ms): a page request can wait minutes for a person's
 * decision.
 */
export const START_WORK_MAX_DELAY_MS = 1_000;

/** The gate: wrap every answered message in `owing`; call `built()` once the services exist. */
export type StartWorkGate = {
  /** Runs `work` as an owed answer: the start-up work waits for it (and for `quietMs` after the last one). */
  owing<T>(work: () => Promise<T>): Promise<T>;
  /**
   * The services are built: the start-up work may begin (after the owed answers and the quiet period; `maxMs` at the
   * latest).
   */
  built(): void;
};

/**
 * A start-up work gate calling `begin` once (see the module docstring). `quietMs` and `maxMs` in ms;
 * `timers` for tests (defaults to the global `setTimeout` / `clearTimeout`).
 */
export function startWorkGate(
  begin: () => void,
  o: {
    quietMs?: number;
    maxMs?: number;
    timers?: { set: (f: () => void, ms: number) => unknown; clear: (t: unknown) => void };
  } = {},
): StartWorkGate {
  const quietMs = o.quietMs ?? START_WORK_QUIET_MS;
  const maxMs = o.maxMs ?? START_WORK_MAX_DELAY_MS;
  const timers = o.timers ?? {
    set: (f: () => void, ms: number) => setTimeout(f, ms),
    clear: (t: unknown) => clearTimeout(t as ReturnType<typeof setTimeout>),
  };
  let owed = 0;
  let ready = false;
  let begun = false;
  let quiet: unknown;
  let latest: unknown;
  const run = () => {
    if (begun) return;
    begun = true;
    timers.clear(quiet);
    timers.clear(latest);
    begin();
  };
  const settle = () => {
    timers.clear(quiet);
    if (ready && !begun && owed === 0) quiet = timers.set(() => owed === 0 && run(), quietMs);
  };
  return {
    async owing(work) {
      owed++;
      timers.clear(quiet);
      try {
        return await work();
      } finally {
        owed--;
        settle();
      }
    },
    built() {
      if (ready) return;
      ready = true;
      latest = timers.set(run, maxMs);
      settle();
    },
  };
}
