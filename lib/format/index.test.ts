import { describe, expect, it } from 'vitest';
import { cumulative, fillSummary, formatStep, formatUsdc, groupDecimal, spreadText } from './index';

describe('formatStep', () => {
  it("shows BTC's 0.5 tick as such: snapped to the nearest half and one decimal", () => {
    expect(formatStep('65005.83333333', '0.5')).toBe('65,006.0');
    expect(formatStep('65005.6', '0.5')).toBe('65,005.5');
    expect(formatStep('32025.25547131', '0.5')).toBe('32,025.5');
    expect(formatStep('65000', '0.5')).toBe('65,000.0');
  });
  it('shows as many decimals as the step has (trailing zeros of the step ignored)', () => {
    expect(formatStep('1.5', '0.010')).toBe('1.50');
    expect(formatStep('1.5', '1')).toBe('2');
  });
  it('rounds sizes to the lot and keeps the sign', () => {
    expect(formatStep('0.1234', '0.001')).toBe('0.123');
    expect(formatStep('-5', '0.01')).toBe('-5.00');
    expect(formatStep('2', '1')).toBe('2');
  });
  it('leaves a non-decimal untouched', () => {
    expect(formatStep('…', '0.5')).toBe('…');
  });
});

describe('formatUsdc', () => {
  it('shows two decimals, separators and the unit', () => {
    expect(formatUsdc('374.58')).toBe('374.58 USDC');
    expect(formatUsdc('-3.125')).toBe('-3.13 USDC');
    expect(formatUsdc('1234567.1')).toBe('1,234,567.10 USDC');
    expect(formatUsdc('-0.001')).toBe('0.00 USDC');
  });
});

describe('spreadText', () => {
  it('gives the spread in ticks and basis points of the mid', () => {
    expect(spreadText('65005', '65000', '0.5')).toEqual({ spread: '5.0', ticks: '10', bp: '0.8' });
    expect(spreadText('3000.1', '3000', '0.01')).toEqual({ spread: '0.10', ticks: '10', bp: '0.3' });
  });
  it('has nothing without both sides', () => {
    expect(spreadText(undefined, '1', '0.1')).toBeUndefined();
  });
});

describe('cumulative', () => {
  it('sums the quantities down the book exactly', () => {
    expect(
      cumulative([
        ['1', '0.1'],
        ['2', '0.2'],
        ['3', '0.25'],
      ]),
    ).toEqual(['0.10', '0.30', '0.55']);
  });
});

describe('groupDecimal', () => {
  it('groups thousands', () => expect(groupDecimal('-1234.5')).toBe('-1,234.5'));
});

describe('fillSummary', () => {
  it("averages an order's fills by quantity and sums their fees", () => {
    const fills = [
      { order_id: 7, price: '65005', quantity: '1', fee: '32.5025' },
      { order_id: 7, price: '65010', quantity: '0.5', fee: '16.2525' },
      { order_id: 8, price: '1', quantity: '100', fee: '1' },
    ];
    expect(fillSummary(fills, 7, '0.5')).toEqual({ avgPrice: '65,006.5', fee: '48.76 USDC' });
    expect(fillSummary(fills, 9, '0.5')).toBeUndefined();
  });
});
