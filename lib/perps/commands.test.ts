import { describe, expect, it } from 'vitest';
import {
  autoCancel,
  assertAutoCancelTime,
  cancelAll,
  cancelOrders,
  cancelOrdersCOID,
  commandFromBody,
  createOrders,
  createProxy,
  deleteProxy,
  internalTransfer,
  updateLeverage,
  updateMargin,
  withdraw,
  PERPS_MAX_BATCH,
} from './commands';
import { InvalidFieldError } from '../validation';

const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';
const USDC = '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB';
const COID = '0123456789abcdef0123456789abcdef';

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidFieldError);
    return (err as InvalidFieldError).field;
  }
  throw new Error('expected a rejection');
}

describe('createOrders', () => {
  it('builds the 9-slot tuple and the named body for a post-only gtc limit order', () => {
    const cmd = createOrders({
      orders: [{ iid: 7, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true, c: COID }],
    });
    expect(cmd.op).toEqual(['createOrders', [[7, true, '3120.50', '2.5', 'gtc', true, undefined, COID, undefined]]]);
    expect(cmd.body).toEqual({
      type: 'createOrders',
      args: [{ iid: 7, buy: true, p: '3120.50', qty: '2.5', tif: 'gtc', po: true, c: COID }],
    });
    expect(cmd.signer).toBe('proxy');
    expect(cmd.endpoint).toEqual({ method: 'POST', path: '/v1/trade/orders' });
    expect(cmd.weight).toEqual({ request: 1, action: 1 });
  });

  it('builds a market-style ioc sell without price, with reduce-only', () => {
    const cmd = createOrders({ orders: [{ iid: 1, buy: false, qty: '0.1', tif: 'ioc', ro: true }] });
    expect(cmd.op).toEqual(['createOrders', [[1, false, undefined, '0.1', 'ioc', false, true, undefined, undefined]]]);
    expect(cmd.body.args).toEqual([{ iid: 1, buy: false, qty: '0.1', tif: 'ioc', po: false, ro: true }]);
  });

  it('drops ro: false from tuple and body (never signs false)', () => {
    const cmd = createOrders({ orders: [{ iid: 1, buy: true, qty: '1', p: '1', tif: 'gtc', ro: false }] });
    expect((cmd.op[1] as unknown[][])[0]![6]).toBeUndefined();
    expect(cmd.body.args).toEqual([{ iid: 1, buy: true, p: '1', qty: '1', tif: 'gtc', po: false }]);
  });

  it('builds trigger orders with [market?, trp, kind] and no tif', () => {
    const cmd = createOrders({
      orders: [
        { iid: 2, buy: false, qty: '1', tr: { tpsl: 'sl', trp: '2900', market: true } },
        { iid: 2, buy: false, qty: '1', p: '3300', tr: { tpsl: 'tp', trp: '3310' } },
      ],
      group: 'order',
    });
    expect(cmd.op).toEqual([
      'createOrders',
      [
        [2, false, undefined, '1', undefined, false, undefined, undefined, [true, '2900', 'sl']],
        [2, false, '3300', '1', undefined, false, undefined, undefined, ['3310', 'tp']],
      ],
      'order',
    ]);
    expect(cmd.body).toEqual({
      type: 'createOrders',
      args: [
        { iid: 2, buy: false, qty: '1', po: false, tr: { tpsl: 'sl', trp: '2900', market: true } },
        { iid: 2, buy: false, p: '3300', qty: '1', po: false, tr: { tpsl: 'tp', trp: '3310' } },
      ],
      grp: 'order',
    });
    expect(cmd.weight).toEqual({ request: 1, action: 2 });
  });

  it('weighs 20 orders as request 2, action 20', () => {
    const orders = Array.from({ length: 20 }, (_, i) => ({ iid: i, buy: true, qty: '1', p: '1', tif: 'gtc' as const }));
    expect(createOrders({ orders }).weight).toEqual({ request: 2, action: 20 });
  });

  it.each([
    ['an exponent', { qty: '1e2' }, 'orders[0].qty'],
    ['a plus sign', { qty: '+1' }, 'orders[0].qty'],
    ['a trailing space', { qty: '1 ' }, 'orders[0].qty'],
    ['NaN', { qty: 'NaN' }, 'orders[0].qty'],
    ['Infinity', { qty: 'Infinity' }, 'orders[0].qty'],
    ['non-ASCII digits', { qty: '١٢' }, 'orders[0].qty'],
    ['a JS float', { qty: 1.5 }, 'orders[0].qty'],
    ['a zero quantity', { qty: '0.000' }, 'orders[0].qty'],
    ['a negative price', { p: '-1' }, 'orders[0].p'],
    ['a leading zero', { p: '01' }, 'orders[0].p'],
    ['a 33-char client id', { c: COID + 'a' }, 'orders[0].c'],
    ['an uppercase client id', { c: COID.toUpperCase() }, 'orders[0].c'],
    ['a negative instrument id', { iid: -1 }, 'orders[0].iid'],
    ['an unsafe instrument id', { iid: 2 ** 53 }, 'orders[0].iid'],
    ['a fractional instrument id', { iid: 1.5 }, 'orders[0].iid'],
    ['a string instrument id', { iid: '1' }, 'orders[0].iid'],
    ['an unknown tif', { tif: 'day' }, 'orders[0].tif'],
    ['an unknown field', { foo: 1 }, 'orders[0].foo'],
    ['post-only on ioc', { tif: 'ioc', po: true }, 'orders[0].po'],
    ['gtc without price', { p: undefined }, 'orders[0].p'],
    ['no tif', { tif: undefined }, 'orders[0].tif'],
  ])('rejects %s naming the field', (_what, patch, field) => {
    const order = { iid: 1, buy: true, qty: '1', p: '100', tif: 'gtc', ...patch };
    expect(fieldOf(() => createOrders({ orders: [order as never] }))).toBe(field);
  });

  it('rejects an empty batch, a batch over the bound, and duplicate client ids', () => {
    expect(fieldOf(() => createOrders({ orders: [] }))).toBe('orders');
    const one = { iid: 1, buy: true, qty: '1', p: '1', tif: 'gtc' as const };
    expect(fieldOf(() => createOrders({ orders: Array(PERPS_MAX_BATCH + 1).fill(one) }))).toBe('orders');
    expect(
      fieldOf(() =>
        createOrders({
          orders: [
            { ...one, c: COID },
            { ...one, c: COID },
          ],
        }),
      ),
    ).toBe('orders');
  });

  it('rejects a tif on a trigger order', () => {
    expect(
      fieldOf(() =>
        createOrders({ orders: [{ iid: 1, buy: true, qty: '1', tif: 'gtc', p: '1', tr: { tpsl: 'tp', trp: '2' } }] }),
      ),
    ).toBe('orders[0].tif');
  });

  it('says which field is wrong in the message', () => {
    expect(() => createOrders({ orders: [{ iid: 1, buy: true, qty: '1e2', p: '1', tif: 'gtc' }] })).toThrow(
      /orders\[0\]\.qty/,
    );
  });
});

describe('cancelOrders / cancelOrdersCOID', () => {
  it('builds the tuples, bodies and weights', () => {
    const byId = cancelOrders({ oids: [11, 22, 33] });
    expect(byId.op).toEqual(['cancelOrders', [11, 22, 33]]);
    expect(byId.body).toEqual({ type: 'cancelOrders', args: [11, 22, 33] });
    expect(byId.endpoint).toEqual({ method: 'DELETE', path: '/v1/trade/orders' });
    expect(byId.weight).toEqual({ request: 1, action: 0 });
    const byCoid = cancelOrdersCOID({ coids: [COID] });
    expect(byCoid.op).toEqual(['cancelOrdersCOID', [COID]]);
    expect(byCoid.body).toEqual({ type: 'cancelOrdersCOID', args: [COID] });
    expect(byCoid.endpoint).toEqual({ method: 'DELETE', path: '/v1/trade/orders-coid' });
    expect(byCoid.signer).toBe('proxy');
  });

  it('rejects empty batches, negative ids and 33-char coids', () => {
    expect(fieldOf(() => cancelOrders({ oids: [] }))).toBe('oids');
    expect(fieldOf(() => cancelOrders({ oids: [1, -2] }))).toBe('oids[1]');
    expect(fieldOf(() => cancelOrdersCOID({ coids: [COID + '0'] }))).toBe('coids[0]');
  });
});

describe('updateLeverage', () => {
  it('builds [iid, lev, cross] and { iid, lev, cross }', () => {
    const cmd = updateLeverage({ iid: 3, lev: 20, cross: false });
    expect(cmd.op).toEqual(['updateLeverage', [3, 20, false]]);
    expect(cmd.body).toEqual({ type: 'updateLeverage', args: { iid: 3, lev: 20, cross: false } });
    expect(cmd.endpoint).toEqual({ method: 'PATCH', path: '/v1/trade/leverage' });
    expect(cmd.weight).toEqual({ request: 1, action: 1 });
  });

  it.each([0, -1, 1.5, 2 ** 31, '5'])('rejects leverage %s', (lev) => {
    expect(fieldOf(() => updateLeverage({ iid: 3, lev: lev as number, cross: true }))).toBe('lev');
  });
});

describe('internalTransfer', () => {
  it('signs [account, token, amount, to] with the owner; label stays unsigned', () => {
    const cmd = internalTransfer({ account: A, token: USDC, amount: '10.5', to: B, label: 'rent ✓' });
    expect(cmd.op).toEqual(['internalTransfer', [A, USDC, '10.5', B]]);
    expect(cmd.body).toEqual({ type: 'internalTransfer', args: { account: A, token: USDC, amount: '10.5', to: B } });
    expect(cmd.label).toBe('rent ✓');
    expect(cmd.signer).toBe('owner');
    expect(cmd.endpoint).toEqual({ method: 'POST', path: '/v1/account/internal-transfer' });
  });

  it('rejects a label of 0 or 65 UTF-8 bytes, and accepts 64 bytes', () => {
    expect(fieldOf(() => internalTransfer({ account: A, token: USDC, amount: '1', to: B, label: '' }))).toBe('label');
    expect(
      fieldOf(() => internalTransfer({ account: A, token: USDC, amount: '1', to: B, label: 'é'.repeat(32) + 'x' })),
    ).toBe('label');
    expect(internalTransfer({ account: A, token: USDC, amount: '1', to: B, label: 'é'.repeat(32) }).label).toHaveLength(
      32,
    );
  });

  it('rejects a bad checksum, an uppercase address and a short address', () => {
    expect(
      fieldOf(() => internalTransfer({ account: A, token: USDC.replace('C011', 'c011'), amount: '1', to: B })),
    ).toBe('token');
    expect(
      fieldOf(() => internalTransfer({ account: A, token: USDC, amount: '1', to: '0x' + 'ABCDEF'.repeat(6) + 'ABCD' })),
    ).toBe('to');
    expect(fieldOf(() => internalTransfer({ account: A.slice(0, 40), token: USDC, amount: '1', to: B }))).toBe(
      'account',
    );
  });
});

describe('withdraw', () => {
  it('uses the Withdraw struct with base units and the owner key', () => {
    const cmd = withdraw({ account: A, token: USDC, amount: '10000000', to: B });
    expect(cmd.struct).toBe('Withdraw');
    expect(cmd.signer).toBe('owner');
    expect(cmd.withdraw).toEqual({ account: A, token: USDC, amount: 10000000n, to: B });
    expect(cmd.body).toEqual({ type: 'withdraw', args: { account: A, token: USDC, amount: '10000000', to: B } });
    expect(cmd.endpoint).toEqual({ method: 'POST', path: '/v1/account/withdraw' });
  });

  it('rejects decimal or zero amounts (base units only)', () => {
    expect(fieldOf(() => withdraw({ account: A, token: USDC, amount: '10.5', to: B }))).toBe('amount');
    expect(fieldOf(() => withdraw({ account: A, token: USDC, amount: '0', to: B }))).toBe('amount');
  });
});

describe('deleteProxy / createProxy', () => {
  it('builds owner-signed commands', () => {
    const del = deleteProxy({ proxy: A });
    expect(del.op).toEqual(['deleteProxy', [A]]);
    expect(del.body).toEqual({ type: 'deleteProxy', args: { proxy: A } });
    expect(del.signer).toBe('owner');
    const add = createProxy({ owner: B, proxy: A, expiry: 1_900_000_000_000, label: 'desk' });
    expect(add.struct).toBe('CreateProxy');
    expect(add.body).toEqual({ type: 'createProxy', args: { owner: B, proxy: A, expiry: 1_900_000_000_000 } });
    expect(add.label).toBe('desk');
    expect(add.endpoint).toEqual({ method: 'POST', path: '/v1/account/proxy' });
  });
});

describe('reference-SDK extras', () => {
  it('cancelAll, autoCancel, updateMargin', () => {
    expect(cancelAll().op).toEqual(['cancelAll', []]);
    expect(cancelAll({ iid: 4 }).body).toEqual({ type: 'cancelAll', args: { iid: 4 } });
    expect(autoCancel({ time: 0 }).op).toEqual(['autoCancel', [0]]);
    expect(updateMargin({ iid: 1, amt: '-12.5' }).op).toEqual(['updateMargin', [1, '-12.5']]);
    expect(() => assertAutoCancelTime(1000, 0)).toThrow(/5 s/);
    expect(() => assertAutoCancelTime(5000, 0)).not.toThrow();
  });
});

describe('commandFromBody', () => {
  it('rebuilds the same tuple from every builder body', () => {
    const cmds = [
      createOrders({
        orders: [{ iid: 7, buy: true, qty: '2.5', p: '3120.50', tif: 'gtc', po: true, c: COID }],
        group: 'order',
      }),
      cancelOrders({ oids: [1, 2] }),
      cancelOrdersCOID({ coids: [COID] }),
      updateLeverage({ iid: 1, lev: 5, cross: true }),
      internalTransfer({ account: A, token: USDC, amount: '1', to: B, label: 'x' }),
      deleteProxy({ proxy: A }),
      withdraw({ account: A, token: USDC, amount: '5', to: B }),
      createProxy({ owner: A, proxy: B, expiry: 123 }),
      cancelAll({ iid: 2 }),
      autoCancel({ time: 99999 }),
      updateMargin({ iid: 1, amt: '3' }),
    ];
    for (const cmd of cmds) {
      const rebuilt = commandFromBody(JSON.parse(JSON.stringify(cmd.body)), cmd.label);
      expect(rebuilt.op).toEqual(cmd.op);
      expect(rebuilt.signer).toBe(cmd.signer);
    }
  });

  it('names body fields with their body path', () => {
    expect(
      fieldOf(() => commandFromBody({ type: 'createOrders', args: [{ iid: 1, buy: true, qty: '1e2', tif: 'ioc' }] })),
    ).toBe('op.args[0].qty');
    expect(fieldOf(() => commandFromBody({ type: 'cancelOrders', args: [1, 'x'] }))).toBe('op.args[1]');
    expect(fieldOf(() => commandFromBody({ type: 'updateLeverage', args: { iid: 1, lev: 0, cross: true } }))).toBe(
      'op.args.lev',
    );
    expect(fieldOf(() => commandFromBody({ type: 'nope', args: [] }))).toBe('op.type');
    expect(fieldOf(() => commandFromBody({ type: 'deleteProxy', args: { proxy: A, extra: 1 } }))).toBe('op.args.extra');
    expect(
      fieldOf(() =>
        commandFromBody({ type: 'internalTransfer', args: { account: A, token: USDC, amount: '1', to: B } }, ''),
      ),
    ).toBe('label');
    expect(fieldOf(() => commandFromBody({ type: 'cancelOrders', args: [1] }, 'x'))).toBe('label');
    expect(fieldOf(() => commandFromBody({ type: 'cancelOrders', args: [1], grp: 'na' }))).toBe('op.grp');
  });

  it('rejects a __proto__ key', () => {
    const body = JSON.parse('{"type":"deleteProxy","args":{"proxy":"' + A + '","__proto__":{"x":1}}}');
    expect(fieldOf(() => commandFromBody(body))).toBe('op.args.__proto__');
  });
});
