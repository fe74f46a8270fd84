import { describe, expect, it } from 'vitest';
import { formatChange } from './TickerLine';
import { orderPriceText, orderSizeText } from './OpenOrders';
import { presetLabel } from './SizePriceInputs';
import { submitLabel } from './TicketFooter';
import { asTimeInForce } from './OrderFlags';

describe('perps ticket formatting', () => {
  it('signs the 24 h change', () => {
    expect(formatChange(1.254)).toBe('+1.25%');
    expect(formatChange(-0.4)).toBe('-0.40%');
  });
  it('says where an open order sits', () => {
    expect(orderPriceText({ price: '0', tpsl: { kind: 'sl', trp: '95000' } })).toBe('stop 95000');
    expect(orderPriceText({ price: '0', tpsl: { kind: 'tp', trp: '110000' } })).toBe('take-profit 110000');
    expect(orderPriceText({ price: '0' })).toBe('market');
    expect(orderPriceText({ price: '100.5' })).toBe('100.5');
  });
  it('shows a waiting trigger order by its whole quantity, else what rests', () => {
    expect(orderSizeText({ tpsl: { kind: 'tp', trp: '110000' }, quantity: '2', resting_quantity: '0' })).toBe('2');
    expect(orderSizeText({ quantity: '2', resting_quantity: '1.5' })).toBe('1.5');
  });
  it('labels presets and the submit button', () => {
    expect(presetLabel('0.25')).toBe('25%');
    expect(submitLabel({ buy: false, contracts: '', symbol: 'BTC-PERP', price: '' })).toBe('Sell … BTC-PERP at market');
    expect(submitLabel({ buy: true, contracts: '0.01', symbol: 'BTC-PERP', price: '100' })).toBe(
      'Buy 0.01 BTC-PERP @ 100',
    );
  });
  it('accepts only known times in force', () => {
    expect(asTimeInForce('fok')).toBe('fok');
    expect(asTimeInForce('day')).toBeUndefined();
  });
});
