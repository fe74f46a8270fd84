/**
 * What the words take from a venue's `instruments` answer: unique, well-formed symbols, and ticks and lots that are
 * positive decimal strings (or come from the seed's decimals) — anything else is left out, never shown.
 */
import { describe, expect, it } from 'vitest';
import { instrumentSteps, instrumentSymbols } from './venue-text';

describe("an instruments answer's words", () => {
  it('takes tick_size / lot_size when they are positive decimal strings, else the decimals, else nothing', () => {
    const steps = instrumentSteps([
      { instrument_id: 1, tick_size: '0.5', lot_size: '0.001', price_decimals: 2, quantity_decimals: 3 },
      { instrument_id: 2, price_decimals: 2, quantity_decimals: 0 },
      { instrument_id: 3, tick_size: 0.01, lot_size: '0', price_decimals: 40, quantity_decimals: -1 },
      { instrument_id: 4, tick_size: '1e-2', lot_size: '0.01<script>' },
    ]);
    expect(Object.fromEntries(steps)).toEqual({
      1: { tick: '0.5', lot: '0.001' },
      2: { tick: '0.01', lot: '1' },
      3: {},
      4: {},
    });
  });

  it('names an instrument only by a symbol no other instrument of the answer has', () => {
    const symbols = instrumentSymbols([
      { instrument_id: 1, symbol: 'BTC-PERP' },
      { instrument_id: 2, symbol: 'ETH-PERP' },
      { instrument_id: 3, symbol: 'ETH-PERP' },
    ]);
    expect(Object.fromEntries(symbols)).toEqual({ 1: 'BTC-PERP' });
  });
});
