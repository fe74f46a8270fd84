/**
 * Classification of perps gateway answers (seed "Errors"): a failure body is `{ status: "err", error }`
 * (withdraw / internal transfer may add `withdraw_id` / `transfer_id`); 429 carries `Retry-After`.
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { headerOf, parseRetryAfterMs, type HttpAnswer } from '../http/retry-after';
import { perpsErrorCode, UNSHOWN_VENUE_TEXT } from '../validation/venue-text';

/** What stands for an error value the gateway sent out of the venue's shape (not a venue error code: not shown). */
const UNSHOWN_ERROR = UNSHOWN_VENUE_TEXT;

/** A command or read the gateway refused. `error` is the gateway's error value (e.g. `insufficient_margin`). */
export class PerpsGatewayError extends BaseError {
  override name = 'Perps.GatewayError';
  /**
   * EIP-1474 -32003 "transaction rejected": the venue refused; a client's automatic retry is not sent again blindly.
   */
  static override readonly code: number | undefined = -32003;
  readonly status: number;
  readonly error: string;
  readonly transferId: number | undefined;
  readonly withdrawId: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(o: { status: number; error: string; transferId?: number; withdrawId?: number; retryAfterMs?: number }) {
    super(describe(o.status, o.error), { details: o.error });
    this.status = o.status;
    this.error = o.error;
    this.transferId = o.transferId;
    this.withdrawId = o.withdrawId;
    this.retryAfterMs = o.retryAfterMs;
  }
}

/** 429 from the gateway: over the request- or action-weight budget. */
export class PerpsRateLimitedError extends PerpsGatewayError {
  override name = 'Perps.RateLimitedError';
  /** EIP-1474 -32002 "resource unavailable" (not -32005 / 429, which dapp libraries retry at once). */
  static override readonly code: number | undefined = -32002;
}

function describe(status: number, error: string): string {
  if (status === 429) return 'The gateway is rate limiting this account; wait before sending more.';
  if (error === 'insufficient_margin') return 'Insufficient margin for this command.';
  if (status === 401 || status === 403) return `The gateway refused the signature or credentials (${error}).`;
  return `The gateway refused the command (${error || `HTTP ${status}`}).`;
}

const errBodySchema = v.looseObject({
  status: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  transfer_id: v.optional(v.unknown()),
  withdraw_id: v.optional(v.unknown()),
});

/**
 * Returns a `PerpsGatewayError` when the answer is a failure (non-2xx, or a body with `status: "err"`),
 * `undefined` when it succeeded.
 */
export function classifyPerpsAnswer(answer: HttpAnswer, nowMs = Date.now()): PerpsGatewayError | undefined {
  const parsed = v.safeParse(errBodySchema, answer.body);
  const body = parsed.success ? parsed.output : {};
  const isErr = answer.status < 200 || answer.status >= 300 || body.status === 'err';
  if (!isErr) return undefined;
  // The gateway's error value is shown only in the venue's shape (a snake_case code); any other text is
  // the gateway's words, not shown (venue-text): the message still says the command was refused.
  const error = perpsErrorCode(body.error) ?? (body.error === undefined || body.error === '' ? '' : UNSHOWN_ERROR);
  const int = (x: unknown) => (typeof x === 'number' && Number.isSafeInteger(x) ? x : undefined);
  const transferId = int(body.transfer_id);
  const withdrawId = int(body.withdraw_id);
  const retryAfterMs = parseRetryAfterMs(headerOf(answer.headers, 'Retry-After'), nowMs);
  const o = {
    status: answer.status,
    error,
    ...(transferId === undefined ? {} : { transferId }),
    ...(withdrawId === undefined ? {} : { withdrawId }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
  return answer.status === 429 ? new PerpsRateLimitedError(o) : new PerpsGatewayError(o);
}
