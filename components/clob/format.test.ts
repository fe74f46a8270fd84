import { describe, expect, it } from 'vitest';
import { tradeTime } from './ClobAccount';

describe('tradeTime', () => {
  it('shows a trade time (Unix seconds) as UTC month-day hour:minute', () => {
    expect(tradeTime('1700000000')).toBe('11-14 22:13');
  });
});
