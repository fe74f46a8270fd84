import { describe, expect, it } from 'vitest';
import {
  ClobCancelOnlyError,
  ClobInvalidL1HeadersError,
  ClobMalformedAnswerError,
  ClobNotFoundError,
  ClobOrderRejectedError,
  ClobPostOnlyModeError,
  ClobRateLimitedError,
  ClobRestartingError,
  ClobServerError,
  ClobTradingDisabledError,
  ClobUnauthorizedError,
  classifyClobAnswer,
  parseBatchResults,
} from './errors';

describe('classifyClobAnswer', () => {
  it('passes 2xx through', () => {
    expect(classifyClobAnswer({ status: 200, body: [] })).toBeUndefined();
  });

  it('tells L1 from L2 401s', () => {
    expect(classifyClobAnswer({ status: 401, body: { error: 'Invalid L1 Request headers' } })).toBeInstanceOf(
      ClobInvalidL1HeadersError,
    );
    expect(classifyClobAnswer({ status: 401, body: { error: 'Unauthorized/Invalid api key' } })).toBeInstanceOf(
      ClobUnauthorizedError,
    );
  });

  it('425 restarting and 429 throttled are retryable; 429 reads Retry-After', () => {
    const restarting = classifyClobAnswer({ status: 425, body: { error: 'Matching engine restarting' } })!;
    expect(restarting).toBeInstanceOf(ClobRestartingError);
    expect(restarting.retryable).toBe(true);
    const throttled = classifyClobAnswer({
      status: 429,
      headers: { 'retry-after': '3' },
      body: { error: 'Too Many Requests' },
    })!;
    expect(throttled).toBeInstanceOf(ClobRateLimitedError);
    expect(throttled.retryAfterMs).toBe(3000);
  });

  it('tells the three 503 modes apart', () => {
    const postOnly = classifyClobAnswer({
      status: 503,
      headers: new Headers({ 'Retry-After': '60' }),
      body: { error: 'Exchange is in post-only mode', code: 'post_only_mode', retry_after_seconds: 42 },
    })!;
    expect(postOnly).toBeInstanceOf(ClobPostOnlyModeError);
    expect(postOnly.retryAfterMs).toBe(42_000);
    const headerOnly = classifyClobAnswer({
      status: 503,
      headers: { 'Retry-After': '60' },
      body: { error: 'x', code: 'post_only_mode' },
    })!;
    expect(headerOnly.retryAfterMs).toBe(60_000);
    expect(
      classifyClobAnswer({
        status: 503,
        body: { error: 'Trading is currently cancel-only. New orders are not accepted' },
      }),
    ).toBeInstanceOf(ClobCancelOnlyError);
    const disabled = classifyClobAnswer({ status: 503, body: { error: 'Trading is currently disabled' } })!;
    expect(disabled).toBeInstanceOf(ClobTradingDisabledError);
    expect(disabled.retryable).toBe(false);
  });

  it('400 order errors, 404, 500 order timed out (safe to resubmit) vs other 500s', () => {
    const rejected = classifyClobAnswer({ status: 400, body: { error: 'price breaks minimum tick size rule' } })!;
    expect(rejected).toBeInstanceOf(ClobOrderRejectedError);
    expect(rejected.shortMessage).toContain('minimum tick size');
    expect(classifyClobAnswer({ status: 404, body: { error: 'market not found' } })).toBeInstanceOf(ClobNotFoundError);
    const timedOut = classifyClobAnswer({ status: 500, body: { error: 'order timed out' } })!;
    expect(timedOut).toBeInstanceOf(ClobServerError);
    expect(timedOut.retryable).toBe(true);
    expect(classifyClobAnswer({ status: 500, body: { error: 'Internal server error' } })!.retryable).toBe(false);
  });

  it('survives a non-JSON body', () => {
    expect(classifyClobAnswer({ status: 502, body: '<html>bad gateway</html>' })).toBeInstanceOf(ClobServerError);
  });
});

describe('parseBatchResults', () => {
  it('splits per-order errorMsg inside a 200 array', () => {
    const results = parseBatchResults([
      { errorMsg: '', orderID: '0xa', takingAmount: '0', makingAmount: '5600000', status: 'live', success: true },
      { errorMsg: 'invalid post-only order: order crosses book', orderID: '', status: '', success: false },
    ]);
    expect(results[0]).toMatchObject({ ok: true, orderID: '0xa', status: 'live' });
    expect(results[1]!.ok).toBe(false);
    if (!results[1]!.ok) expect(results[1]!.error.exchangeMessage).toContain('crosses book');
  });

  it('refuses a malformed answer or a length mismatch', () => {
    expect(() => parseBatchResults({ not: 'an array' })).toThrow(ClobMalformedAnswerError);
    expect(() => parseBatchResults([{ errorMsg: '' }], 2)).toThrow(ClobMalformedAnswerError);
  });
});
