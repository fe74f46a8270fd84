/**
 * The venue's words in the perps answers, at the boundary: an instruments symbol that breaks the
 * venue-text rules is unset (every surface then names the instrument `instrument #<id>`), also when the
 * answer is parsed again past the background (the popup, the approval window); a portfolio read's
 * symbol is dropped (positions are named through the instruments read).
 */
import { describe, expect, it } from 'vitest';
import { parsePerpsAnswer } from './wire';
import { instrumentLabel } from '../validation/venue-text';

const row = (instrument_id: number, symbol: string) => ({
  instrument_id,
  symbol,
  price_decimals: 1,
  quantity_decimals: 3,
  max_leverage: 50,
});

describe('perps answers', () => {
  it('a refused instruments symbol is unset, and the answer parses again as it is (background, then popup)', () => {
    const once = parsePerpsAnswer('instruments', [row(1, 'ETH-PERP\u202E'), row(2, 'ETH-PERP')]);
    expect(once.map((i) => i.symbol)).toEqual([undefined, 'ETH-PERP']);
    const twice = parsePerpsAnswer('instruments', once);
    expect(twice).toEqual(once);
    expect(twice.map((i) => instrumentLabel(i.instrument_id, i.symbol))).toEqual(['instrument #1', 'ETH-PERP (#2)']);
  });

  it('a symbol two instruments share is unset for both', () => {
    expect(parsePerpsAnswer('instruments', [row(1, 'BTC-PERP'), row(2, 'BTC-PERP')]).map((i) => i.symbol)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it("a portfolio read's position symbol is dropped: a position carries only the instrument id it stands for", () => {
    const position = {
      instrument_id: 1,
      symbol: 'ETH-PERP',
      size: '0.5',
      entry_price: '65000',
      leverage: 10,
      cross: true,
      initial_margin: '1',
      maintenance_margin: '1',
      position_value: '1',
      liquidation_price: '0',
      unrealized_pnl: '0',
      return_on_equity: '0',
      cumulative_funding: '0',
    };
    const margin = {
      total_account_value: '1',
      total_initial_margin: '0',
      total_maintenance_margin: '0',
      total_position_value: '0',
    };
    const [p] = parsePerpsAnswer('portfolio', { positions: [position], margin, withdrawable: '1' }).positions;
    expect(p).not.toHaveProperty('symbol');
    expect(p!.instrument_id).toBe(1);
  });
});
