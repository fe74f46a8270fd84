/**
 * Classification of order-book exchange answers into typed errors (seed "Errors" and "States and
 * transitions"; PROTOCOL.md §2.4). `retryable` says whether sending the *same* signed request again is
 * allowed; `retryAfterMs` when the exchange said how long to wait.
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { headerOf, parseRetryAfterMs, type HttpAnswer } from '../http/retry-after';
import { UNSHOWN_VENUE_TEXT, venueText } from '../validation/venue-text';

/**
 * Base of every order-book exchange error. `status` is the HTTP status; `exchangeMessage` the exchange's `error` text.
 */
export class ClobError extends BaseError {
  override name = 'ClobError';
  /** EIP-1474 -32003 "transaction rejected": the exchange refused; never -32603, which dapp libraries retry. */
  static override readonly code: number | undefined = -32003;
  readonly status: number;
  readonly exchangeMessage: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(
    shortMessage: string,
    o: { status: number; exchangeMessage: string; retryable?: boolean; retryAfterMs?: number | undefined },
  ) {
    super(shortMessage, {
      details: o.exchangeMessage || undefined,
      ...(o.retryAfterMs === undefined ? {} : { data: { retryAfterMs: o.retryAfterMs } }),
    });
    this.status = o.status;
    this.exchangeMessage = o.exchangeMessage;
    this.retryable = o.retryable ?? false;
    this.retryAfterMs = o.retryAfterMs;
  }
}

/** 401: invalid or missing API key, or a bad L2 signature. */
export class ClobUnauthorizedError extends ClobError {
  override name = 'Clob.UnauthorizedError';
}
/** 401 `Invalid L1 Request headers`: the ClobAuth signature, address, timestamp or nonce was refused. */
export class ClobInvalidL1HeadersError extends ClobError {
  override name = 'Clob.InvalidL1HeadersError';
}
/** 425: the matching engine is restarting; retry with exponential backoff and jitter. */
export class ClobRestartingError extends ClobError {
  override name = 'Clob.RestartingError';
  /** EIP-1474 -32002 "resource unavailable" (not -32005 / 429, which dapp libraries retry at once). */
  static override readonly code: number | undefined = -32002;
}
/** 429: throttled; back off exponentially. */
export class ClobRateLimitedError extends ClobError {
  override name = 'Clob.RateLimitedError';
  /** EIP-1474 -32002 "resource unavailable" (not -32005 / 429, which dapp libraries retry at once). */
  static override readonly code: number | undefined = -32002;
}
/** 503: trading disabled — no orders, no cancels. Do not retry orders. */
export class ClobTradingDisabledError extends ClobError {
  override name = 'Clob.TradingDisabledError';
}
/** 503: cancel-only mode — new orders refused, cancels allowed. Do not retry orders. */
export class ClobCancelOnlyError extends ClobError {
  override name = 'Clob.CancelOnlyError';
}
/** 503 `code: "post_only_mode"`: only post-only orders and cancels pass until `retryAfterMs`. */
export class ClobPostOnlyModeError extends ClobError {
  override name = 'Clob.PostOnlyModeError';
}
/** 400: the order or request was refused (tick size, minimum size, balance, crosses the book, …). */
export class ClobOrderRejectedError extends ClobError {
  override name = 'Clob.OrderRejectedError';
}
/** 404: no order book / market for the token. */
export class ClobNotFoundError extends ClobError {
  override name = 'Clob.NotFoundError';
}
/** 5xx other than 503. `retryable` only for "order timed out", which is safe to resubmit unchanged. */
export class ClobServerError extends ClobError {
  override name = 'Clob.ServerError';
  /** EIP-1474 -32002: the exchange failed; the outcome may be unknown (never -32603, which dapp libraries retry). */
  static override readonly code: number | undefined = -32002;
}

const errorBodySchema = v.looseObject({
  error: v.optional(v.unknown()),
  errorMsg: v.optional(v.unknown()),
  code: v.optional(v.unknown()),
  retry_after_seconds: v.optional(v.unknown()),
});

/** What stands for an exchange error text out of the venue-text rules (not shown). */
const UNSHOWN_EXCHANGE_TEXT = `(${UNSHOWN_VENUE_TEXT})`;

/**
 * The exchange's error text as it may be shown (venue-text: printable ASCII, at most 300 characters),
 * `UNSHOWN_EXCHANGE_TEXT` for any other text, `''` for none. The words stay the exchange's claim: every
 * message built on them first says the exchange refused.
 */
function exchangeText(raw: unknown): string {
  if (raw === undefined || raw === null || raw === '') return '';
  return venueText(raw, { max: 300 }) ?? UNSHOWN_EXCHANGE_TEXT;
}

function messageOf(body: unknown): { message: string; code?: string; retryAfterSeconds?: number } {
  if (typeof body === 'string') return { message: exchangeText(body) };
  const parsed = v.safeParse(errorBodySchema, body);
  if (!parsed.success) return { message: '' };
  const b = parsed.output;
  const raw = typeof b.error === 'string' ? b.error : typeof b.errorMsg === 'string' ? b.errorMsg : '';
  return {
    message: exchangeText(raw),
    ...(typeof b.code === 'string' ? { code: b.code } : {}),
    ...(typeof b.retry_after_seconds === 'number' &&
    Number.isFinite(b.retry_after_seconds) &&
    b.retry_after_seconds >= 0
      ? { retryAfterSeconds: b.retry_after_seconds }
      : {}),
  };
}

/**
 * Returns the typed error for a non-2xx exchange answer, or `undefined` for a 2xx one.
 * - 401 → `ClobInvalidL1HeadersError` (message names L1) or `ClobUnauthorizedError`;
 * - 425 → `ClobRestartingError` (retryable);
 * - 429 → `ClobRateLimitedError` (retryable, `Retry-After`);
 * - 503 → `ClobPostOnlyModeError` (`code: post_only_mode`, `retry_after_seconds` or `Retry-After`),
 *   `ClobCancelOnlyError` (message mentions cancel-only) or `ClobTradingDisabledError`;
 * - 400 → `ClobOrderRejectedError`; 404 → `ClobNotFoundError`;
 * - other 5xx → `ClobServerError` (retryable only for "order timed out").
 */
export function classifyClobAnswer(answer: HttpAnswer, nowMs = Date.now()): ClobError | undefined {
  const { status } = answer;
  if (status >= 200 && status < 300) return undefined;
  const { message, code, retryAfterSeconds } = messageOf(answer.body);
  const headerMs = parseRetryAfterMs(headerOf(answer.headers, 'Retry-After'), nowMs);
  const retryAfterMs = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : headerMs;
  const base = { status, exchangeMessage: message };
  switch (status) {
    case 401:
      return /L1/i.test(message)
        ? new ClobInvalidL1HeadersError('The exchange refused the wallet signature (L1 headers).', base)
        : new ClobUnauthorizedError('The exchange refused the API credentials.', base);
    case 425:
      return new ClobRestartingError('The matching engine is restarting; retrying shortly.', {
        ...base,
        retryable: true,
        retryAfterMs,
      });
    case 429:
      const wait =
        retryAfterMs === undefined
          ? 'slowing down'
          : Number.isFinite(retryAfterMs)
            ? `the exchange asks to wait ${Math.ceil(retryAfterMs / 1000)} s`
            : 'the exchange asks to wait';
      return new ClobRateLimitedError(`Too many requests; ${wait}.`, { ...base, retryable: true, retryAfterMs });
    case 503:
      if (code === 'post_only_mode') {
        const wait =
          retryAfterMs === undefined ? '' : ` Normal trading resumes in about ${Math.ceil(retryAfterMs / 1000)} s.`;
        return new ClobPostOnlyModeError(
          `The exchange is in post-only mode: only post-only orders and cancels are accepted.${wait}`,
          {
            ...base,
            retryAfterMs,
          },
        );
      }
      if (/cancel[\s_-]?only/i.test(message)) {
        return new ClobCancelOnlyError(
          'The exchange is cancel-only: new orders are refused, cancels are allowed.',
          base,
        );
      }
      return new ClobTradingDisabledError(
        'Trading is disabled on the exchange: no orders or cancels are accepted.',
        base,
      );
    case 400:
      return new ClobOrderRejectedError(
        message ? `The exchange refused the order: ${message}` : 'The exchange refused the request.',
        base,
      );
    case 404:
      return new ClobNotFoundError(message ? `Not found: ${message}` : 'Not found.', base);
    default:
      if (status >= 500) {
        const timedOut = /order timed out/i.test(message);
        return new ClobServerError(
          timedOut
            ? 'The order timed out at the exchange; it is safe to resubmit.'
            : 'The exchange had an internal error.',
          { ...base, retryable: timedOut },
        );
      }
      return new ClobError(`The exchange answered HTTP ${status}.`, base);
  }
}

/** One element of a `POST /orders` 200 array (seed "Batch order result item"). */
export type BatchOrderResult =
  | { ok: true; orderID: string; status: string; takingAmount: string; makingAmount: string }
  | { ok: false; orderID: string; error: ClobOrderRejectedError };

const batchItemSchema = v.looseObject({
  errorMsg: v.optional(v.string()),
  orderID: v.optional(v.string()),
  takingAmount: v.optional(v.string()),
  makingAmount: v.optional(v.string()),
  status: v.optional(v.string()),
  success: v.optional(v.boolean()),
});

/** Thrown when the exchange's 200 batch answer does not have the seed's shape. */
export class ClobMalformedAnswerError extends ClobError {
  override name = 'Clob.MalformedAnswerError';
}

/**
 * Splits a 200 batch placement answer into per-order results: an item whose `errorMsg` is non-empty
 * or whose `success` is false is a `ClobOrderRejectedError`. Throws `ClobMalformedAnswerError` when the
 * answer is not an array of result items (or its length differs from `expected`, when given).
 */
export function parseBatchResults(body: unknown, expected?: number): BatchOrderResult[] {
  const parsed = v.safeParse(v.array(batchItemSchema), body);
  if (!parsed.success || (expected !== undefined && parsed.output.length !== expected)) {
    throw new ClobMalformedAnswerError('The exchange answered the batch in an unexpected shape.', {
      status: 200,
      exchangeMessage: '',
    });
  }
  return parsed.output.map((item) => {
    const orderID = item.orderID ?? '';
    if ((item.errorMsg && item.errorMsg.length > 0) || item.success === false) {
      const msg = exchangeText(item.errorMsg);
      return {
        ok: false as const,
        orderID,
        error: new ClobOrderRejectedError(
          msg ? `The exchange refused the order: ${msg}` : 'The exchange refused the order.',
          {
            status: 200,
            exchangeMessage: msg,
          },
        ),
      };
    }
    return {
      ok: true as const,
      orderID,
      status: item.status ?? '',
      takingAmount: item.takingAmount ?? '0',
      makingAmount: item.makingAmount ?? '0',
    };
  });
}
