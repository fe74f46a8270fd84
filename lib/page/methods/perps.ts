/**
 * The perps methods' records (`../method.ts`): `perps_sendCommand` (sign and submit, keyed, a window or a
 * grant) and `perps_signCommand` (sign only, always a window), served by `PerpsMethods` (`../perps.ts`).
 */
import { pageMethod, type MethodDocs } from '../method';
import { perpsParamsSchema, perpsSignParamsSchema } from '../params';

const ORDER_EXAMPLE = {
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p: '2900', tif: 'gtc', po: true }] },
};
const PERPS_ERRORS: MethodDocs['errors'] = [4001, 4100, 4900, -32602, -32002, -32003];

/** `perps_sendCommand`: a perps command built, shown, signed and sent by Countersign. */
export const perpsSendCommand = pageMethod({
  name: 'perps_sendCommand',
  params: perpsParamsSchema,
  policy: { connected: true, unlocked: true, session: true, approval: 'sign' },
  grantable: true,
  run: (host, req, params) => host.perps.send(req, params),
  docs: {
    summary:
      'A perps command (every seed command but proxy issuance) built, shown, signed and sent by Countersign; ' +
      'withdraw and transfer only from the connected account.',
    request: '`[{ op: { type, args, grp? }, exp?, label?, idempotencyKey? }]`',
    answer: "the gateway's answer (createOrders: one acknowledgement per order)",
    errors: PERPS_ERRORS,
    example: [{ ...ORDER_EXAMPLE, idempotencyKey: 'order-2900-1' }],
  },
});

/** `perps_signCommand`: the same command signed only, for the site to send. */
export const perpsSignCommand = pageMethod({
  name: 'perps_signCommand',
  params: perpsSignParamsSchema,
  policy: { connected: true, unlocked: true, session: false, approval: 'sign' },
  grantable: false,
  run: (host, req, params) => host.perps.sign(req, params),
  docs: {
    summary: 'The same command signed only, handed back unsent for the site to send (never covered by a grant).',
    request: '`[{ op: { type, args, grp? }, exp?, label? }]`',
    answer: 'the signed envelope `{ op, salt, ts, exp?, sig }`; nothing is sent',
    errors: PERPS_ERRORS,
    example: [ORDER_EXAMPLE],
  },
});
