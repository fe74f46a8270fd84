import { describe, expect, it } from 'vitest';
import { commandFromBody, createOrders, isWholePositionLeg, type PerpsOrderInput } from './commands';
import { hashPerpsOp } from './signing';
import { InvalidFieldError } from '../validation';
import { describePerpsCommand, perpsCommandOrderWords, perpsOrderWords } from './words';

/**
 * The legs the perps SDK's `placePositionTpSl` sends for a long (exit side sell): quantity "0", market, reduce-only.
 */
const leg = (tpsl: 'tp' | 'sl', trp: string, over: Partial<PerpsOrderInput> = {}): PerpsOrderInput => ({
  iid: 1,
  buy: false,
  qty: '0',
  ro: true,
  tr: { tpsl, trp, market: true },
  ...over,
});

const fieldOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    if (err instanceof InvalidFieldError) return `${err.field}: ${err.reason}`;
    throw err;
  }
  return undefined;
};

describe('a position group protects the whole position as the SDK signs it', () => {
  it('signs the SDK tuple: [iid, buy, -, "0", -, false, true, -, [true, trp, kind]] with group "position"', () => {
    const cmd = createOrders({ orders: [leg('tp', '110000'), leg('sl', '90000')], group: 'position' });
    expect(cmd.op).toEqual([
      'createOrders',
      [
        [1, false, undefined, '0', undefined, false, true, undefined, [true, '110000', 'tp']],
        [1, false, undefined, '0', undefined, false, true, undefined, [true, '90000', 'sl']],
      ],
      'position',
    ]);
    expect(cmd.body).toEqual({
      type: 'createOrders',
      args: [
        { iid: 1, buy: false, qty: '0', po: false, ro: true, tr: { tpsl: 'tp', trp: '110000', market: true } },
        { iid: 1, buy: false, qty: '0', po: false, ro: true, tr: { tpsl: 'sl', trp: '90000', market: true } },
      ],
      grp: 'position',
    });
    expect(cmd.body.type === 'createOrders' && cmd.body.args.every(isWholePositionLeg)).toBe(true);
  });

  it('reads the same command back from the body a page sends', () => {
    const cmd = createOrders({ orders: [leg('sl', '90000')], group: 'position' });
    const back = commandFromBody(cmd.body);
    expect(back.op).toEqual(cmd.op);
    expect(hashPerpsOp(back.op)).toBe(hashPerpsOp(cmd.op));
  });

  it.each([
    [
      'a zero quantity outside a position group',
      { orders: [leg('sl', '90000')] },
      'orders[0].qty: must be greater than zero',
    ],
    [
      'a zero quantity in an order group',
      { orders: [leg('sl', '90000')], group: 'order' },
      'orders[0].qty: must be greater than zero',
    ],
    ['a sized leg', { orders: [leg('sl', '90000', { qty: '0.5' })], group: 'position' }, 'orders[0].qty'],
    ['"0.0" instead of "0"', { orders: [leg('sl', '90000', { qty: '0.0' })], group: 'position' }, 'orders[0].qty'],
    ['a plain order', { orders: [{ iid: 1, buy: false, qty: '0', tif: 'ioc' }], group: 'position' }, 'orders[0].tr'],
    [
      'a limit trigger',
      { orders: [leg('sl', '90000', { p: '89000', tr: { tpsl: 'sl', trp: '90000' } })], group: 'position' },
      'orders[0].tr.market',
    ],
    ['a price on a market leg', { orders: [leg('sl', '90000', { p: '89000' })], group: 'position' }, 'orders[0].p'],
    [
      'a leg that is not reduce-only',
      { orders: [leg('sl', '90000', { ro: false })], group: 'position' },
      'orders[0].ro',
    ],
    [
      'two instruments',
      { orders: [leg('tp', '110000'), leg('sl', '90000', { iid: 2 })], group: 'position' },
      'orders[1].iid',
    ],
    [
      'two sides',
      { orders: [leg('tp', '110000'), leg('sl', '90000', { buy: true })], group: 'position' },
      'orders[1].buy',
    ],
    ['two stop-losses', { orders: [leg('sl', '91000'), leg('sl', '90000')], group: 'position' }, 'orders[1].tr.tpsl'],
    [
      'a group the venue does not know',
      { orders: [leg('sl', '90000')], group: 'normalTpsl' },
      'group: must be "order" or "position"',
    ],
  ])('refuses %s, naming the field', (_, input, field) => {
    expect(fieldOf(() => createOrders(input as Parameters<typeof createOrders>[0]))).toContain(field);
  });

  it('names the body path when a page sends a sized leg in a position group', () => {
    const op = {
      type: 'createOrders',
      args: [{ iid: 1, buy: false, qty: '1', po: false, ro: true, tr: { tpsl: 'sl', trp: '90000', market: true } }],
      grp: 'position',
    };
    expect(fieldOf(() => commandFromBody(op))).toMatch(/^op\.args\[0\]\.qty: must be "0"/);
  });
});

describe('the words of a leg protecting the whole position', () => {
  const symbol = () => 'BTC-PERP (#1)';
  it('never show the signed quantity "0" as a size, in the window\'s numbers and in its lines', () => {
    const cmd = createOrders({ orders: [leg('sl', '50000')], group: 'position' });
    const o = cmd.body.type === 'createOrders' ? cmd.body.args[0]! : leg('sl', '0');
    const words = perpsOrderWords({
      buy: o.buy,
      qty: o.qty,
      symbol: 'BTC-PERP (#1)',
      po: false,
      ro: true,
      trigger: { kind: 'sl', trp: '50000', market: true, whole: true },
      tick: '0.5',
      lot: '0.001',
    });
    expect(words.line).toBe(
      'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market ' +
        'when the mark reaches 50,000.0, reduce-only',
    );
    expect(words.notes).toEqual([]);
    expect(perpsCommandOrderWords(cmd, symbol)?.line).toBe(words.line.replace(/\.0,/, ','));
    expect(describePerpsCommand(cmd, symbol)).toEqual({
      title: 'Protect a position',
      lines: [
        'Stop-loss: sell what the whole BTC-PERP (#1) position holds at market ' +
          'when the mark reaches 50,000, reduce-only',
        '— request weight 1, action weight 1',
      ],
    });
  });
});
