/**
 * Sandbox perps `/v1/trade/*` commands, signed by a registered proxy (the official client's `trade`
 * module; seed `perps-gateway-api.md` endpoints 3-8, PROTOCOL.md §1.2 and §3.4): create orders, cancel
 * by id, by client id or all, auto-cancel and leverage. Each route is verified by
 * `PerpsGateway.command` first; its `op.args` schema here types what `parsePerpsEnvelope` already
 * validated.
 */
import type { Hono } from 'hono';
import * as v from 'valibot';
import { AUTO_CANCEL_MIN_LEAD_MS } from '../../perps/commands';
import { VenueError } from './engine';
import type { PerpsGateway } from './gateway';

/** `createOrders` args: the order items of the JSON body (`PerpsOrderInput`). */
const ordersArgs = v.array(
  v.object({
    iid: v.number(),
    buy: v.boolean(),
    qty: v.string(),
    p: v.optional(v.string()),
    tif: v.optional(v.picklist(['gtc', 'ioc', 'fok'])),
    po: v.optional(v.boolean()),
    ro: v.optional(v.boolean()),
    c: v.optional(v.string()),
    tr: v.optional(v.object({ tpsl: v.picklist(['tp', 'sl']), trp: v.string(), market: v.optional(v.boolean()) })),
  }),
);

/** Mounts the `/v1/trade/*` commands of `gw` on `app`. */
export function tradeRoutes(app: Hono, gw: PerpsGateway): void {
  const { venue } = gw.ctx;
  /** Open or untriggered orders of `owner` (lowercase) with client order id `coid`. */
  const liveByCoid = (owner: string, coid: string) =>
    [...venue.orders.values()].find(
      (x) => x.owner === owner && x.coid === coid && (x.status === 'open' || x.status === 'untriggered'),
    );

  gw.command(
    app,
    'PATCH',
    '/v1/trade/leverage',
    { type: 'updateLeverage', args: v.object({ iid: v.number(), lev: v.number(), cross: v.boolean() }) },
    (c) => {
      const { account, args } = c.var;
      const inst = venue.instruments.get(args.iid);
      if (!inst) throw new VenueError('unknown_instrument');
      if (args.lev > inst.maxLeverage) throw new VenueError('invalid_leverage');
      const before = venue.configOf(account, inst.iid);
      account.config.set(inst.iid, { leverage: args.lev, cross: args.cross });
      if (venue.usedMargin(account) > account.balance) {
        account.config.set(inst.iid, before);
        throw new VenueError('insufficient_margin');
      }
      venue.emit({ kind: 'account', owner: account.owner.toLowerCase() });
      return { status: 'ok', instrument_id: inst.iid, leverage: args.lev, cross: args.cross };
    },
  );

  gw.command(app, 'POST', '/v1/trade/orders', { type: 'createOrders', args: ordersArgs }, (c) =>
    venue
      .placeOrders(
        c.var.account,
        c.var.args,
        c.var.envelope.command.body.type === 'createOrders' ? c.var.envelope.command.body.grp : undefined,
      )
      .map((o) => ({ status: 'ok', oid: o.oid, ...(o.coid ? { coid: o.coid } : {}) })),
  );

  gw.command(app, 'DELETE', '/v1/trade/orders-coid', { type: 'cancelOrdersCOID', args: v.array(v.string()) }, (c) => {
    const { account, args } = c.var;
    return args.map((coid) => {
      const o = liveByCoid(account.owner.toLowerCase(), coid);
      return o && venue.cancel(account, o)
        ? { status: 'ok', oid: o.oid, coid }
        : { status: 'err', oid: 0, coid, error: 'order_not_found' };
    });
  });

  gw.command(app, 'DELETE', '/v1/trade/orders', { type: 'cancelOrders', args: v.array(v.number()) }, (c) =>
    c.var.args.map((oid) =>
      venue.cancel(c.var.account, venue.orders.get(oid))
        ? { status: 'ok', oid }
        : { status: 'err', oid, error: 'order_not_found' },
    ),
  );

  // The venue answers cancel-all with a bare acknowledgement (PROTOCOL.md §3.4).
  gw.command(
    app,
    'DELETE',
    '/v1/trade/orders/all',
    { type: 'cancelAll', args: v.object({ iid: v.optional(v.number()) }) },
    (c) => {
      venue.cancelAll(c.var.account, c.var.args.iid);
      return { status: 'ok' };
    },
  );

  gw.command(
    app,
    'PATCH',
    '/v1/trade/auto-cancel',
    { type: 'autoCancel', args: v.object({ time: v.number() }) },
    (c) => {
      const { account, args } = c.var;
      if (args.time !== 0 && args.time < gw.now() + AUTO_CANCEL_MIN_LEAD_MS)
        throw new VenueError('auto_cancel_too_soon');
      account.autoCancelAt = args.time === 0 ? undefined : args.time;
      return { status: 'ok', deadline: args.time };
    },
  );
}
