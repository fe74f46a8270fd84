/**
 * The extension's order-book channel client (PROTOCOL.md §5.3–§5.4) against the in-process
 * sandbox, `ws` as the WebSocket: book dump and changes of the held ids only, dynamic subscribe, the user
 * channel's order and trade events, reconnect after a dropped socket, refused credentials.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { WebSocket as NodeWebSocket, WebSocketServer } from 'ws';
import { createOrDeriveApiKey, clobL2Request } from '../clob/client';
import { toOrderAmounts } from '../clob/amounts';
import { buildClobOrder, exchangeAddress, signClobOrder, toPostOrderBody } from '../clob/order';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { createClobChannel, type ClobChannel, type ClobStreamEvent } from './clob';

const made: NodeWebSocket[] = [];
class TrackedWebSocket extends NodeWebSocket {
  constructor(url: string) {
    super(url);
    made.push(this);
  }
}

let h: Harness;
let wallet: LocalAccount;
let creds: { apiKey: string; secret: string; passphrase: string };
const channels: ClobChannel[] = [];
beforeAll(async () => {
  h = await startHarness();
  wallet = privateKeyToAccount(generatePrivateKey());
  creds = (
    await createOrDeriveApiKey(h.clobUrl, wallet, {
      chainId: h.ctx.config.clobChainId,
      timestamp: Math.floor(h.clock.now / 1000),
      nonce: 0,
    })
  ).credentials;
  h.ctx.clob.credit(wallet.address, 1_000_000_000n);
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  for (const c of channels.splice(0)) c.stop();
});

const market = () => {
  const m = h.ctx.clob.markets[0];
  if (!m) throw new Error('no market');
  return m;
};
const wsBase = () => `${h.url.replace('http', 'ws')}/clob/ws`;

async function post(price: string, size: string, orderType: 'GTC' | 'FAK' = 'GTC', tokenIndex = 0) {
  const m = market();
  const amounts = toOrderAmounts({ side: 'BUY', price, size, tickSize: m.tickSize });
  const order = buildClobOrder({
    signer: wallet.address,
    signatureType: 0,
    tokenId: m.tokenIds[tokenIndex] ?? '',
    side: 'BUY',
    ...amounts,
    timestampMs: h.clock.now,
  });
  const signature = await signClobOrder(wallet, {
    chainId: h.ctx.config.clobChainId,
    verifyingContract: exchangeAddress({ negRisk: m.negRisk }),
    order,
  });
  const body = toPostOrderBody({ order, signature, owner: creds.apiKey, orderType, postOnly: false });
  const r = await clobL2Request(h.clobUrl, {
    address: wallet.address,
    credentials: creds,
    method: 'POST',
    requestPath: '/order',
    body,
    timestamp: Math.floor(h.clock.now / 1000),
  });
  return r;
}

function channel(kind: 'market' | 'user', auth?: typeof creds) {
  const events: ClobStreamEvent[] = [];
  const resyncs: string[] = [];
  const statuses: string[] = [];
  const c = createClobChannel({
    url: `${wsBase()}/${kind}`,
    channel: kind,
    ...(auth ? { auth } : {}),
    WebSocket: TrackedWebSocket,
    onEvent: (e) => events.push(e),
    onResync: (r) => resyncs.push(r),
    onStatus: (s) => statuses.push(JSON.stringify(s)),
    random: () => 0,
  });
  channels.push(c);
  return { c, events, resyncs, statuses };
}

async function until(cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('order-book market channel', () => {
  it(
    'connects only with an id held, gets its book best first, then ' +
      'changes of that id only; subscribes more on the open socket',
    async () => {
      const [yes, no] = market().tokenIds;
      const { c, events } = channel('market');
      c.start();
      expect(c.status().state).toBe('down'); // nothing held: no socket
      c.subscribe([String(yes)]);
      await until(() => events.some((e) => e.kind === 'book' && e.tokenId === yes));
      const book = events.find((e) => e.kind === 'book');
      if (book?.kind !== 'book') throw new Error('no book');
      const bidPrices = book.bids.map(([p]) => Number(p));
      expect(bidPrices).toEqual([...bidPrices].sort((a, b) => b - a));
      await post('0.03', '7');
      await until(() => events.some((e) => e.kind === 'price_change'));
      expect(events.find((e) => e.kind === 'price_change')).toMatchObject({
        changes: [{ tokenId: yes, side: 'BUY', price: '0.03', size: '7' }],
      });
      const socketsBefore = made.length;
      c.subscribe([String(no)]);
      await until(() => events.some((e) => e.kind === 'book' && e.tokenId === no));
      expect(made.length).toBe(socketsBefore); // the same socket
      c.unsubscribe([String(no)]);
      await post('0.04', '5', 'GTC', 1);
      await post('0.05', '5');
      await until(() => events.filter((e) => e.kind === 'price_change').length >= 2);
      expect(
        events
          .filter((e) => e.kind === 'price_change')
          .flatMap((e) => (e.kind === 'price_change' ? e.changes : []))
          .every((x) => x.tokenId === yes),
      ).toBe(true);
    },
  );

  it('reconnects a dropped socket with backoff, asks for a resync and gets the book again', async () => {
    const [yes] = market().tokenIds;
    const { c, events, resyncs } = channel('market');
    c.start();
    c.subscribe([String(yes)]);
    await until(() => events.some((e) => e.kind === 'book'));
    made.at(-1)?.terminate();
    await until(() => resyncs.length === 1 && events.filter((e) => e.kind === 'book').length === 2);
    expect(c.status()).toMatchObject({ state: 'live', reconnects: 1 });
  });
});

describe('order-book user channel', () => {
  it(
    'authenticates with the API credentials and hands on the ' +
      'account’s order and trade events, no credential in any',
    async () => {
      const { c, events, statuses } = channel('user', creds);
      c.start();
      await until(() => c.status().state === 'live');
      await new Promise((r) => setTimeout(r, 50));
      await post('0.99', '5', 'FAK');
      await until(() => events.some((e) => e.kind === 'trade'));
      expect(events.find((e) => e.kind === 'order')).toMatchObject({
        order: { status: 'MATCHED', side: 'BUY', price: '0.99' },
      });
      const seen = JSON.stringify([events, statuses]);
      for (const secret of [creds.secret, creds.passphrase, creds.apiKey]) expect(seen).not.toContain(secret);
    },
  );

  it('retries, never live for long, when the venue refuses the credentials (closes the socket)', async () => {
    const { c, events, statuses } = channel('user', { ...creds, secret: 'AAAA' });
    c.start();
    await until(() => statuses.some((s) => s.includes('"lastError":"closed"')));
    expect(events).toEqual([]);
    expect(statuses.join()).not.toContain(creds.passphrase);
  });
});

describe('order-book channel against a scripted server', () => {
  /** A server that sends `frames` after the first client frame and never answers PING. */
  async function scripted(frames: string[]): Promise<{ url: string; close: () => void }> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => wss.once('listening', r));
    wss.on('connection', (ws) => ws.once('message', () => frames.forEach((f) => ws.send(f))));
    const addr = wss.address();
    const port = addr !== null && typeof addr === 'object' ? addr.port : 0;
    return { url: `ws://127.0.0.1:${port}/ws/market`, close: () => wss.close() };
  }

  it(
    'a trade keeps its maker orders (the person’s figures as maker are ' +
      'only there), each owner reduced to whether it is the channel’s API key',
    async () => {
      const auth = { apiKey: '00000000-0000-4000-8000-00000000c0de', secret: 'c2VjcmV0', passphrase: 'pass' };
      const maker = (owner: string, order_id: string, side: string, price: string, matched_amount: string) => ({
        order_id,
        owner,
        maker_address: '0x1111111111111111111111111111111111111111',
        matched_amount,
        price,
        fee_rate_bps: '0',
        asset_id: '11',
        outcome: 'Yes',
        side,
      });
      // The venue's shape (PROTOCOL.md §5.4): the top level is the taker's buy of 15 at 0.62.
      const trade = {
        event_type: 'trade',
        type: 'TRADE',
        id: 'm1',
        taker_order_id: '0xt',
        market: '0x1',
        asset_id: '11',
        side: 'BUY',
        size: '15',
        price: '0.62',
        status: 'MATCHED',
        match_time: '1700000000',
        outcome: 'Yes',
        owner: 'taker-key',
        trader_side: 'MAKER',
        maker_orders: [
          maker('other-key', '0xo', 'SELL', '0.62', '5'),
          maker(auth.apiKey, '0xmine', 'sell', '0.6', '10'),
        ],
        timestamp: '1700000000000',
      };
      const srv = await scripted([JSON.stringify([trade])]);
      const events: ClobStreamEvent[] = [];
      const c = createClobChannel({
        url: srv.url,
        channel: 'user',
        auth,
        WebSocket: TrackedWebSocket,
        onEvent: (e) => events.push(e),
      });
      channels.push(c);
      c.start();
      await until(() => events.length === 1);
      expect(events[0]).toMatchObject({
        kind: 'trade',
        trade: {
          side: 'BUY',
          size: '15',
          trader_side: 'MAKER',
          maker_orders: [
            { order_id: '0xo', byAccountKey: false },
            {
              order_id: '0xmine',
              byAccountKey: true,
              side: 'SELL',
              matched_amount: '10',
              price: '0.6',
              asset_id: '11',
            },
          ],
        },
      });
      expect(JSON.stringify(events)).not.toContain(auth.apiKey);
      c.stop();
      srv.close();
    },
  );

  it(
    'drops and counts malformed events (keeping the valid ones of ' +
      'an array), and reconnects a socket that stops answering PING',
    async () => {
      const ok = {
        event_type: 'last_trade_price',
        market: '0x1',
        asset_id: '12',
        price: '0.5',
        side: 'buy',
        timestamp: '1700000000000',
      };
      const srv = await scripted([
        'not json',
        JSON.stringify([ok, { event_type: 'book', asset_id: 'x' }]),
        JSON.stringify({ event_type: 'order', id: 'x' }),
      ]);
      const events: ClobStreamEvent[] = [];
      const resyncs: string[] = [];
      const c = createClobChannel({
        url: srv.url,
        channel: 'market',
        WebSocket: TrackedWebSocket,
        onEvent: (e) => events.push(e),
        onResync: (r) => resyncs.push(r),
        random: () => 0,
        timing: { pingEveryMs: 20, checkEveryMs: 20, staleAfterMs: 100 },
      });
      channels.push(c);
      c.start();
      c.subscribe(['12']);
      await until(() => c.status().malformed === 3);
      expect(events).toEqual([{ kind: 'last_trade', at: 1_700_000_000_000, tokenId: '12', price: '0.5' }]);
      // No PONG ever: stale after 100 ms, closed and opened again.
      await until(() => resyncs.length >= 1, 2_000);
      expect(c.status().reconnects).toBeGreaterThanOrEqual(1);
      c.stop();
      srv.close();
    },
  );
});
