/**
 * Wire bytes against the official client: for the same key, salt and timestamp, the
 * extension's L1 headers, L2 headers and `POST /order` bodies equal `@polymarket/clob-client-v2`'s byte
 * for byte. Headers are compared as the extension sends them with the venue's header set (`POLY_*`,
 * `applyHeaderSet(…, 'venue')`, the presets' setting; no renaming in the test — the sandbox
 * accepts both sets). Limit orders over every tick size and both sides, negative-risk markets, and
 * market-style FOK / FAK orders (price rounded down on both sides, PROTOCOL.md §3.4).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  createL1Headers,
  createL2Headers,
  OrderBuilder,
  orderToJsonV2,
  OrderType,
  Side,
  type SignedOrder,
} from '@polymarket/clob-client-v2';
import { buildL1Headers, buildL2Headers } from '../../lib/clob/auth';
import { applyHeaderSet } from '../../lib/http/headers';
import { orderRequestAmounts } from '../../lib/clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../../lib/clob/order';

const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const account = privateKeyToAccount(KEY);
const wallet = createWalletClient({ account, transport: http('http://127.0.0.1:9') });
const CHAIN = 80002;
const CREDS = {
  key: 'b2c5e1a8-0000-4000-8000-000000000001',
  secret: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  passphrase: 'pass-phrase',
};
const TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
/**
 * The headers as the extension puts them on the wire with the venue's header set (the presets' `headerSet: 'venue'`).
 */
const sent = (h: Record<string, string>) => applyHeaderSet(h, 'venue');

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('L1 and L2 headers', () => {
  it.each([0, 23])('L1 headers for nonce %i equal the official client', async (nonce) => {
    const official = await createL1Headers(wallet, CHAIN, nonce, 1_767_000_000);
    expect(sent(await buildL1Headers(account, { chainId: CHAIN, timestamp: 1_767_000_000, nonce }))).toEqual(official);
  });

  it.each([
    ['GET', '/data/orders', undefined],
    ['POST', '/order', '{"deferExec":false,"postOnly":false}'],
    ['DELETE', '/orders', '["0xabc","0xdef"]'],
    ['POST', '/v1/heartbeats', '{"heartbeat_id":""}'],
  ])('L2 headers for %s %s equal the official client', async (method, requestPath, body) => {
    const official = await createL2Headers(
      wallet,
      CREDS,
      { method, requestPath, ...(body === undefined ? {} : { body }) },
      1_767_000_000,
    );
    const ours = buildL2Headers({
      address: account.address,
      credentials: { apiKey: CREDS.key, secret: CREDS.secret, passphrase: CREDS.passphrase },
      timestamp: 1_767_000_000,
      method,
      requestPath,
      ...(body === undefined ? {} : { body }),
    });
    expect(sent(ours)).toEqual(official);
  });
});

describe('POST /order bodies', () => {
  const NOW = 1_767_000_123_456;
  const RANDOM = 0.123456789;

  async function both(o: {
    side: 'BUY' | 'SELL';
    price: string;
    size: string;
    tickSize: '0.1' | '0.01' | '0.001' | '0.0001' | '0.005' | '0.0025';
    negRisk: boolean;
    orderType: 'GTC' | 'FOK' | 'FAK';
  }) {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    vi.spyOn(Math, 'random').mockReturnValue(RANDOM);
    const builder = new OrderBuilder(wallet, CHAIN);
    const market = o.orderType !== 'GTC';
    const signed = (
      market
        ? await builder.buildMarketOrder(
            {
              tokenID: TOKEN,
              amount: Number(o.size),
              side: o.side === 'BUY' ? Side.BUY : Side.SELL,
              price: Number(o.price),
              orderType: o.orderType === 'FOK' ? OrderType.FOK : OrderType.FAK,
            },
            { tickSize: o.tickSize, negRisk: o.negRisk },
            2,
          )
        : await builder.buildOrder(
            {
              tokenID: TOKEN,
              price: Number(o.price),
              size: Number(o.size),
              side: o.side === 'BUY' ? Side.BUY : Side.SELL,
            },
            { tickSize: o.tickSize, negRisk: o.negRisk },
            2,
          )
    ) as SignedOrder;
    const official = JSON.stringify(
      orderToJsonV2(
        signed as Parameters<typeof orderToJsonV2>[0],
        CREDS.key,
        (market ? o.orderType : 'GTC') as OrderType.GTC,
      ),
    );

    const amounts = orderRequestAmounts({
      side: o.side,
      price: o.price,
      size: o.size,
      orderType: o.orderType,
      tickSize: o.tickSize,
    });
    const order = buildClobOrder({
      signer: account.address,
      signatureType: 0,
      tokenId: TOKEN,
      side: o.side,
      makerAmount: amounts.makerAmount,
      takerAmount: amounts.takerAmount,
      timestampMs: NOW,
      salt: signed.salt,
    });
    const input = { chainId: CHAIN, verifyingContract: exchangeAddress({ negRisk: o.negRisk }), order };
    const ours = JSON.stringify(
      toPostOrderBody({
        order,
        signature: await signClobOrder(account, input),
        owner: CREDS.key,
        orderType: o.orderType,
        nowMs: NOW,
      }),
    );
    return { official, ours };
  }

  const limits = [
    { side: 'BUY', price: '0.4', size: '10', tickSize: '0.01' },
    { side: 'SELL', price: '0.57', size: '12.34', tickSize: '0.01' },
    { side: 'BUY', price: '0.5', size: '5', tickSize: '0.1' },
    { side: 'SELL', price: '0.123', size: '100', tickSize: '0.001' },
    { side: 'BUY', price: '0.0025', size: '2000', tickSize: '0.0025' },
    { side: 'SELL', price: '0.9975', size: '7.5', tickSize: '0.0025' },
    { side: 'BUY', price: '0.005', size: '1000', tickSize: '0.005' },
    { side: 'BUY', price: '0.1234', size: '33.33', tickSize: '0.0001' },
  ] as const;
  for (const l of limits) {
    for (const negRisk of [false, true]) {
      it(
        `a GTC ${l.side} ${l.size} at ${l.price} (tick ` +
          `${l.tickSize}${negRisk ? ', negative-risk' : ''}) is byte-identical`,
        async () => {
          const { official, ours } = await both({ ...l, negRisk, orderType: 'GTC' });
          expect(ours).toBe(official);
        },
      );
    }
  }

  const markets = [
    { side: 'BUY', price: '0.6', size: '5', tickSize: '0.01', orderType: 'FOK' },
    { side: 'BUY', price: '0.37', size: '12.5', tickSize: '0.01', orderType: 'FAK' },
    { side: 'SELL', price: '0.61', size: '12.5', tickSize: '0.01', orderType: 'FAK' },
    { side: 'SELL', price: '0.25', size: '40', tickSize: '0.001', orderType: 'FOK' },
  ] as const;
  for (const m of markets) {
    it(`a market-style ${m.orderType} ${m.side} ${m.size} at ${m.price} is byte-identical`, async () => {
      const { official, ours } = await both({ ...m, negRisk: false });
      expect(ours).toBe(official);
    });
  }
});
