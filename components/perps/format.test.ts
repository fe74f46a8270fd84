import { describe, expect, it } from 'vitest';
import { formatChange } from './TickerLine';
import { presetLabel } from './SizePriceInputs';
import { asTimeInForce } from './OrderFlags';

describe('perps ticket formatting', () => {
  it('signs the 24 h change', () => {
    expect(formatChange(1.254)).toBe('+1.25%');
    expect(formatChange(-0.4)).toBe('-0.40%');
  });
  it('labels presets', () => {
    expect(presetLabel('0.25')).toBe('25%');
  });
  it('accepts only known times in force', () => {
    expect(asTimeInForce('fok')).toBe('fok');
    expect(asTimeInForce('day')).toBeUndefined();
  });
});
