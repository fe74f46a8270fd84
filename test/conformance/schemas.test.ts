/**
 * Every sandbox read validates under the venue's own response schemas (`@polymarket/bindings` 0.10.0):
 * perps account and info reads after real fills (positions, PnL, fees, funding), the
 * order-book exchange's public and L2 reads, the catalogue and the data service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import * as perps from '@polymarket/bindings/perps';
import * as clob from '@polymarket/bindings/clob';
import {
  autoCancel,
  cancelAll,
  cancelOrders,
  createOrders,
  createProxy,
  deleteProxy,
  updateLeverage,
  withdraw,
} from '../../lib/perps/commands';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildL2Headers } from '../../lib/clob/auth';
import { toOrderAmounts } from '../../lib/clob/amounts';
import { clobL2Request } from '../../lib/clob/client';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody, type OrderType } from '../../lib/clob/order';
import { startHarness, type Harness } from '../kits/sandbox';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ now: undefined });
  // Trade so that positions, fills, fees and funding exist: a resting order, then a taker buy that fills.
  await h.send(h.proxy, createOrders({ orders: [{ iid: 2, buy: false, qty: '1', p: '3200', tif: 'gtc' }] }));
  await h.send(h.proxy, createOrders({ orders: [{ iid: 1, buy: true, qty: '2', tif: 'ioc' }] }));
  await h.send(h.proxy, createOrders({ orders: [{ iid: 2, buy: true, qty: '0.5', tif: 'ioc' }] }));
  await h.send(
    h.proxy,
    createOrders({
      orders: [
        { iid: 3, buy: true, qty: '1', p: '140', tif: 'gtc' },
        { iid: 3, buy: false, qty: '1', tr: { tpsl: 'sl', trp: '120', market: true } },
      ],
    }),
  );
  // A withdrawal, so the withdrawals read has a row to validate.
  await h.send(
    h.owner,
    withdraw({ account: h.owner.address, token: h.ctx.config.usdc, amount: '2500000', to: h.owner.address }),
  );
  // Order-book fixtures for /data/orders, /data/trades and /v2/activity: a resting bid and a buy that
  // takes the market maker's ask.
  await postClob({ side: 'BUY', price: '0.05', size: '10', orderType: 'GTC' });
  await postClob({ side: 'BUY', price: '0.90', size: '5', orderType: 'GTC' });
  // Two hours later: funding has been paid on the open positions.
  h.clock.advance(2 * 3_600_000 + 1);
});

/** Signs and posts one order-book order as the demo wallet (L2 with the demo API key). */
async function postClob(o: { side: 'BUY' | 'SELL'; price: string; size: string; orderType: OrderType }) {
  const m = h.ctx.clob.markets[0]!;
  const amounts = toOrderAmounts({ side: o.side, price: o.price, size: o.size, tickSize: m.tickSize });
  const order = buildClobOrder({
    signer: h.owner.address,
    signatureType: 0,
    tokenId: m.tokenIds[0],
    side: o.side,
    ...amounts,
    timestampMs: h.clock.now,
  });
  const signature = await signClobOrder(h.owner, {
    chainId: h.ctx.config.clobChainId,
    verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
    order,
  });
  const body = toPostOrderBody({
    order,
    signature,
    owner: h.demo.clob.apiKey,
    orderType: o.orderType,
    postOnly: false,
  });
  const res = await clobL2Request(h.clobUrl, {
    address: h.owner.address,
    credentials: h.demo.clob,
    method: 'POST',
    requestPath: '/order',
    body,
    timestamp: Math.floor(h.clock.now / 1000),
  });
  expect(res).toMatchObject({ success: true });
  return res;
}

/** The rows of a page answer (`{ data: [...] }`) or of an array answer. */
function rows(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  const data = typeof body === 'object' && body !== null && 'data' in body ? body.data : undefined;
  return Array.isArray(data) ? data : [];
}
afterAll(async () => {
  await h?.close();
});

async function get(path: string, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(path, { headers });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return res.json();
}

function valid(schema: ZodType, body: unknown, what: string) {
  const r = schema.safeParse(body);
  expect(r.success, `${what}: ${r.success ? '' : JSON.stringify(r.error.issues.slice(0, 3))}`).toBe(true);
  return r.success ? r.data : undefined;
}

describe('perps reads validate under @polymarket/bindings/perps', () => {
  const auth = () => ({ 'SERVICE-PROXY': h.proxyAuth.proxy, 'SERVICE-SECRET': h.proxyAuth.secret });
  const now = () => h.clock.now;
  /** Reads whose rows the fixtures above create: an empty page would validate any row shape. */
  const withRows = new Set([
    'open orders',
    'orders',
    'fills',
    'funding payments',
    'deposits',
    'withdrawals',
    'trades',
    'klines',
    'funding rates',
  ]);
  const reads: [string, string, () => ZodType, boolean][] = [
    ['portfolio', '/v1/account/portfolio', () => perps.FetchPerpsPortfolioResponseSchema, true],
    ['balances', '/v1/account/balances', () => perps.FetchPerpsBalancesResponseSchema, true],
    ['stats', '/v1/account/stats', () => perps.FetchPerpsAccountStatsResponseSchema, true],
    ['open orders', '/v1/account/open-orders', () => perps.FetchPerpsOpenOrdersResponseSchema, true],
    ['orders', '/v1/account/orders?instrument_id=2', () => perps.FetchPerpsOrdersResponseSchema, true],
    ['fills', '/v1/account/fills', () => perps.ListPerpsFillsResponseSchema, true],
    ['funding payments', '/v1/account/funding', () => perps.ListPerpsFundingPaymentsResponseSchema, true],
    ['deposits', '/v1/account/deposits', () => perps.ListPerpsDepositsResponseSchema, true],
    ['withdrawals', '/v1/account/withdrawals', () => perps.ListPerpsWithdrawalsResponseSchema, true],
    ['equity', '/v1/account/equity?interval=1h', () => perps.ListPerpsEquityHistoryResponseSchema, true],
    ['pnl', '/v1/account/pnl?interval=1h', () => perps.ListPerpsPnlHistoryResponseSchema, true],
    ['config', '/v1/account/config', () => perps.FetchPerpsAccountConfigResponseSchema, true],
    ['credentials', '/v1/account/credentials', () => perps.PerpsCredentialsResponseSchema, true],
    ['instruments', '/v1/info/instruments', () => perps.FetchPerpsInstrumentsResponseSchema, false],
    ['book', '/v1/info/book?instrument_id=2', () => perps.PerpsBookSchema, false],
    ['tickers', '/v1/info/tickers', () => perps.FetchPerpsTickersResponseSchema, false],
    ['statistics', '/v1/info/statistics', () => perps.FetchPerpsStatisticsResponseSchema, false],
    ['trades', '/v1/info/trades?instrument_id=2', () => perps.FetchPerpsTradesResponseSchema, false],
    ['klines', '/v1/info/klines?instrument_id=2&interval=1h', () => perps.FetchPerpsCandlesResponseSchema, false],
    ['funding rates', '/v1/info/funding?instrument_id=2', () => perps.FetchPerpsFundingHistoryResponseSchema, false],
    ['fees', '/v1/info/fees', () => perps.FetchPerpsFeesResponseSchema, false],
  ];
  for (const [name, path, schema, authed] of reads) {
    it(`${name} (${path.split('?')[0]})`, async () => {
      const body = await get(`${h.perps}${path}`, authed ? auth() : {});
      if (withRows.has(name)) expect(rows(body).length, `${name} has rows`).toBeGreaterThan(0);
      valid(schema(), body, name);
    });
  }

  it('a fill moves the position, the PnL, the fees and the funding (numbers from the venue-shaped reads)', async () => {
    const p = valid(
      perps.FetchPerpsPortfolioResponseSchema,
      await get(`${h.perps}/v1/account/portfolio`, auth()),
      'portfolio',
    ) as {
      positions: {
        instrumentId: number;
        size: string;
        entryPrice: string;
        liquidationPrice: string;
        unrealizedPnl: string;
        cumulativeFunding: string;
      }[];
    };
    // 2 BTC (≈ 130 000 USDC notional) against ≈ 100 000 USDC of collateral: a liquidation price exists.
    const eth = p.positions.find((x) => x.instrumentId === 1)!;
    expect(Number(eth.size)).toBeCloseTo(2);
    expect(Number(eth.entryPrice)).toBeGreaterThan(60_000);
    expect(Number(eth.liquidationPrice)).toBeGreaterThan(0);
    expect(Number(eth.liquidationPrice)).toBeLessThan(Number(eth.entryPrice));
    // At the liquidation price, account value equals the maintenance margin (within rounding).
    const margin = (p as unknown as { margin: { totalAccountValue: string } }).margin;
    const balance =
      Number(margin.totalAccountValue) -
      Number(eth.unrealizedPnl) -
      p.positions.filter((x) => x.instrumentId !== 1).reduce((a, x) => a + Number(x.unrealizedPnl), 0);
    const others = p.positions
      .filter((x) => x.instrumentId !== 1)
      .reduce(
        (a, x) =>
          a + Number(x.unrealizedPnl) - Number((x as unknown as { maintenanceMargin: string }).maintenanceMargin),
        0,
      );
    const liq = Number(eth.liquidationPrice);
    const equityAtLiq = balance + others + 2 * (liq - Number(eth.entryPrice));
    expect(Math.abs(equityAtLiq - (2 * liq) / (2 * 50))).toBeLessThan(1);
    expect(Number(eth.cumulativeFunding)).not.toBe(0);
    const fills = valid(
      perps.ListPerpsFillsResponseSchema,
      await get(`${h.perps}/v1/account/fills`, auth()),
      'fills',
    ) as { data: { fee: string; taker: boolean }[] };
    expect(fills.data.filter((f) => f.taker).every((f) => Number(f.fee) > 0)).toBe(true);
    const funding = valid(
      perps.ListPerpsFundingPaymentsResponseSchema,
      await get(`${h.perps}/v1/account/funding`, auth()),
      'funding',
    ) as { data: unknown[] };
    expect(funding.data.length).toBeGreaterThanOrEqual(2);
    const open = (await get(`${h.perps}/v1/account/open-orders`, auth())) as { status: string; tpsl?: unknown }[];
    valid(perps.FetchPerpsOpenOrdersResponseSchema, open, 'open');
    expect(open.some((o) => (o.status === 'untriggered' || o.status === 'armed') && o.tpsl)).toBe(true);
    // Funding settles on the hour, never ahead of the sandbox clock.
    const hours = (funding.data as { timestamp: number }[]).map((f) => f.timestamp);
    expect(hours.every((t) => t % 3_600_000 === 0 && t <= now())).toBe(true);
  });
});

describe('perps command answers validate under @polymarket/bindings/perps', () => {
  it(
    'createOrders, cancelOrders, cancelAll, updateLeverage, ' + 'autoCancel, withdraw, createProxy and deleteProxy',
    async () => {
      const acks = await h.send(
        h.proxy,
        createOrders({ orders: [{ iid: 3, buy: true, qty: '1', p: '100', tif: 'gtc' }] }),
      );
      for (const a of acks as unknown[]) valid(perps.PerpsPostOrderAckSchema, a, 'createOrders ack');
      const oid = (acks as { oid: number }[])[0]!.oid;
      for (const r of (await h.send(h.proxy, cancelOrders({ oids: [oid, 999_999] }))) as unknown[])
        valid(perps.PerpsCancelOrderResultSchema, r, 'cancel result');
      valid(perps.PerpsCancelAllOrdersResponseSchema, await h.send(h.proxy, cancelAll({})), 'cancelAll');
      valid(
        perps.PerpsUpdateLeverageResultSchema,
        await h.send(h.proxy, updateLeverage({ iid: 3, lev: 4, cross: true })),
        'updateLeverage',
      );
      valid(
        perps.PerpsAutoCancelResponseSchema,
        await h.send(h.proxy, autoCancel({ time: h.clock.now + 60_000 })),
        'autoCancel',
      );
      valid(
        perps.PerpsWithdrawResponseSchema,
        await h.send(
          h.owner,
          withdraw({ account: h.owner.address, token: h.ctx.config.usdc, amount: '1000000', to: h.owner.address }),
        ),
        'withdraw',
      );
      const proxy = privateKeyToAccount(generatePrivateKey()).address;
      valid(
        perps.PerpsCreateProxyResponseSchema,
        await h.send(h.owner, createProxy({ owner: h.owner.address, proxy, expiry: h.clock.now + 3_600_000 })),
        'createProxy',
      );
      valid(perps.PerpsDeleteProxyResponseSchema, await h.send(h.owner, deleteProxy({ proxy })), 'deleteProxy');
    },
  );
});

describe('order-book reads validate under @polymarket/bindings/clob', () => {
  const l2 = (method: string, path: string) => ({
    ...buildL2Headers({
      address: h.demo.clob.address,
      credentials: h.demo.clob,
      timestamp: Math.floor(h.clock.now / 1000),
      method,
      requestPath: path,
    }),
  });
  const token = () => h.ctx.clob.markets[0]!.tokenIds[0];
  const condition = () => h.ctx.clob.markets[0]!.conditionId;

  it('public reads', async () => {
    const q = `?token_id=${token()}`;
    valid(clob.OrderBookSchema, await get(`${h.clobUrl}/book${q}`), 'book');
    valid(clob.TickSizeSchema, await get(`${h.clobUrl}/tick-size${q}`), 'tick-size');
    valid(clob.NegRiskSchema, await get(`${h.clobUrl}/neg-risk${q}`), 'neg-risk');
    valid(clob.MidpointSchema, await get(`${h.clobUrl}/midpoint${q}`), 'midpoint');
    valid(clob.PriceSchema, await get(`${h.clobUrl}/price${q}&side=BUY`), 'price');
    valid(clob.SpreadSchema, await get(`${h.clobUrl}/spread${q}`), 'spread');
    valid(clob.LastTradePriceSchema, await get(`${h.clobUrl}/last-trade-price${q}`), 'last-trade-price');
    valid(clob.MarketInfoSchema, await get(`${h.clobUrl}/clob-markets/${condition()}`), 'clob-markets');
    valid(clob.ConditionByTokenSchema, await get(`${h.clobUrl}/markets-by-token/${token()}`), 'markets-by-token');
    const post = async (path: string, body: unknown) =>
      (
        await fetch(`${h.clobUrl}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
    valid(clob.OrderBooksSchema, await post('/books', [{ token_id: token() }]), 'books');
    valid(clob.MidpointsSchema, await post('/midpoints', [{ token_id: token() }]), 'midpoints');
    valid(clob.PricesSchema, await post('/prices', [{ token_id: token(), side: 'BUY' }]), 'prices');
    valid(clob.SpreadsSchema, await post('/spreads', [{ token_id: token() }]), 'spreads');
    valid(clob.LastTradePricesSchema, await post('/last-trades-prices', [{ token_id: token() }]), 'last-trades-prices');
  });

  it('L2 reads', async () => {
    const orders = await get(`${h.clobUrl}/data/orders?next_cursor=MA==`, l2('GET', '/data/orders'));
    expect(rows(orders).length, 'the resting bid is listed').toBeGreaterThan(0);
    valid(clob.OpenOrdersPageSchema, orders, 'data/orders');
    const trades = await get(`${h.clobUrl}/data/trades`, l2('GET', '/data/trades'));
    expect(rows(trades).length, 'the taken ask is listed').toBeGreaterThan(0);
    valid(clob.ClobTradesPageSchema, trades, 'data/trades');
    valid(
      clob.BalanceAllowanceResponseSchema,
      await get(`${h.clobUrl}/balance-allowance?asset_type=COLLATERAL`, l2('GET', '/balance-allowance')),
      'balance-allowance',
    );
    valid(clob.ApiKeysResponseSchema, await get(`${h.clobUrl}/auth/api-keys`, l2('GET', '/auth/api-keys')), 'api-keys');
    valid(
      clob.ClosedOnlyModeSchema,
      await get(`${h.clobUrl}/auth/ban-status/closed-only`, l2('GET', '/auth/ban-status/closed-only')),
      'closed-only',
    );
  });
});

describe('catalogue and data reads validate under @polymarket/bindings/gamma and /data', () => {
  it('events and markets (plain and keyset)', async () => {
    const gamma = await import('@polymarket/bindings/gamma');
    const m = h.ctx.clob.markets[0]!;
    valid(gamma.ListMarketsKeysetResponseSchema, await get(`${h.url}/gamma/markets/keyset?limit=5`), 'markets/keyset');
    valid(gamma.ListEventsKeysetResponseSchema, await get(`${h.url}/gamma/events/keyset?limit=5`), 'events/keyset');
    valid(gamma.ListMarketsResponseSchema, await get(`${h.url}/gamma/markets?limit=5`), 'markets');
    valid(gamma.ListEventsResponseSchema, await get(`${h.url}/gamma/events?limit=5`), 'events');
    valid(gamma.EventSchema, await get(`${h.url}/gamma/events/${m.eventId}`), 'events/{id}');
  });

  it('positions, value and activity', async () => {
    const data = await import('@polymarket/bindings/data');
    const user = h.demo.owner.address;
    valid(data.ListPositionsResponseSchema, await get(`${h.url}/data/v2/positions?user=${user}`), 'v2/positions');
    valid(data.FetchPortfolioValueResponseSchema, await get(`${h.url}/data/v2/value?user=${user}`), 'v2/value');
    const activity = await get(`${h.url}/data/v2/activity?user=${user}`);
    expect(rows(activity).length, 'the order-book fill is listed').toBeGreaterThan(0);
    valid(data.ListActivityResponseSchema, activity, 'v2/activity');
  });
});
