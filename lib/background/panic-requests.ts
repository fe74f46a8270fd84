/**
 * How the panic switch sends its requests (see ./panic): each with a deadline; an idempotent cancel that
 * got no answer is sent once more; a cancel the venue answered "slow down" (HTTP 429, seed "Limits" and
 * PROTOCOL.md §3.1) is sent again after the venue's `Retry-After` — as long as that wait, plus one more
 * request deadline, ends before panic's venue phase does. A longer wait is not waited: the step says so
 * (`SlowDownError`) and the venue's kill switch is named instead.
 */
import { BaseError } from '../errors/base';
import { NetworkError } from '../http/json';
import { ClobError } from '../clob/errors';
import { PerpsRateLimitedError } from '../perps/errors';
import { OutcomeUnknownError } from '../signer/service';

/** A panic request that got no answer within its deadline. */
export class NoAnswerError extends BaseError {
  override name = 'Panic.NoAnswerError';
  constructor(ms: number) {
    super(`No answer within ${Math.ceil(ms / 1000)} s.`);
  }
}

/** The venue said slow down for longer than panic may wait (`retryAfterMs`, ms): the cancel was not sent again. */
export class SlowDownError extends BaseError {
  override name = 'Panic.SlowDownError';
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super(
      `the venue said slow down for ` +
        `${Number.isFinite(retryAfterMs) ? `${Math.ceil(retryAfterMs / 1000)} s` : 'longer than any wait'}, ` +
        `longer than panic may wait — not cancelled`,
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/** Wait when a 429 names none (ms). */
const DEFAULT_SLOW_DOWN_MS = 1_000;
/** Shortest wait between two cancels after a "slow down" (ms): a venue naming 0 s is not sent a burst of them. */
export const MIN_SLOW_DOWN_MS = 250;

/** The error's plain sentence (a generic one for what is not a `BaseError`). */
export const msg = (e: unknown): string => (e instanceof BaseError ? e.shortMessage : 'Something went wrong.');
/** Whether `e` means the venue gave no answer (deadline, network, unknown outcome). */
export const noAnswer = (e: unknown): boolean =>
  e instanceof NoAnswerError || e instanceof OutcomeUnknownError || e instanceof NetworkError;

/**
 * The ms the venue asked to wait when `e` is its "slow down" — perps 429, an order-book answer to try
 * again (429, 425, "order timed out": `ClobError.retryable`) — at least `MIN_SLOW_DOWN_MS`; else undefined.
 */
export function slowDownMs(e: unknown): number | undefined {
  if (e instanceof PerpsRateLimitedError || (e instanceof ClobError && e.retryable))
    return Math.max(MIN_SLOW_DOWN_MS, e.retryAfterMs ?? DEFAULT_SLOW_DOWN_MS);
  return undefined;
}

/** `p`, or `NoAnswerError` after `ms`. */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new NoAnswerError(ms)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs the idempotent cancel `fn` with a deadline of `ms` each time: once more when no answer came, and
 * again after each 429's `Retry-After` while the wait plus `ms` ends by `until` (Unix ms by `now`). Throws
 * the venue's refusal, `NoAnswerError` (silent twice) or `SlowDownError` (a wait past `until`).
 */
export async function cancelPolitely<T>(
  fn: () => Promise<T>,
  o: { ms: number; until: number; now: () => number; sleep?: (ms: number) => Promise<void> },
): Promise<T> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let silentOnce = false;
  for (;;) {
    try {
      return await within(fn(), o.ms);
    } catch (err) {
      const wait = slowDownMs(err);
      if (wait !== undefined) {
        if (o.now() + wait + o.ms > o.until) throw new SlowDownError(wait);
        await sleep(wait);
        continue;
      }
      if (noAnswer(err) && !silentOnce) {
        silentOnce = true;
        continue;
      }
      throw err;
    }
  }
}
