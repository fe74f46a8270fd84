import { describe, expect, it } from 'vitest';
import { classifyPerpsAnswer, PerpsGatewayError, PerpsRateLimitedError } from './errors';

describe('classifyPerpsAnswer', () => {
  it('passes ok answers through', () => {
    expect(classifyPerpsAnswer({ status: 200, body: [{ status: 'ok', oid: 1 }] })).toBeUndefined();
    expect(classifyPerpsAnswer({ status: 200, body: { status: 'ok', transfer_id: 3 } })).toBeUndefined();
  });

  it('reads { status: "err", error } with the id of a failed transfer or withdraw', () => {
    const err = classifyPerpsAnswer({
      status: 400,
      body: { status: 'err', error: 'insufficient_margin', withdraw_id: 9 },
    })!;
    expect(err).toBeInstanceOf(PerpsGatewayError);
    expect(err.error).toBe('insufficient_margin');
    expect(err.withdrawId).toBe(9);
    expect(err.shortMessage).toBe('Insufficient margin for this command.');
  });

  it('treats status "err" in a 200 as a failure', () => {
    expect(
      classifyPerpsAnswer({ status: 200, body: { status: 'err', error: 'insufficient_margin', transfer_id: 4 } })!
        .transferId,
    ).toBe(4);
  });

  it('429 reads Retry-After', () => {
    const err = classifyPerpsAnswer({
      status: 429,
      headers: { 'Retry-After': '2' },
      body: { status: 'err', error: 'rate_limited' },
    })!;
    expect(err).toBeInstanceOf(PerpsRateLimitedError);
    expect(err.retryAfterMs).toBe(2000);
  });
});
