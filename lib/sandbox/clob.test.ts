import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { buildL1Headers, buildL2Headers, type ApiCredentials } from '../clob/auth';
import { toOrderAmounts } from '../clob/amounts';
import { clobL2Request, createOrDeriveApiKey } from '../clob/client';
import {
  ClobCancelOnlyError,
  ClobError,
  ClobInvalidL1HeadersError,
  ClobOrderRejectedError,
  ClobPostOnlyModeError,
  ClobRateLimitedError,
  ClobRestartingError,
  ClobTradingDisabledError,
  ClobUnauthorizedError,
  parseBatchResults,
} from '../clob/errors';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody, type OrderType } from '../clob/order';
import { startHarness, type Harness } from '../../test/kits/sandbox';

let h: Harness;
let wallet: LocalAccount;
let creds: ApiCredentials;
const nowS = () => Math.floor(h.clock.now / 1000);
const market = () => h.ctx.clob.markets[0]!;
const negRiskMarket = () => h.ctx.clob.markets.find((m) => m.negRisk)!;

async function orderBody(o: {
  price: string;
  size: string;
  side?: 'BUY' | 'SELL';
  orderType?: OrderType;
  postOnly?: boolean;
  negRisk?: boolean;
  tokenId?: string;
  signOn?: 'standard' | 'neg-risk';
  owner?: string;
  signer?: LocalAccount;
  amounts?: { makerAmount: string; takerAmount: string };
}) {
  const m = o.negRisk ? negRiskMarket() : market();
  const side = o.side ?? 'BUY';
  const amounts = o.amounts ?? toOrderAmounts({ side, price: o.price, size: o.size, tickSize: m.tickSize });
  const signer = o.signer ?? wallet;
  const order = buildClobOrder({
    signer: signer.address,
    signatureType: 0,
    tokenId: o.tokenId ?? m.tokenIds[0],
    side,
    makerAmount: amounts.makerAmount,
    takerAmount: amounts.takerAmount,
    timestampMs: h.clock.now,
  });
  const signOnNeg = o.signOn ? o.signOn === 'neg-risk' : m.negRisk;
  const signature = await signClobOrder(signer, {
    chainId: h.ctx.config.clobChainId,
    verifyingContract: exchangeAddress({ negRisk: signOnNeg }),
    order,
  });
  return toPostOrderBody({
    order,
    signature,
    owner: o.owner ?? creds.apiKey,
    orderType: o.orderType ?? 'GTC',
    postOnly: o.postOnly ?? false,
  });
}

const l2 = (method: string, requestPath: string, body?: unknown) =>
  clobL2Request(h.clobUrl, {
    address: wallet.address,
    credentials: creds,
    method,
    requestPath,
    body,
    timestamp: nowS(),
  });

async function clobError(p: Promise<unknown>): Promise<ClobError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ClobError);
    return err as ClobError;
  }
  throw new Error('expected the exchange to refuse');
}
const liveOrders = async () => ((await l2('GET', '/data/orders')) as { data: { id: string }[] }).data;
const setMode = (mode: string, retry_after_seconds?: number) =>
  fetch(`${h.url}/admin/clob-mode`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode, retry_after_seconds }),
  });

beforeEach(async () => {
  h = await startHarness();
  wallet = privateKeyToAccount(generatePrivateKey());
  creds = (
    await createOrDeriveApiKey(h.clobUrl, wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS(), nonce: 0 })
  ).credentials;
});
afterEach(async () => {
  await h.close();
});

describe('order-book exchange: L1 credentials', () => {
  it('creates, refuses a used nonce, derives the same credentials, and creates with another nonce', async () => {
    const input = { chainId: h.ctx.config.clobChainId, timestamp: nowS(), nonce: 0 };
    const again = await createOrDeriveApiKey(h.clobUrl, wallet, input);
    expect(again).toEqual({ credentials: creds, derived: true });
    const other = await createOrDeriveApiKey(h.clobUrl, wallet, { ...input, nonce: 7 });
    expect(other.derived).toBe(false);
    expect(other.credentials.apiKey).not.toBe(creds.apiKey);
  });

  it('answers 401 Invalid L1 Request headers to a wrong signer, a stale timestamp or a wrong chain', async () => {
    const post = async (headers: Record<string, string>) => {
      const res = await fetch(`${h.clobUrl}/auth/api-key`, { method: 'POST', headers });
      return [res.status, ((await res.json()) as { error: string }).error];
    };
    const other = privateKeyToAccount(generatePrivateKey());
    const forged = {
      ...(await buildL1Headers(other, { chainId: h.ctx.config.clobChainId, timestamp: nowS(), nonce: 3 })),
      SVC_ADDRESS: wallet.address,
    };
    expect(await post(forged)).toEqual([401, 'Invalid L1 Request headers']);
    expect(
      await post({
        ...(await buildL1Headers(wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS() - 3_600, nonce: 3 })),
      }),
    ).toEqual([401, 'Invalid L1 Request headers']);
    expect(await post({ ...(await buildL1Headers(wallet, { chainId: 137, timestamp: nowS(), nonce: 3 })) })).toEqual([
      401,
      'Invalid L1 Request headers',
    ]);
    const err = await clobError(createOrDeriveApiKey(h.clobUrl, wallet, { chainId: 1, timestamp: nowS(), nonce: 0 }));
    expect(err).toBeInstanceOf(ClobInvalidL1HeadersError);
  });

  it('cannot derive a nonce that was never used', async () => {
    const res = await fetch(`${h.clobUrl}/auth/derive-api-key`, {
      headers: {
        ...(await buildL1Headers(wallet, { chainId: h.ctx.config.clobChainId, timestamp: nowS(), nonce: 99 })),
      },
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'Could not derive api key' });
  });
});

describe('order-book exchange: orders', () => {
  it('places a resting GTC order, lists it, and cancels it', async () => {
    const res = (await l2('POST', '/order', await orderBody({ price: '0.40', size: '10' }))) as {
      success: boolean;
      orderID: string;
      status: string;
    };
    expect(res).toMatchObject({ success: true, errorMsg: '', status: 'live' });
    expect((await liveOrders()).map((o) => o.id)).toEqual([res.orderID]);
    expect(await l2('DELETE', '/order', { orderID: res.orderID })).toEqual({
      canceled: [res.orderID],
      not_canceled: {},
    });
    expect(await liveOrders()).toEqual([]);
  });

  it('matches a crossing order against the book; a BUY FOK is sized by collateral (PROTOCOL.md §3.2)', async () => {
    const res = (await l2('POST', '/order', await orderBody({ price: '0.60', size: '10', orderType: 'FOK' }))) as {
      status: string;
      takingAmount: string;
      makingAmount: string;
    };
    expect(res.status).toBe('matched');
    // It spends its whole 6 USDC at the best ask (0.52) and so takes more than the 10 shares it signed
    // for (whole share units: 11.538461 × 0.52 = 5.999999 USDC); amounts are decimal strings, as the venue answers
    // them.
    expect([res.makingAmount, res.takingAmount]).toEqual(['5.999999', '11.538461']);
  });

  it('accepts a negative-risk order signed on the negative-risk exchange only', async () => {
    expect(
      (
        (await l2('POST', '/order', await orderBody({ price: '0.400', size: '10', negRisk: true }))) as {
          success: boolean;
        }
      ).success,
    ).toBe(true);
    const err = await clobError(
      l2('POST', '/order', await orderBody({ price: '0.400', size: '10', negRisk: true, signOn: 'standard' })),
    );
    expect(err.exchangeMessage).toBe('invalid order signature');
  });

  it('refuses a bad HMAC with 401 and places nothing', async () => {
    const body = JSON.stringify(await orderBody({ price: '0.40', size: '10' }));
    const headers = buildL2Headers({
      address: wallet.address,
      credentials: creds,
      timestamp: nowS(),
      method: 'POST',
      requestPath: '/order',
      body,
    });
    const res = await fetch(`${h.clobUrl}/order`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: body.replace('"GTC"', '"GTD"'),
    });
    expect(res.status).toBe(401);
    const wrongSecret = { ...creds, secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' };
    const err = await clobError(
      clobL2Request(h.clobUrl, {
        address: wallet.address,
        credentials: wrongSecret,
        method: 'GET',
        requestPath: '/data/orders',
        timestamp: nowS(),
      }),
    );
    expect(err).toBeInstanceOf(ClobUnauthorizedError);
    expect(await liveOrders()).toEqual([]);
  });

  it('enforces owner and signer of the API key (400)', async () => {
    const owner = await clobError(
      l2('POST', '/order', await orderBody({ price: '0.40', size: '10', owner: 'someone-else' })),
    );
    expect([owner.status, owner.exchangeMessage]).toEqual([400, 'the order owner has to be the owner of the API KEY']);
    const signer = await clobError(
      l2(
        'POST',
        '/order',
        await orderBody({ price: '0.40', size: '10', signer: privateKeyToAccount(generatePrivateKey()) }),
      ),
    );
    expect(signer.exchangeMessage).toBe('the order signer address has to be the address of the API KEY');
  });

  it('enforces tick size and minimum size', async () => {
    const offTick = await orderBody({
      price: '0.40',
      size: '10',
      amounts: { makerAmount: '4050000', takerAmount: '10000000' },
    });
    expect((await clobError(l2('POST', '/order', offTick))).exchangeMessage).toMatch(
      /price breaks minimum tick size rule/,
    );
    expect(
      (await clobError(l2('POST', '/order', await orderBody({ price: '0.40', size: '1' })))).exchangeMessage,
    ).toMatch(/size lower than the minimum/);
  });

  it('returns per-order errorMsg inside a 200 batch and refuses more than 15', async () => {
    const good = await orderBody({ price: '0.40', size: '10' });
    const bad = await orderBody({ price: '0.40', size: '1' });
    const results = parseBatchResults(await l2('POST', '/orders', [good, bad]), 2);
    expect(results[0]!.ok).toBe(true);
    expect(results[1]!.ok).toBe(false);
    const many = await Promise.all(Array.from({ length: 16 }, () => orderBody({ price: '0.40', size: '10' })));
    expect((await clobError(l2('POST', '/orders', many))).exchangeMessage).toBe(
      'Too many orders in payload: 16, max allowed: 15',
    );
  });
});

describe('order-book exchange: modes', () => {
  it('disabled → 503 for orders and cancels', async () => {
    await setMode('disabled');
    expect(await clobError(l2('POST', '/order', await orderBody({ price: '0.40', size: '10' })))).toBeInstanceOf(
      ClobTradingDisabledError,
    );
    expect(await clobError(l2('DELETE', '/cancel-all'))).toBeInstanceOf(ClobTradingDisabledError);
  });

  it('cancel-only → 503 for new orders, cancels still work', async () => {
    const res = (await l2('POST', '/order', await orderBody({ price: '0.40', size: '10' }))) as { orderID: string };
    await setMode('cancel-only');
    expect(await clobError(l2('POST', '/order', await orderBody({ price: '0.41', size: '10' })))).toBeInstanceOf(
      ClobCancelOnlyError,
    );
    expect(await l2('DELETE', '/cancel-all')).toEqual({ canceled: [res.orderID], not_canceled: {} });
  });

  it(
    'post-only → 503 with code, retry_after_seconds and ' +
      'Retry-After; post-only orders pass; batch items carry errorMsg',
    async () => {
      await setMode('post-only', 45);
      const err = await clobError(l2('POST', '/order', await orderBody({ price: '0.40', size: '10' })));
      expect(err).toBeInstanceOf(ClobPostOnlyModeError);
      expect(err.retryAfterMs).toBe(45_000);
      const raw = await fetch(`${h.clobUrl}/order`, { method: 'POST' });
      expect(raw.headers.get('Retry-After') ?? '45').toBe('45');
      expect(
        (
          (await l2('POST', '/order', await orderBody({ price: '0.40', size: '10', postOnly: true }))) as {
            success: boolean;
          }
        ).success,
      ).toBe(true);
      const batch = parseBatchResults(
        await l2('POST', '/orders', [
          await orderBody({ price: '0.39', size: '10' }),
          await orderBody({ price: '0.38', size: '10', postOnly: true }),
        ]),
      );
      expect(batch.map((r) => r.ok)).toEqual([false, true]);
    },
  );

  it('restarting → 425', async () => {
    await setMode('restarting');
    const err = await clobError(l2('POST', '/order', await orderBody({ price: '0.40', size: '10' })));
    expect(err).toBeInstanceOf(ClobRestartingError);
    expect(err.retryable).toBe(true);
  });

  it('refuses post-only with FOK as an order error', async () => {
    const body = await orderBody({ price: '0.40', size: '10', orderType: 'FOK' });
    expect(await clobError(l2('POST', '/order', { ...body, postOnly: true }))).toBeInstanceOf(ClobOrderRejectedError);
  });
});

describe('order-book exchange: public reads and throttling', () => {
  it(
    'serves book, tick size, neg risk, price and midpoint; ' + '400 for a bad token id, 404 for an unknown one',
    async () => {
      const tid = market().tokenIds[0];
      const get = async (path: string) => {
        const res = await fetch(`${h.clobUrl}${path}`);
        return [res.status, await res.json()] as const;
      };
      const [, book] = await get(`/book?token_id=${tid}`);
      expect(book).toMatchObject({ asset_id: tid, tick_size: '0.01', neg_risk: false, min_order_size: '5' });
      expect(await get(`/tick-size?token_id=${tid}`)).toEqual([200, { minimum_tick_size: 0.01 }]);
      expect(await get(`/neg-risk?token_id=${negRiskMarket().tokenIds[0]}`)).toEqual([200, { neg_risk: true }]);
      expect(await get(`/price?token_id=${tid}&side=BUY`)).toEqual([200, { price: '0.48' }]);
      expect(await get(`/midpoint?token_id=${tid}`)).toEqual([200, { mid: '0.5' }]);
      expect(await get('/book?token_id=abc')).toEqual([400, { error: 'Invalid token id' }]);
      expect(await get('/book?token_id=123')).toEqual([
        404,
        { error: 'No orderbook exists for the requested token id' },
      ]);
      expect((await get(`/price?token_id=${tid}&side=UP`))[0]).toBe(400);
    },
  );

  it('throttles over the seed limits with 429', async () => {
    await h.close();
    h = await startHarness({ config: { clobRateLimitFactor: 0.001 } }); // /book: 1 per 10 s
    const tid = market().tokenIds[0];
    expect((await fetch(`${h.clobUrl}/book?token_id=${tid}`)).status).toBe(200);
    const res = await fetch(`${h.clobUrl}/book?token_id=${tid}`);
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBeTruthy();
    expect(
      await clobError(
        fetch(`${h.clobUrl}/book?token_id=${tid}`).then(async (r) => {
          const { classifyClobAnswer } = await import('../clob/errors');
          throw classifyClobAnswer({ status: r.status, headers: r.headers, body: await r.json() });
        }),
      ),
    ).toBeInstanceOf(ClobRateLimitedError);
  });
});
