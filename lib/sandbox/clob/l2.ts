/**
 * Sandbox order-book L2 routes — authenticated by the HMAC of an API key (the official client's L2
 * methods, `@polymarket/clob-client-v2`; seed `order-book-exchange-api.md`, PROTOCOL.md §2.2, §3.1,
 * §3.4). Every handler receives the key's credentials from the context (`ClobExchange.l2`).
 *
 * - Orders: `POST /order`, `POST /orders` (≤ `CLOB_MAX_BATCH`). Owner = API key, signer = API key
 *   address, maker = signer (type 0) or the profile funder (types 1, 2); signature recovered on the
 *   standard or negative-risk exchange domain; type 3 (deposit wallet) checked in `deposit.ts`; tick,
 *   minimum size, balance and mode checks.
 * - Cancels: `DELETE /order`, `/orders` (≤ 3000), `/cancel-all`, `/cancel-market-orders`.
 * - Heartbeats (the venue's behaviour is unshown; chosen here): the first `POST /v1/heartbeats` with an
 *   empty `heartbeat_id` starts a session and answers its id; each later one must carry that id. When
 *   no heartbeat arrives for 10 s, every live order of the account is cancelled. Accounts that never
 *   sent a heartbeat are not affected.
 * - Reads: `/data/order/{id}`, `/data/orders`, `/data/trades` (cursor pages: first `MA==`, last `LTE=`,
 *   100 rows a page), `/balance-allowance`, `/auth/api-keys`, `/auth/ban-status/closed-only`; and
 *   `DELETE /auth/api-key`.
 */
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { CLOB_MAX_BATCH, clobOrderDigest, clobOrderTypedData, exchangeAddress, parseClobOrder } from '../../clob/order';
import { fromUnits, toUnits } from '../../decimal';
import { parseJson } from '../http';
import { checkDepositWalletOrder, depositWalletBalance } from './deposit';
import { fail, type ClobExchange } from './exchange';
import { OrderRejectedError, PRICE_SCALE, type ApiCreds, type ClobOrderRec, type ClobVenue, type Trade } from './venue';

const CANCEL_BATCH_MAX = 3000;
/** Rows per page of `/data/orders` and `/data/trades`. */
const PAGE = 100;
const FIRST_CURSOR = 'MA==';
const END_CURSOR = 'LTE=';

const orderJsonSchema = v.strictObject({
  salt: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  maker: v.string(),
  signer: v.string(),
  tokenId: v.string(),
  makerAmount: v.string(),
  takerAmount: v.string(),
  side: v.picklist(['BUY', 'SELL']),
  signatureType: v.picklist([0, 1, 2, 3]),
  timestamp: v.string(),
  expiration: v.pipe(v.string(), v.regex(/^\d{1,12}$/)),
  metadata: v.string(),
  builder: v.string(),
  // 65 bytes (types 0–2) or the 317-byte ERC-7739 signature of a deposit wallet (type 3, PROTOCOL.md §4.5).
  signature: v.custom<Hex>((s) => typeof s === 'string' && /^0x(?:[0-9a-fA-F]{130}|[0-9a-fA-F]{634})$/.test(s)),
});

/** One `POST /order` body (and one item of `POST /orders`). */
const postOrderSchema = v.strictObject({
  deferExec: v.optional(v.boolean()),
  postOnly: v.optional(v.boolean()),
  order: orderJsonSchema,
  owner: v.string(),
  orderType: v.picklist(['GTC', 'GTD', 'FOK', 'FAK']),
});

/** Whether a raw order body asks to be post-only (any truthy `postOnly`). */
function asksPostOnly(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && 'postOnly' in raw && Boolean(raw.postOnly);
}

/** The hash the sandbox reports for a match's settlement transaction. */
const txHash = (matchId: string) => keccak256(toHex(`sandbox-trade:${matchId}`));

/** The answer item of a placed order (`makingAmount` / `takingAmount` empty until something matched). */
type PlaceResult = {
  success: true;
  errorMsg: '';
  orderID: string;
  status: string;
  makingAmount: string;
  takingAmount: string;
  tradeIDs: string[];
  transactionsHashes: Hex[];
};

/** The price (at `PRICE_SCALE`) an order's amounts give, on the market's tick; `OrderRejectedError` when off-tick. */
function orderPrice(
  collateral: bigint,
  shares: bigint,
  side: 'BUY' | 'SELL',
  marketStyle: boolean,
  tickSize: string,
): bigint {
  const tick = toUnits(tickSize, 6) ?? PRICE_SCALE;
  const offTick = new OrderRejectedError(`price breaks minimum tick size rule: ${tickSize}`);
  // Limit orders carry an exact on-tick ratio. Market-style orders (FOK, FAK) carry amounts the client
  // truncated, so their ratio is near a tick, not on it (PROTOCOL.md §3.4): their limit price is the
  // ratio rounded to the tick in the taker's favour of the book (down for BUY, up for SELL).
  const exact = (collateral * PRICE_SCALE) % shares === 0n;
  let price = (collateral * PRICE_SCALE) / shares;
  if (marketStyle)
    price =
      side === 'BUY' ? price - (price % tick) : price % tick === 0n && exact ? price : price - (price % tick) + tick;
  else if (!exact || price % tick !== 0n) throw offTick;
  if (price % tick !== 0n || price < tick || price > PRICE_SCALE - tick) throw offTick;
  return price;
}

/**
 * Verifies and places one order body for `creds` on `ex`'s venue; answers the result item or throws
 * `OrderRejectedError` with the venue's message.
 */
async function placeOrder(ex: ClobExchange, raw: unknown, creds: ApiCreds): Promise<PlaceResult> {
  const { venue, ctx } = ex;
  const parsed = v.safeParse(postOrderSchema, raw);
  if (!parsed.success) throw new OrderRejectedError('Invalid order payload');
  const b = parsed.output;
  if (b.owner !== creds.apiKey) throw new OrderRejectedError('the order owner has to be the owner of the API KEY');
  let order;
  try {
    const { expiration: _e, signature: _s, ...fields } = b.order;
    order = parseClobOrder({ ...fields, salt: String(fields.salt) });
  } catch {
    throw new OrderRejectedError('Invalid order payload');
  }
  const me = creds.address.toLowerCase();
  const type3 = order.signatureType === 3;
  if (!type3 && order.signer.toLowerCase() !== me)
    throw new OrderRejectedError('the order signer address has to be the address of the API KEY');
  const expectedMaker = order.signatureType === 0 ? me : type3 ? order.signer.toLowerCase() : venue.funders.get(me);
  if (!expectedMaker || order.maker.toLowerCase() !== expectedMaker)
    throw new OrderRejectedError('the order maker address has to be the funder address of the API KEY');
  const market = venue.tokenIndex.get(order.tokenId);
  if (!market) throw new OrderRejectedError('Invalid token id');
  if (market.closed) throw new OrderRejectedError('market not yet ready for orders');
  const input = {
    chainId: ctx.config.clobChainId,
    verifyingContract: exchangeAddress({ negRisk: market.negRisk }),
    order,
  };
  if (type3) await checkDepositWalletOrder(ex, input, b.order.signature, me);
  else {
    let signer: Address;
    try {
      signer = await recoverTypedDataAddress({ ...clobOrderTypedData(input), signature: b.order.signature });
    } catch {
      throw new OrderRejectedError('invalid order signature');
    }
    if (signer.toLowerCase() !== order.signer.toLowerCase()) throw new OrderRejectedError('invalid order signature');
  }
  const postOnly = b.postOnly ?? false;
  const marketStyle = b.orderType === 'FOK' || b.orderType === 'FAK';
  if (postOnly && marketStyle)
    throw new OrderRejectedError('invalid post-only order: FOK and FAK orders cannot be post-only');
  const expiration = Number(b.order.expiration);
  if (b.orderType === 'GTD' ? expiration <= ex.nowS() : expiration !== 0)
    throw new OrderRejectedError('invalid expiration');
  const maker = BigInt(order.makerAmount);
  const taker = BigInt(order.takerAmount);
  if (maker === 0n || taker === 0n) throw new OrderRejectedError('Invalid order payload');
  const [collateral, shares] = order.side === 'BUY' ? [maker, taker] : [taker, maker];
  const price = orderPrice(collateral, shares, order.side, marketStyle, market.tickSize);
  if (shares < (toUnits(market.minSize, 6) ?? 0n))
    throw new OrderRejectedError(`size lower than the minimum: ${market.minSize}`);
  const rec = venue.place(
    {
      id: clobOrderDigest(input),
      owner: creds.apiKey,
      address: me,
      maker: order.maker.toLowerCase(),
      tokenId: order.tokenId,
      side: order.side,
      price,
      originalSize: shares,
      orderType: b.orderType,
      postOnly,
      expiration,
      created: ctx.now(),
    },
    order.side === 'BUY' && marketStyle ? collateral : undefined,
  );
  const matchedCost = venue.trades
    .filter((t) => t.orderId === rec.id)
    .reduce((a, t) => a + (t.size * t.price) / PRICE_SCALE, 0n);
  const tradeIDs = venue.matchesOf(rec.id);
  return {
    success: true,
    errorMsg: '',
    orderID: rec.id,
    status: rec.status,
    makingAmount: rec.matched === 0n ? '' : fromUnits(order.side === 'BUY' ? matchedCost : rec.matched, 6),
    takingAmount: rec.matched === 0n ? '' : fromUnits(order.side === 'BUY' ? rec.matched : matchedCost, 6),
    tradeIDs,
    transactionsHashes: tradeIDs.map(txHash),
  };
}

/** A failed item of a `POST /orders` answer. */
const failedItem = (errorMsg: string) => ({
  success: false,
  errorMsg,
  orderID: '',
  status: '',
  makingAmount: '',
  takingAmount: '',
});

/** Cancels `ids` for `creds`' address: `{ canceled, not_canceled: { id: reason } }`. */
function cancelMany(venue: ClobVenue, ids: string[], creds: ApiCreds) {
  const canceled: string[] = [];
  const not_canceled: Record<string, string> = {};
  for (const id of ids) {
    const why = venue.cancel(id, creds.address);
    if (why) not_canceled[id] = why;
    else canceled.push(id);
  }
  return { canceled, not_canceled };
}

/** Mounts the L2 order, cancel and heartbeat routes of `ex` on `app` (mode gate first, then L2). */
export function l2OrderRoutes(app: Hono, ex: ClobExchange): void {
  const { venue } = ex;
  const rejected = (c: Context, err: unknown) => {
    if (err instanceof OrderRejectedError) return fail(c, 400, err.message);
    throw err;
  };

  app.post('/order', ex.gate('order'), ex.l2, async (c) => {
    const raw = parseJson(c.var.body);
    if (venue.mode === 'post-only' && !asksPostOnly(raw)) {
      c.header('Retry-After', String(venue.retryAfterSeconds));
      return fail(c, 503, 'Exchange is in post-only mode: only post-only orders and cancels are accepted.', {
        code: 'post_only_mode',
        retry_after_seconds: venue.retryAfterSeconds,
      });
    }
    venue.expire();
    try {
      return c.json(await placeOrder(ex, raw, c.var.creds));
    } catch (err) {
      return rejected(c, err);
    }
  });

  app.post('/orders', ex.gate('order'), ex.l2, async (c) => {
    const raw = parseJson(c.var.body);
    if (!Array.isArray(raw) || raw.length === 0) return fail(c, 400, 'Invalid payload');
    if (raw.length > CLOB_MAX_BATCH)
      return fail(c, 400, `Too many orders in payload: ${raw.length}, max allowed: ${CLOB_MAX_BATCH}`);
    venue.expire();
    const out = [];
    for (const item of raw) {
      if (venue.mode === 'post-only' && !asksPostOnly(item)) {
        out.push(failedItem('Exchange is in post-only mode: only post-only orders are accepted.'));
        continue;
      }
      try {
        out.push(await placeOrder(ex, item, c.var.creds));
      } catch (err) {
        if (!(err instanceof OrderRejectedError)) throw err;
        out.push(failedItem(err.message));
      }
    }
    return c.json(out);
  });

  app.delete('/order', ex.gate('cancel'), ex.l2, (c) => {
    const b = v.safeParse(v.object({ orderID: v.string() }), parseJson(c.var.body));
    if (!b.success) return fail(c, 400, 'Invalid orderID');
    return c.json(cancelMany(venue, [b.output.orderID], c.var.creds));
  });

  app.delete('/orders', ex.gate('cancel'), ex.l2, (c) => {
    const b = v.safeParse(v.array(v.string()), parseJson(c.var.body));
    if (!b.success) return fail(c, 400, 'Invalid payload');
    if (b.output.length > CANCEL_BATCH_MAX)
      return fail(c, 400, `Too many orders in payload, max allowed: ${CANCEL_BATCH_MAX}`);
    return c.json(cancelMany(venue, b.output, c.var.creds));
  });

  app.delete('/cancel-all', ex.gate('cancel'), ex.l2, (c) => {
    const me = c.var.creds.address.toLowerCase();
    const ids = [...venue.orders.values()].filter((o) => o.address === me && o.status === 'live').map((o) => o.id);
    return c.json(cancelMany(venue, ids, c.var.creds));
  });

  app.delete('/cancel-market-orders', ex.gate('cancel'), ex.l2, (c) => {
    const b = v.safeParse(
      v.object({ market: v.optional(v.string()), asset_id: v.optional(v.string()) }),
      parseJson(c.var.body) ?? {},
    );
    if (!b.success) return fail(c, 400, 'Invalid payload');
    const { market, asset_id } = b.output;
    const me = c.var.creds.address.toLowerCase();
    const ids = [...venue.orders.values()]
      .filter(
        (o) =>
          o.address === me &&
          o.status === 'live' &&
          (!asset_id || o.tokenId === asset_id) &&
          (!market || venue.tokenIndex.get(o.tokenId)?.conditionId === market),
      )
      .map((o) => o.id);
    return c.json(cancelMany(venue, ids, c.var.creds));
  });

  app.post('/v1/heartbeats', ex.l2, (c) => {
    const b = v.safeParse(v.object({ heartbeat_id: v.string() }), parseJson(c.var.body));
    if (!b.success) return fail(c, 400, 'Invalid payload');
    const session = venue.heartbeat(c.var.creds.address, b.output.heartbeat_id, ex.ctx.now());
    if (!session) return fail(c, 400, 'Invalid heartbeat id');
    return c.json({ heartbeat_id: session });
  });
}

/** Mounts the L2 reads (orders, trades, balance, API keys) and API-key deletion of `ex` on `app`. */
export function l2ReadRoutes(app: Hono, ex: ClobExchange): void {
  const { venue } = ex;

  const outcomeOf = (tokenId: string) => {
    const m = venue.tokenIndex.get(tokenId);
    return m ? (m.outcomes[m.tokenIds.indexOf(tokenId)] ?? '') : '';
  };

  /** An order as `GET /data/order/{id}` and `/data/orders` answer it (bindings `OpenOrderSchema`). */
  const orderView = (o: ClobOrderRec) => ({
    id: o.id,
    status:
      o.status === 'live'
        ? 'LIVE'
        : o.status === 'matched'
          ? 'MATCHED'
          : o.status === 'canceled'
            ? 'CANCELED'
            : 'UNMATCHED',
    owner: o.owner,
    maker_address: o.maker,
    market: venue.tokenIndex.get(o.tokenId)?.conditionId ?? '',
    asset_id: o.tokenId,
    side: o.side,
    original_size: fromUnits(o.originalSize, 6),
    size_matched: fromUnits(o.matched, 6),
    price: fromUnits(o.price, 6),
    associate_trades: venue.matchesOf(o.id),
    outcome: outcomeOf(o.tokenId),
    expiration: String(o.expiration),
    order_type: o.orderType,
    created_at: Math.floor(o.created / 1000),
  });

  /** A fill as `GET /data/trades` answers it (bindings `ClobTradeSchema`), from one of the account's rows. */
  const tradeView = (t: Trade) => {
    const makerRows = venue.trades.filter((x) => x.matchId === t.matchId && x.role === 'MAKER');
    // Every match writes a taker row; `t` is it when the account took.
    const taker = venue.trades.find((x) => x.matchId === t.matchId && x.role === 'TAKER') ?? t;
    const at = String(Math.floor(t.at / 1000));
    return {
      id: t.matchId,
      taker_order_id: t.takerOrderId,
      market: venue.tokenIndex.get(t.tokenId)?.conditionId ?? '',
      asset_id: t.tokenId,
      side: taker.side,
      size: fromUnits(t.size, 6),
      fee_rate_bps: '0',
      price: fromUnits(t.price, 6),
      status: 'TRADE_STATUS_CONFIRMED',
      match_time: at,
      last_update: at,
      outcome: outcomeOf(t.tokenId),
      bucket_index: 0,
      owner: taker.owner,
      maker_address: taker.address,
      transaction_hash: txHash(t.matchId),
      trader_side: t.role,
      maker_orders: makerRows.map((x) => ({
        order_id: x.orderId,
        owner: x.owner,
        maker_address: x.address,
        matched_amount: fromUnits(x.size, 6),
        price: fromUnits(x.price, 6),
        fee_rate_bps: '0',
        asset_id: x.tokenId,
        outcome: outcomeOf(x.tokenId),
        side: x.side,
      })),
    };
  };

  /** One cursor page (`next_cursor` base64 of the offset; `MA==` first, `LTE=` after the last page). */
  const page = <T>(c: Context, rows: T[]) => {
    const cursor = c.req.query('next_cursor') || FIRST_CURSOR;
    if (cursor === END_CURSOR) return c.json({ data: [], next_cursor: END_CURSOR, limit: PAGE, count: 0 });
    const offset = Number(Buffer.from(cursor, 'base64').toString());
    if (!Number.isSafeInteger(offset) || offset < 0) return fail(c, 400, 'invalid next_cursor');
    const data = rows.slice(offset, offset + PAGE);
    const next = offset + PAGE < rows.length ? Buffer.from(String(offset + PAGE)).toString('base64') : END_CURSOR;
    return c.json({ data, next_cursor: next, limit: PAGE, count: data.length });
  };

  app.get('/data/orders', ex.l2, (c) => {
    venue.expire();
    const me = c.var.creds.address.toLowerCase();
    const { id, market, asset_id: asset } = c.req.query();
    const rows = [...venue.orders.values()]
      .filter(
        (o) =>
          o.address === me &&
          o.status === 'live' &&
          (!id || o.id === id) &&
          (!asset || o.tokenId === asset) &&
          (!market || venue.tokenIndex.get(o.tokenId)?.conditionId === market),
      )
      .sort((a, b) => b.seq - a.seq)
      .map(orderView);
    return page(c, rows);
  });

  app.get('/data/order/:id', ex.l2, (c) => {
    venue.expire();
    const o = venue.orders.get(c.req.param('id'));
    if (!o || o.address !== c.var.creds.address.toLowerCase()) return fail(c, 404, 'order not found');
    return c.json(orderView(o));
  });

  app.get('/data/trades', ex.l2, (c) => {
    const q = c.req.query();
    const me = c.var.creds.address.toLowerCase();
    const before = q.before ? Number(q.before) : undefined;
    const after = q.after ? Number(q.after) : undefined;
    const taker = q.taker?.toLowerCase();
    const maker = q.maker?.toLowerCase();
    const rows = venue.trades
      .filter(
        (t) =>
          // The API key's own fills: as maker address (type 0) or as owner (a funder or deposit wallet made them).
          (t.address === me || t.owner === c.var.creds.apiKey) &&
          (!q.id || t.matchId === q.id) &&
          (!q.asset_id || t.tokenId === q.asset_id) &&
          (!q.market || venue.tokenIndex.get(t.tokenId)?.conditionId === q.market) &&
          (!taker || (t.role === 'TAKER' && t.address === taker)) &&
          (!maker || (t.role === 'MAKER' && t.address === maker)) &&
          (before === undefined || t.at / 1000 < before) &&
          (after === undefined || t.at / 1000 > after),
      )
      .slice()
      .reverse()
      .map(tradeView);
    return page(c, rows);
  });

  app.get('/auth/ban-status/closed-only', ex.l2, (c) => c.json({ closed_only: false }));

  app.get('/auth/api-keys', ex.l2, (c) => {
    const me = c.var.creds.address.toLowerCase();
    return c.json({
      apiKeys: [...venue.creds.values()].filter((k) => k.address.toLowerCase() === me).map((k) => k.apiKey),
    });
  });

  app.delete('/auth/api-key', ex.l2, (c) => {
    const { creds } = c.var;
    venue.creds.delete(creds.apiKey);
    venue.credsByNonce.delete(`${creds.address.toLowerCase()}:${creds.nonce}`);
    return c.json('OK');
  });

  app.get('/balance-allowance', ex.l2, (c) => {
    const assetType = c.req.query('asset_type') ?? 'COLLATERAL';
    if (assetType !== 'COLLATERAL' && assetType !== 'CONDITIONAL') return fail(c, 400, 'Invalid asset type');
    const who = c.var.creds.address;
    if (c.req.query('signature_type') === '3')
      return c.json(depositWalletBalance(ex, who, assetType, c.req.query('token_id') ?? ''));
    const balance =
      assetType === 'COLLATERAL' ? venue.balanceOf(who) : venue.tokenBalance(who, c.req.query('token_id') ?? '');
    const max = ((1n << 256n) - 1n).toString();
    return c.json({
      balance: balance.toString(),
      allowances: { [exchangeAddress({ negRisk: false })]: max, [exchangeAddress({ negRisk: true })]: max },
    });
  });
}
