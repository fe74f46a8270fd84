/**
 * The outcome classes of a signed submission (PROTOCOL.md §2.4). A submission that left ends in one of
 * three: answered (the venue's success body), refused (the venue's own classified answer: nothing was
 * accepted — the gateway's typed error goes back as it is), or unknown (no answer, an unreadable one, a 5xx
 * that says nothing — `OutcomeUnknownError`, never a code a client retries: it may have happened).
 */
import { BaseError } from '../errors/base';
import { InvalidCommandAnswerError } from '../perps/wire';
import { PerpsGatewayError } from '../perps/errors';
import { ClobError, ClobMalformedAnswerError, ClobServerError } from '../clob/errors';

/**
 * Thrown when a signed command got no answer (the connection failed or the deadline passed): it may or
 * may not have happened. `data` names the command (`command`) and, for orders, their client order ids
 * (`coids`, comma-separated) so the page can look them up; it is never resent by itself.
 */
export class OutcomeUnknownError extends BaseError {
  override name = 'Signer.OutcomeUnknownError';
  /** The page gets `data` (`command`, `coids`) to look the order up. */
  static override readonly pageData = true;
  /**
   * EIP-1474 -32002 "resource unavailable": the venue did not answer. Never -32603, which dapp libraries retry (a
   * second submission).
   */
  static override readonly code: number | undefined = -32002;
  /**
   * `what` names the command in the message (`order`, `withdrawal` …); `data` what the page looks it up
   * by (`command`, `coids`, `orderHashes`, `salt`, `ts`, `digest`); `reason` replaces the opening
   * sentence (default: no answer from the gateway).
   */
  constructor(
    readonly what: string,
    cause: unknown,
    data?: Record<string, string | number | boolean>,
    readonly reason = 'No answer from the gateway',
  ) {
    super(`${reason}: the ${what} may or may not have happened. Check the history before trying again.`, {
      cause,
      ...(data ? { data } : {}),
    });
  }

  /** The same error (message, cause) with `extra` added to its `data` (e.g. the page's `idempotencyKey`). */
  withData(extra: Record<string, string | number | boolean>): OutcomeUnknownError {
    return new OutcomeUnknownError(this.what, this.cause, { ...this.data, ...extra }, this.reason);
  }
}

/**
 * Whether `err`, thrown by a submission, is the venue's own refusal (a classified answer: nothing was
 * accepted) rather than a missing, unreadable or unrecorded answer. Anything else thrown once a signed
 * submission left — a network error, a timeout, a malformed answer, a storage or library error — means
 * the venue may hold it: `OutcomeUnknownError`, never a code a client retries.
 */
export function isKnownRefusal(err: unknown): err is BaseError {
  if (err instanceof ClobMalformedAnswerError || err instanceof InvalidCommandAnswerError) return false;
  if (!(err instanceof PerpsGatewayError || err instanceof ClobError)) return false;
  // A 5xx after the POST left says nothing about the order (a proxy's 502 / 504, an internal error after
  // matching): unknown. Known: 503 (the venue's announced modes) and the exchange's own "order timed
  // out — safe to resubmit".
  if (err.status >= 500 && err.status !== 503) return err instanceof ClobServerError && err.retryable;
  return true;
}

/**
 * The word for a perps command of type `type` in an unknown outcome's message: `withdrawal`, `transfer`, or the type
 * itself.
 */
export function commandWord(type: string): string {
  return type === 'withdraw' ? 'withdrawal' : type === 'internalTransfer' ? 'transfer' : type;
}
