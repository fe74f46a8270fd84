/**
 * The order-book methods' records (`../method.ts`): `clob_postOrders` (orders built, shown, signed and
 * posted, keyed, a window or a grant) and `clob_signRequest` (L2 headers for an allowed route, always a
 * window), served by `OrderBookMethods` (`../orderbook.ts`).
 */
import { pageMethod } from '../method';
import { clobOrdersParamsSchema, clobSignParamsSchema } from '../params';

/** `clob_postOrders`: 1-15 order-book orders. */
export const clobPostOrders = pageMethod({
  name: 'clob_postOrders',
  params: clobOrdersParamsSchema,
  policy: { connected: true, unlocked: true, session: true, approval: 'sign' },
  grantable: true,
  run: (host, req, params) => host.orderBook.post(req, params),
  docs: {
    summary: '1-15 order-book orders built, shown, signed and posted by Countersign.',
    request:
      '`[{ orders: [{ tokenId, side, price, size, orderType, postOnly?, expiration? }] (1-15), idempotencyKey? }]`',
    answer: '`[{ success, orderID, status?, errorMsg }]`, one per order',
    errors: [4001, 4100, 4900, -32602, -32002, -32003],
    example: [
      {
        orders: [{ tokenId: '1234', side: 'BUY', price: '0.45', size: '10', orderType: 'GTC' }],
        idempotencyKey: 'buy-1234-1',
      },
    ],
  },
});

/** `clob_signRequest`: five L2 headers for one allowed route. */
export const clobSignRequest = pageMethod({
  name: 'clob_signRequest',
  params: clobSignParamsSchema,
  policy: { connected: true, unlocked: true, session: false, approval: 'sign' },
  grantable: false,
  run: (host, req, params) => host.orderBook.sign(req, params),
  docs: {
    summary:
      'The five L2 headers for one allowed order-book route; the window shows method, path and the decoded body.',
    request: '`[{ method, requestPath, body? }]` for an allowed route (below)',
    answer: 'the five L2 headers',
    errors: [4001, 4100, 4900, -32602, -32002],
    example: [{ method: 'GET', requestPath: '/data/orders' }],
  },
});
