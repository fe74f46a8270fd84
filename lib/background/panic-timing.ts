/**
 * The panic switch's time limits, in a module of their own so the popup can state the bound without
 * bundling the background (see ./panic for the order of steps). Every account the vault holds is
 * cancelled in parallel within the same venue phase, so the bound does not grow with the accounts; a
 * venue's "slow down" is waited out only while the wait fits in that phase.
 */

/**
 * How long the order book waits without a heartbeat before it cancels the account's orders (ms): 10 s
 * in the sandbox (`HEARTBEAT_TIMEOUT_MS`, lib/sandbox/clob/routes.ts) and at the venue (PROTOCOL.md §3.1).
 */
export const ORDER_BOOK_HEARTBEAT_LAPSE_MS = 10_000;

/** Panic's time limits (ms). */
export type PanicTiming = {
  /** Longest wait for submissions already in flight to settle before the cancels. */
  drainMs: number;
  /** Deadline of each panic request (cancel, close, read); a cancel without an answer is sent once more. */
  requestTimeoutMs: number;
  /**
   * Hard cut of the whole venue phase (every account and both venues in parallel, closes and Retry-After waits
   * included).
   */
  venuesMaxMs: number;
};

/** Defaults: drain 5 s, 5 s per request (one retry for cancels), venue phase at most 20 s. */
export const PANIC_TIMING: PanicTiming = { drainMs: 5_000, requestTimeoutMs: 5_000, venuesMaxMs: 20_000 };

/** The longest a panic takes with `timing` before its local work (audit entry, lock), in ms. */
export function panicBoundMs(timing: PanicTiming = PANIC_TIMING): number {
  return timing.drainMs + timing.venuesMaxMs;
}
