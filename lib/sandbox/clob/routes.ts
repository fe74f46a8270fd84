/**
 * Sandbox order-book exchange routes (seed `order-book-exchange-api.md`; PROTOCOL.md §2 and §3.1: the
 * paths, query names and answer shapes of the official client `@polymarket/clob-client-v2`). Mounted
 * under `/clob`; the path a client signs in L2 is the path below that prefix **without** the query
 * string (PROTOCOL.md §2.2).
 *
 * Reads the official client makes: `/time`, `/version`, `/ok`, `/clob-markets/{condition_id}`,
 * `/markets-by-token/{token_id}`, `/markets/{condition_id}`, `/fee-rate`, `/tick-size`, `/neg-risk`,
 * `/book` + `POST /books`, `/price` + `POST /prices`, `/midpoint` + `POST /midpoints`, `/spread` +
 * `POST /spreads`, `/last-trade-price` + `POST /last-trades-prices`, `/prices-history`; L2 `/data/order/{id}`,
 * `/data/orders`, `/data/trades` (cursor pages: first `MA==`, last `LTE=`, 100 rows a page),
 * `/balance-allowance`, `/auth/api-keys`, `/auth/ban-status/closed-only`; writes `POST /order(s)`,
 * `DELETE /order(s)`, `/cancel-all`, `/cancel-market-orders`, `POST /v1/heartbeats`, `DELETE /auth/api-key`.
 *
 * Heartbeats (the venue's behaviour is unshown; chosen here): the first `POST /v1/heartbeats` with an
 * empty `heartbeat_id` starts a session and answers its id; each later one must carry that id. When no
 * heartbeat arrives for 10 s, every live order of the account is cancelled. Accounts that never sent a
 * heartbeat are not affected.
 *
 * - L1 (`POST /auth/api-key`, `GET /auth/derive-api-key`): ClobAuth signer recovered with viem must equal
 *   `SVC_ADDRESS`; `SVC_TIMESTAMP` within the window; nonce rules (create fails on a used nonce, derive
 *   needs one); failures → 401 `Invalid L1 Request headers`.
 * - L2 on every trading route: the HMAC over `timestamp + method + path + body` must match; 401 otherwise.
 * - Orders: owner = API key, signer = API key address, maker = signer (type 0) or the profile funder
 *   (types 1, 2); signature recovered on the standard or negative-risk exchange domain; tick, minimum
 *   size, balance and mode checks.
 */
import { Hono, type Context } from 'hono';
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { buildL2SignatureSync, clobAuthTypedData, l2SignaturesEqual } from '../../clob/auth';
import { CLOB_MAX_BATCH, clobOrderDigest, clobOrderTypedData, exchangeAddress, parseClobOrder, type OrderType } from '../../clob/order';
import { isAddress } from 'viem';
import { MultiWindow } from '../../ratelimit/sliding-window';
import type { SandboxContext } from '../context';
import { PRICE_SCALE, type ApiCreds, type ClobOrderRec } from './venue';
import { fromUnits, toUnits } from '../../decimal';

const L1_ERROR = 'Invalid L1 Request headers';
const UNAUTHORIZED = 'Unauthorized/Invalid api key';
const CANCEL_BATCH_MAX = 3000;
/** Heartbeats lapse after this long without one (ms). */
export const HEARTBEAT_TIMEOUT_MS = 10_000;
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
  signature: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{130}$/)),
});

const postOrderSchema = v.strictObject({
  deferExec: v.optional(v.boolean()),
  postOnly: v.optional(v.boolean()),
  order: orderJsonSchema,
  owner: v.string(),
  orderType: v.picklist(['GTC', 'GTD', 'FOK', 'FAK']),
});

/** Seed "Limits" tables: (method path) → budgets per 10 s / 10 min. */
const LIMITS: [string, { limit: number; windowMs: number }[]][] = [
  ['POST /order', [{ limit: 5_000, windowMs: 10_000 }, { limit: 120_000, windowMs: 600_000 }]],
  ['POST /orders', [{ limit: 2_000, windowMs: 10_000 }, { limit: 21_000, windowMs: 600_000 }]],
  ['DELETE /order', [{ limit: 5_000, windowMs: 10_000 }, { limit: 120_000, windowMs: 600_000 }]],
  ['DELETE /orders', [{ limit: 2_000, windowMs: 10_000 }, { limit: 15_000, windowMs: 600_000 }]],
  ['DELETE /cancel-all', [{ limit: 250, windowMs: 10_000 }, { limit: 6_000, windowMs: 600_000 }]],
  ['GET /book', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /price', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /midpoint', [{ limit: 1_500, windowMs: 10_000 }]],
  ['GET /tick-size', [{ limit: 200, windowMs: 10_000 }]],
  ['GET /data/orders', [{ limit: 900, windowMs: 10_000 }]],
  ['GET /data/trades', [{ limit: 900, windowMs: 10_000 }]],
  ['AUTH', [{ limit: 100, windowMs: 10_000 }]],
  ['GENERAL', [{ limit: 9_000, windowMs: 10_000 }]],
];

export function clobRoutes(ctx: SandboxContext, prefix: string): Hono {
  const app = new Hono();
  const venue = ctx.clob;
  const { config } = ctx;
  const nowS = () => Math.floor(ctx.now() / 1000);
  const fail = (c: Context, status: number, error: string, extra: Record<string, unknown> = {}) =>
    c.json({ error, ...extra }, status as 400);

  const limiter = (name: string) => {
    let w = ctx.clobLimits.get(name);
    if (!w) {
      const budgets = LIMITS.find(([k]) => k === name)?.[1] ?? [];
      w = new MultiWindow(budgets.map((b) => ({ limit: Math.max(1, Math.floor(b.limit * config.clobRateLimitFactor)), windowMs: b.windowMs })));
      ctx.clobLimits.set(name, w);
    }
    return w;
  };

  // Heartbeats that lapsed cancel their account's orders before anything else is answered.
  app.use('*', async (_c, next) => {
    venue.lapseHeartbeats(ctx.now(), HEARTBEAT_TIMEOUT_MS);
    await next();
  });

  // Throttling (seed "Limits"): the general budget, then the route's own, per API key or caller.
  app.use('*', async (c, next) => {
    const path = new URL(c.req.url).pathname.slice(prefix.length) || '/';
    const route = path.startsWith('/auth/') ? 'AUTH' : `${c.req.method} ${path}`;
    const key = c.req.header('SVC_API_KEY') ?? 'anon';
    const t = ctx.now();
    for (const name of ['GENERAL', route]) {
      if (!LIMITS.some(([k]) => k === name)) continue;
      const wait = limiter(name).take(key, 1, t);
      if (wait > 0) {
        c.header('Retry-After', String(Math.ceil(wait / 1000)));
        return fail(c, 429, 'Too Many Requests');
      }
    }
    await next();
  });

  // ------------------------------------------------------------------------------------------
  // L1

  const verifyL1 = async (c: Context): Promise<{ address: Address; nonce: number } | undefined> => {
    const address = c.req.header('SVC_ADDRESS') ?? '';
    const sig = c.req.header('SVC_SIGNATURE') ?? '';
    const ts = c.req.header('SVC_TIMESTAMP') ?? '';
    const nonceText = c.req.header('SVC_NONCE') ?? '0';
    if (!isAddress(address, { strict: false }) || !/^0x[0-9a-fA-F]{130}$/.test(sig) || !/^\d{1,12}$/.test(ts) || !/^\d{1,15}$/.test(nonceText)) {
      return undefined;
    }
    const timestamp = Number(ts);
    if (Math.abs(timestamp - nowS()) > config.clobTimestampWindowS) return undefined;
    const nonce = Number(nonceText);
    try {
      const recovered = await recoverTypedDataAddress({
        ...clobAuthTypedData(address as Address, { chainId: config.clobChainId, timestamp, nonce }),
        signature: sig as Hex,
      });
      if (recovered.toLowerCase() !== address.toLowerCase()) return undefined;
      return { address: recovered, nonce };
    } catch {
      return undefined;
    }
  };

  const newCreds = (address: Address, nonce: number): ApiCreds => {
    const rand = (n: number) => crypto.getRandomValues(new Uint8Array(n));
    const creds: ApiCreds = {
      apiKey: crypto.randomUUID(),
      secret: Buffer.from(rand(32)).toString('base64url') + '=',
      passphrase: Buffer.from(rand(32)).toString('hex'),
      address,
      nonce,
    };
    ctx.clob.creds.set(creds.apiKey, creds);
    ctx.clob.credsByNonce.set(`${address.toLowerCase()}:${nonce}`, creds.apiKey);
    return creds;
  };

  app.post('/auth/api-key', async (c) => {
    const l1 = await verifyL1(c);
    if (!l1) return fail(c, 401, L1_ERROR);
    if (venue.credsByNonce.has(`${l1.address.toLowerCase()}:${l1.nonce}`)) return fail(c, 400, 'Could not create api key');
    const creds = newCreds(l1.address, l1.nonce);
    if (!venue.collateral.has(l1.address.toLowerCase())) venue.credit(l1.address, config.newAccountBalance);
    c.header('Cache-Control', 'no-store');
    return c.json({ apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase });
  });

  app.get('/auth/derive-api-key', async (c) => {
    const l1 = await verifyL1(c);
    if (!l1) return fail(c, 401, L1_ERROR);
    const key = venue.credsByNonce.get(`${l1.address.toLowerCase()}:${l1.nonce}`);
    const creds = key ? venue.creds.get(key) : undefined;
    if (!creds) return fail(c, 500, 'Could not derive api key');
    c.header('Cache-Control', 'no-store');
    return c.json({ apiKey: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase });
  });

  // ------------------------------------------------------------------------------------------
  // L2

  const verifyL2 = async (c: Context): Promise<{ creds: ApiCreds; body: string } | undefined> => {
    const h = (n: string) => c.req.header(n);
    const apiKey = h('SVC_API_KEY');
    const creds = apiKey ? venue.creds.get(apiKey) : undefined;
    const address = h('SVC_ADDRESS');
    const sig = h('SVC_SIGNATURE');
    const ts = h('SVC_TIMESTAMP');
    if (!creds || !address || !sig || !ts || !/^\d{1,12}$/.test(ts)) return undefined;
    if (h('SVC_PASSPHRASE') !== creds.passphrase || address.toLowerCase() !== creds.address.toLowerCase()) return undefined;
    if (Math.abs(Number(ts) - nowS()) > config.clobTimestampWindowS) return undefined;
    const body = await c.req.text();
    // PROTOCOL.md §2.2: the HMAC covers the path alone; query parameters travel unsigned.
    const requestPath = new URL(c.req.url).pathname.slice(prefix.length);
    const expected = buildL2SignatureSync({ secret: creds.secret, timestamp: Number(ts), method: c.req.method, requestPath, body });
    if (!l2SignaturesEqual(expected, sig)) return undefined;
    return { creds, body };
  };

  const modeGate = (c: Context, kind: 'order' | 'cancel') => {
    if (venue.mode === 'restarting') return fail(c, 425, 'Matching engine restarting');
    if (venue.mode === 'disabled') return fail(c, 503, 'Trading is currently disabled. No orders or cancels are accepted.');
    if (kind === 'order' && venue.mode === 'cancel-only') {
      return fail(c, 503, 'Trading is currently cancel-only. New orders are not accepted, but cancels are allowed.');
    }
    return undefined;
  };

  const postOnlyModeError = (c: Context) => {
    c.header('Retry-After', String(venue.retryAfterSeconds));
    return fail(c, 503, 'Exchange is in post-only mode: only post-only orders and cancels are accepted.', {
      code: 'post_only_mode',
      retry_after_seconds: venue.retryAfterSeconds,
    });
  };

  /** Verifies and places one order body; returns the result item or throws Error(message). */
  const placeOne = async (raw: unknown, creds: ApiCreds) => {
    const parsed = v.safeParse(postOrderSchema, raw);
    if (!parsed.success) throw new Error('Invalid order payload');
    const b = parsed.output;
    if (b.owner !== creds.apiKey) throw new Error('the order owner has to be the owner of the API KEY');
    let order;
    try {
      const { expiration: _e, signature: _s, ...fields } = b.order;
      order = parseClobOrder({ ...fields, salt: String(fields.salt) });
    } catch {
      throw new Error('Invalid order payload');
    }
    if (order.signer.toLowerCase() !== creds.address.toLowerCase()) {
      throw new Error('the order signer address has to be the address of the API KEY');
    }
    if (order.signatureType === 3) throw new Error('Invalid signature_type');
    const expectedMaker = order.signatureType === 0 ? creds.address.toLowerCase() : venue.funders.get(creds.address.toLowerCase());
    if (!expectedMaker || order.maker.toLowerCase() !== expectedMaker) {
      throw new Error('the order maker address has to be the funder address of the API KEY');
    }
    const market = venue.tokenIndex.get(order.tokenId);
    if (!market) throw new Error('Invalid token id');
    if (market.closed) throw new Error('market not yet ready for orders');
    const verifyingContract = exchangeAddress({ negRisk: market.negRisk });
    const input = { chainId: config.clobChainId, verifyingContract, order };
    let signer: Address;
    try {
      signer = await recoverTypedDataAddress({ ...clobOrderTypedData(input), signature: b.order.signature as Hex });
    } catch {
      throw new Error('invalid order signature');
    }
    if (signer.toLowerCase() !== order.signer.toLowerCase()) throw new Error('invalid order signature');
    const postOnly = b.postOnly ?? false;
    if (postOnly && (b.orderType === 'FOK' || b.orderType === 'FAK')) throw new Error('invalid post-only order: FOK and FAK orders cannot be post-only');
    const expiration = Number(b.order.expiration);
    if (b.orderType === 'GTD' ? expiration <= nowS() : expiration !== 0) throw new Error('invalid expiration');
    const maker = BigInt(order.makerAmount);
    const taker = BigInt(order.takerAmount);
    if (maker === 0n || taker === 0n) throw new Error('Invalid order payload');
    const [collateral, shares] = order.side === 'BUY' ? [maker, taker] : [taker, maker];
    const tick = toUnits(market.tickSize, 6)!;
    // Limit orders carry an exact on-tick ratio. Market-style orders (FOK, FAK) carry amounts the client
    // truncated, so their ratio is near a tick, not on it (PROTOCOL.md §3.4): their limit price is the
    // ratio rounded to the tick in the taker's favour of the book (down for BUY, up for SELL).
    const market_ = b.orderType === 'FOK' || b.orderType === 'FAK';
    const exact = (collateral * PRICE_SCALE) % shares === 0n;
    let price = (collateral * PRICE_SCALE) / shares;
    if (market_) price = order.side === 'BUY' ? price - (price % tick) : price % tick === 0n && exact ? price : price - (price % tick) + tick;
    else if (!exact || price % tick !== 0n) throw new Error(`price breaks minimum tick size rule: ${market.tickSize}`);
    if (price % tick !== 0n || price < tick || price > PRICE_SCALE - tick) {
      throw new Error(`price breaks minimum tick size rule: ${market.tickSize}`);
    }
    if (shares < toUnits(market.minSize, 6)!) throw new Error(`size lower than the minimum: ${market.minSize}`);
    const rec = venue.place({
      id: clobOrderDigest(input),
      owner: creds.apiKey,
      address: creds.address.toLowerCase(),
      maker: order.maker.toLowerCase(),
      tokenId: order.tokenId,
      side: order.side,
      price,
      originalSize: shares,
      orderType: b.orderType as OrderType,
      postOnly,
      expiration,
      created: ctx.now(),
    });
    const fills = venue.trades.filter((t) => t.orderId === rec.id);
    const matchedCost = fills.reduce((a, t) => a + (t.size * t.price) / PRICE_SCALE, 0n);
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
      postOnly,
    };
  };

  const txHash = (matchId: string) => keccak256(toHex(`sandbox-trade:${matchId}`));

  const parseJson = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };

  app.post('/order', async (c) => {
    const gate = modeGate(c, 'order');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = parseJson(auth.body);
    if (venue.mode === 'post-only' && !(raw as { postOnly?: unknown } | undefined)?.postOnly) return postOnlyModeError(c);
    venue.expire();
    try {
      const { postOnly: _p, ...result } = await placeOne(raw, auth.creds);
      return c.json(result);
    } catch (err) {
      return fail(c, 400, (err as Error).message);
    }
  });

  app.post('/orders', async (c) => {
    const gate = modeGate(c, 'order');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = parseJson(auth.body);
    if (!Array.isArray(raw) || raw.length === 0) return fail(c, 400, 'Invalid payload');
    if (raw.length > CLOB_MAX_BATCH) return fail(c, 400, `Too many orders in payload: ${raw.length}, max allowed: ${CLOB_MAX_BATCH}`);
    venue.expire();
    const out = [];
    for (const item of raw) {
      if (venue.mode === 'post-only' && !(item as { postOnly?: unknown })?.postOnly) {
        out.push({ success: false, errorMsg: 'Exchange is in post-only mode: only post-only orders are accepted.', orderID: '', status: '', makingAmount: '', takingAmount: '' });
        continue;
      }
      try {
        const { postOnly: _p, ...result } = await placeOne(item, auth.creds);
        out.push(result);
      } catch (err) {
        out.push({ success: false, errorMsg: (err as Error).message, orderID: '', status: '', makingAmount: '', takingAmount: '' });
      }
    }
    return c.json(out);
  });

  const cancelMany = (ids: string[], creds: ApiCreds) => {
    const canceled: string[] = [];
    const not_canceled: Record<string, string> = {};
    for (const id of ids) {
      const why = venue.cancel(id, creds.address);
      if (why) not_canceled[id] = why;
      else canceled.push(id);
    }
    return { canceled, not_canceled };
  };

  app.delete('/order', async (c) => {
    const gate = modeGate(c, 'cancel');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = parseJson(auth.body) as { orderID?: unknown } | undefined;
    if (!raw || typeof raw.orderID !== 'string') return fail(c, 400, 'Invalid orderID');
    return c.json(cancelMany([raw.orderID], auth.creds));
  });

  app.delete('/orders', async (c) => {
    const gate = modeGate(c, 'cancel');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = parseJson(auth.body);
    if (!Array.isArray(raw) || !raw.every((x) => typeof x === 'string')) return fail(c, 400, 'Invalid payload');
    if (raw.length > CANCEL_BATCH_MAX) return fail(c, 400, `Too many orders in payload, max allowed: ${CANCEL_BATCH_MAX}`);
    return c.json(cancelMany(raw as string[], auth.creds));
  });

  app.delete('/cancel-all', async (c) => {
    const gate = modeGate(c, 'cancel');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const ids = [...venue.orders.values()].filter((o) => o.address === auth.creds.address.toLowerCase() && o.status === 'live').map((o) => o.id);
    return c.json(cancelMany(ids, auth.creds));
  });

  const outcomeOf = (tokenId: string) => {
    const m = venue.tokenIndex.get(tokenId);
    return m ? m.outcomes[m.tokenIds.indexOf(tokenId)]! : '';
  };

  /** An order as `GET /data/order/{id}` and `/data/orders` answer it (bindings `OpenOrderSchema`). */
  const orderView = (o: ClobOrderRec) => ({
    id: o.id,
    status: o.status === 'live' ? 'LIVE' : o.status === 'matched' ? 'MATCHED' : o.status === 'canceled' ? 'CANCELED' : 'UNMATCHED',
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

  /** One cursor page (`next_cursor` base64 of the offset; `MA==` first, `LTE=` after the last page). */
  const page = <T,>(c: Context, rows: T[]) => {
    const cursor = c.req.query('next_cursor') || FIRST_CURSOR;
    if (cursor === END_CURSOR) return c.json({ data: [], next_cursor: END_CURSOR, limit: PAGE, count: 0 });
    const offset = Number(Buffer.from(cursor, 'base64').toString());
    if (!Number.isSafeInteger(offset) || offset < 0) return fail(c, 400, 'invalid next_cursor');
    const data = rows.slice(offset, offset + PAGE);
    const next = offset + PAGE < rows.length ? Buffer.from(String(offset + PAGE)).toString('base64') : END_CURSOR;
    return c.json({ data, next_cursor: next, limit: PAGE, count: data.length });
  };

  app.get('/data/orders', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    venue.expire();
    const id = c.req.query('id');
    const market = c.req.query('market');
    const asset = c.req.query('asset_id');
    const rows = [...venue.orders.values()]
      .filter(
        (o) =>
          o.address === auth.creds.address.toLowerCase() &&
          o.status === 'live' &&
          (!id || o.id === id) &&
          (!asset || o.tokenId === asset) &&
          (!market || venue.tokenIndex.get(o.tokenId)?.conditionId === market),
      )
      .sort((a, b) => b.seq - a.seq)
      .map(orderView);
    return page(c, rows);
  });

  app.get('/data/order/:id', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    venue.expire();
    const o = venue.orders.get(c.req.param('id'));
    if (!o || o.address !== auth.creds.address.toLowerCase()) return fail(c, 404, 'order not found');
    return c.json(orderView(o));
  });

  /** A fill as `GET /data/trades` answers it (bindings `ClobTradeSchema`), from one of the account's rows. */
  const tradeView = (t: (typeof venue.trades)[number]) => {
    const m = venue.tokenIndex.get(t.tokenId);
    const makerRows = venue.trades.filter((x) => x.matchId === t.matchId && x.role === 'MAKER');
    const taker = venue.trades.find((x) => x.matchId === t.matchId && x.role === 'TAKER')!;
    const at = Math.floor(t.at / 1000);
    return {
      id: t.matchId,
      taker_order_id: t.takerOrderId,
      market: m?.conditionId ?? '',
      asset_id: t.tokenId,
      side: taker.side,
      size: fromUnits(t.size, 6),
      fee_rate_bps: '0',
      price: fromUnits(t.price, 6),
      status: 'TRADE_STATUS_CONFIRMED',
      match_time: String(at),
      last_update: String(at),
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

  app.get('/data/trades', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const q = (k: string) => c.req.query(k);
    const me = auth.creds.address.toLowerCase();
    const before = q('before') ? Number(q('before')) : undefined;
    const after = q('after') ? Number(q('after')) : undefined;
    const rows = venue.trades
      .filter(
        (t) =>
          t.address === me &&
          (!q('id') || t.matchId === q('id')) &&
          (!q('asset_id') || t.tokenId === q('asset_id')) &&
          (!q('market') || venue.tokenIndex.get(t.tokenId)?.conditionId === q('market')) &&
          (!q('taker') || (t.role === 'TAKER' && t.address === q('taker')!.toLowerCase())) &&
          (!q('maker') || (t.role === 'MAKER' && t.address === q('maker')!.toLowerCase())) &&
          (before === undefined || t.at / 1000 < before) &&
          (after === undefined || t.at / 1000 > after),
      )
      .slice()
      .reverse()
      .map(tradeView);
    return page(c, rows);
  });

  app.delete('/cancel-market-orders', async (c) => {
    const gate = modeGate(c, 'cancel');
    if (gate) return gate;
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = (parseJson(auth.body) ?? {}) as { market?: unknown; asset_id?: unknown };
    if (typeof raw !== 'object' || (raw.market !== undefined && typeof raw.market !== 'string') || (raw.asset_id !== undefined && typeof raw.asset_id !== 'string')) {
      return fail(c, 400, 'Invalid payload');
    }
    const ids = [...venue.orders.values()]
      .filter(
        (o) =>
          o.address === auth.creds.address.toLowerCase() &&
          o.status === 'live' &&
          (!raw.asset_id || o.tokenId === raw.asset_id) &&
          (!raw.market || venue.tokenIndex.get(o.tokenId)?.conditionId === raw.market),
      )
      .map((o) => o.id);
    return c.json(cancelMany(ids, auth.creds));
  });

  app.post('/v1/heartbeats', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const raw = parseJson(auth.body) as { heartbeat_id?: unknown } | undefined;
    const id = raw && typeof raw.heartbeat_id === 'string' ? raw.heartbeat_id : undefined;
    if (id === undefined) return fail(c, 400, 'Invalid payload');
    const session = venue.heartbeat(auth.creds.address, id, ctx.now());
    if (!session) return fail(c, 400, 'Invalid heartbeat id');
    return c.json({ heartbeat_id: session });
  });

  app.get('/auth/ban-status/closed-only', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    return c.json({ closed_only: false });
  });

  app.get('/auth/api-keys', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const keys = [...venue.creds.values()].filter((k) => k.address.toLowerCase() === auth.creds.address.toLowerCase()).map((k) => k.apiKey);
    return c.json({ apiKeys: keys });
  });

  app.delete('/auth/api-key', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    venue.creds.delete(auth.creds.apiKey);
    venue.credsByNonce.delete(`${auth.creds.address.toLowerCase()}:${auth.creds.nonce}`);
    return c.json('OK');
  });

  app.get('/balance-allowance', async (c) => {
    const auth = await verifyL2(c);
    if (!auth) return fail(c, 401, UNAUTHORIZED);
    const assetType = c.req.query('asset_type') ?? 'COLLATERAL';
    if (assetType !== 'COLLATERAL' && assetType !== 'CONDITIONAL') return fail(c, 400, 'Invalid asset type');
    const who = auth.creds.address;
    const balance = assetType === 'COLLATERAL' ? venue.balanceOf(who) : venue.tokenBalance(who, c.req.query('token_id') ?? '');
    const max = ((1n << 256n) - 1n).toString();
    return c.json({ balance: balance.toString(), allowances: { [exchangeAddress({ negRisk: false })]: max, [exchangeAddress({ negRisk: true })]: max } });
  });

  // ------------------------------------------------------------------------------------------
  // Public reads

  const tokenOf = (c: Context): { tokenId: string } | Response => {
    const tokenId = c.req.query('token_id') ?? '';
    if (!/^\d{1,78}$/.test(tokenId)) return fail(c, 400, 'Invalid token id');
    if (!venue.tokenIndex.has(tokenId)) return fail(c, 404, 'No orderbook exists for the requested token id');
    return { tokenId };
  };

  const levels = (side: ClobOrderRec[]) => {
    const out: { price: string; size: string }[] = [];
    for (const o of side) {
      const p = fromUnits(o.price, 6);
      const last = out[out.length - 1];
      const size = o.originalSize - o.matched;
      if (last && last.price === p) last.size = fromUnits(toUnits(last.size, 6)! + size, 6);
      else out.push({ price: p, size: fromUnits(size, 6) });
    }
    return out;
  };

  /** A book summary as the venue answers it, `hash` the SHA-1 of its JSON with `hash: ""` (the official client's `generateOrderBookSummaryHash`). */
  const bookView = (tokenId: string) => {
    const m = venue.tokenIndex.get(tokenId)!;
    const b = venue.book(tokenId);
    const last = venue.lastTrade.get(tokenId);
    // Like the venue: bids ascending and asks descending (best price last).
    const summary = {
      market: m.conditionId,
      asset_id: tokenId,
      timestamp: String(ctx.now()),
      hash: '',
      bids: levels(b.bids).reverse(),
      asks: levels(b.asks).reverse(),
      min_order_size: m.minSize,
      tick_size: m.tickSize,
      neg_risk: m.negRisk,
      last_trade_price: last ? fromUnits(last.price, 6) : '0.5',
    };
    summary.hash = createHash('sha1').update(JSON.stringify(summary)).digest('hex');
    return summary;
  };

  app.get('/book', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    venue.expire();
    return c.json(bookView(t.tokenId));
  });

  app.get('/tick-size', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    return c.json({ minimum_tick_size: Number(venue.tokenIndex.get(t.tokenId)!.tickSize) });
  });

  app.get('/neg-risk', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    return c.json({ neg_risk: venue.tokenIndex.get(t.tokenId)!.negRisk });
  });

  app.get('/price', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    const side = c.req.query('side');
    if (side !== 'BUY' && side !== 'SELL') return fail(c, 400, 'Invalid side');
    const best = bestPrice(t.tokenId, side);
    if (best === undefined) return fail(c, 404, 'No orderbook exists for the requested token id');
    return c.json({ price: fromUnits(best, 6) });
  });

  const mid = (tokenId: string): bigint | undefined => {
    const b = venue.book(tokenId);
    return b.bids[0] && b.asks[0] ? (b.bids[0].price + b.asks[0].price) / 2n : undefined;
  };
  const spread = (tokenId: string): bigint | undefined => {
    const b = venue.book(tokenId);
    return b.bids[0] && b.asks[0] ? b.asks[0].price - b.bids[0].price : undefined;
  };
  /** Best price on the book side a `side` order would rest on (BUY: best bid; SELL: best ask), as the venue's `/price`. */
  const bestPrice = (tokenId: string, side: 'BUY' | 'SELL'): bigint | undefined => {
    const b = venue.book(tokenId);
    return (side === 'BUY' ? b.bids[0] : b.asks[0])?.price;
  };

  app.get('/midpoint', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    const m = mid(t.tokenId);
    if (m === undefined) return fail(c, 404, 'No orderbook exists for the requested token id');
    return c.json({ mid: fromUnits(m, 6) });
  });

  app.get('/spread', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    const s = spread(t.tokenId);
    if (s === undefined) return fail(c, 404, 'No orderbook exists for the requested token id');
    return c.json({ spread: fromUnits(s, 6) });
  });

  /** Batch reads take `[{ token_id, side? }]` (at most 500). Unknown tokens are left out of the answer. */
  const batch = async (c: Context): Promise<{ token_id: string; side?: string }[] | Response> => {
    const raw = parseJson(await c.req.text());
    if (!Array.isArray(raw) || raw.length > 500 || !raw.every((x) => x && typeof x === 'object' && typeof (x as { token_id?: unknown }).token_id === 'string')) {
      return fail(c, 400, 'Invalid payload');
    }
    return (raw as { token_id: string; side?: string }[]).filter((x) => venue.tokenIndex.has(x.token_id));
  };

  app.post('/books', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    venue.expire();
    return c.json(items.map((x) => bookView(x.token_id)));
  });
  app.post('/midpoints', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    return c.json(Object.fromEntries(items.flatMap((x) => (mid(x.token_id) === undefined ? [] : [[x.token_id, fromUnits(mid(x.token_id)!, 6)]]))));
  });
  app.post('/spreads', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    return c.json(Object.fromEntries(items.flatMap((x) => (spread(x.token_id) === undefined ? [] : [[x.token_id, fromUnits(spread(x.token_id)!, 6)]]))));
  });
  app.post('/prices', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    const out: Record<string, Record<string, string>> = {};
    for (const x of items) {
      const sides: ('BUY' | 'SELL')[] = x.side === 'BUY' || x.side === 'SELL' ? [x.side] : ['BUY', 'SELL'];
      for (const side of sides) {
        const p = bestPrice(x.token_id, side);
        if (p !== undefined) (out[x.token_id] ??= {})[side] = fromUnits(p, 6);
      }
    }
    return c.json(out);
  });

  app.get('/last-trade-price', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    const last = venue.lastTrade.get(t.tokenId);
    return c.json(last ? { price: fromUnits(last.price, 6), side: last.side } : { price: '0', side: '' });
  });
  app.post('/last-trades-prices', async (c) => {
    const items = await batch(c);
    if (items instanceof Response) return items;
    return c.json(
      items.flatMap((x) => {
        const last = venue.lastTrade.get(x.token_id);
        return last ? [{ token_id: x.token_id, price: fromUnits(last.price, 6), side: last.side }] : [];
      }),
    );
  });

  /**
   * `GET /prices-history?market=<token>&interval=1h|6h|1d|1w|1m|max` or `startTs`/`endTs` (Unix s), with
   * `fidelity` (minutes, default 60): `{ history: [{ t, p }] }`. The sandbox has no recorded history:
   * every point is the current midpoint (or the last trade when the book is one-sided).
   */
  app.get('/prices-history', (c) => {
    const tokenId = c.req.query('market') ?? '';
    if (!venue.tokenIndex.has(tokenId)) return fail(c, 400, 'Invalid market');
    const spans: Record<string, number> = { '1h': 3_600, '6h': 21_600, '1d': 86_400, '1w': 604_800, '1m': 2_592_000, max: 2_592_000 };
    const end = c.req.query('endTs') ? Number(c.req.query('endTs')) : nowS();
    const interval = c.req.query('interval');
    const start = c.req.query('startTs') ? Number(c.req.query('startTs')) : interval && spans[interval] ? end - spans[interval]! : undefined;
    if (start === undefined || !Number.isFinite(start) || !Number.isFinite(end) || start > end) return fail(c, 400, 'Invalid interval or startTs/endTs');
    const step = Math.max(1, Number(c.req.query('fidelity') ?? '60')) * 60;
    const p = Number(fromUnits(mid(tokenId) ?? venue.lastTrade.get(tokenId)?.price ?? PRICE_SCALE / 2n, 6));
    const history: { t: number; p: number }[] = [];
    for (let t = start; t <= end && history.length < 5_000; t += step) history.push({ t, p });
    return c.json({ history });
  });

  app.get('/fee-rate', (c) => {
    const t = tokenOf(c);
    if (t instanceof Response) return t;
    return c.json({ base_fee: 0 });
  });

  app.get('/time', (c) => c.json(nowS()));
  app.get('/version', (c) => c.json({ version: 2 }));

  const marketByCondition = (id: string) => venue.markets.find((m) => m.conditionId.toLowerCase() === id.toLowerCase());

  /** Compact market info (`c` condition, `t` tokens, `mts` tick, `nr` neg-risk, `fd` fee, `mos` min size, `ao` accepting orders). */
  app.get('/clob-markets/:condition_id', (c) => {
    const m = marketByCondition(c.req.param('condition_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({
      c: m.conditionId,
      t: m.tokenIds.map((t, i) => ({ t, o: m.outcomes[i] })),
      mts: Number(m.tickSize),
      nr: m.negRisk,
      fd: { r: 0, e: 0 },
      mos: Number(m.minSize),
      ao: !m.closed,
    });
  });

  app.get('/markets-by-token/:token_id', (c) => {
    const m = venue.tokenIndex.get(c.req.param('token_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({ condition_id: m.conditionId, primary_token_id: m.tokenIds[0], secondary_token_id: m.tokenIds[1] });
  });

  app.get('/markets/:condition_id', (c) => {
    const m = marketByCondition(c.req.param('condition_id'));
    if (!m) return fail(c, 404, 'market not found');
    return c.json({
      condition_id: m.conditionId,
      question: m.question,
      market_slug: m.slug,
      active: !m.closed,
      closed: m.closed,
      accepting_orders: !m.closed,
      enable_order_book: true,
      minimum_order_size: Number(m.minSize),
      minimum_tick_size: Number(m.tickSize),
      neg_risk: m.negRisk,
      tokens: m.tokenIds.map((t, i) => ({ token_id: t, outcome: m.outcomes[i], price: Number(fromUnits(mid(t) ?? PRICE_SCALE / 2n, 6)) })),
    });
  });

  app.get('/ok', (c) => c.text('OK'));

  return app;
}
