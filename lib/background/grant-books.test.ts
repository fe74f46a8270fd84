/**
 * A site's covered order-book orders are judged against the market channel's book (`lib/streams/reference.ts`):
 * each order's PING is answered (its PONG) before the book judges it, and no midpoint or book is read over REST before
 * it is signed; an unreachable channel leaves every order to the REST reads. The channel closes when the grant ends.
 * Covered perps orders are judged on the public perps stream's mark and best bid / ask, with no REST read.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, pagePathKit, recordingWebSocket, sandboxSuite, until } from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const recorder = recordingWebSocket();

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, owner, armed, settle, call, grantOf, btcOrder } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'grant-books',
});

/**
 * A background with an order-book grant (band 10 %) on the sandbox's first token, and resting buys `cents` under its
 * midpoint.
 */
async function granted(o: { unreachable?: boolean } = {}) {
  recorder.reset();
  recorder.log.unreachable = o.unreachable === true; // the venue's stream is down
  const { bg, wire } = await ready({ WebSocket: recorder.WebSocket });
  const token = h.ctx.clob.markets[0]!.tokenIds[0]!;
  const grant = await bg.grants().create({
    origin: SITE,
    account: owner(),
    limits: {
      venue: 'clob',
      markets: [token],
      allow: { order: true },
      maxNotional: '100',
      dailyNotional: '1000',
      priceBandPct: '10',
    } as never,
    durationMs: 3_600_000,
  });
  await until(() => armed(bg, 'clob'));
  const mid = Number(await bg.reads().clobMid(token));
  const buy = (cents: number) => ({
    orders: [
      {
        tokenId: token,
        side: 'BUY',
        price: (Math.floor(mid * 100 - cents) / 100).toFixed(2),
        size: '10',
        orderType: 'GTC',
      },
    ],
  });
  const base = wire.sent.length; // the reads above are the test's own
  const midReads = () =>
    wire.sent.slice(base).filter((x) => x.method === 'GET' && /\/clob\/midpoint/.test(x.url)).length;
  const marketSockets = () => recorder.log.sockets.filter((s) => /\/market$/.test(s.url));
  return { bg, token, grant, buy, midReads, marketSockets };
}

describe('the market channel as the reference of covered order-book orders', () => {
  it(
    'covered orders, one right after another, read no midpoint over ' +
      'REST: each is judged on the book once the PONG of its own PING came',
    async () => {
      const { bg, buy, midReads, marketSockets } = await granted();
      await until(() => marketSockets().some((s) => s.readyState === 1));
      await new Promise((r) => setTimeout(r, 100)); // the dump that follows the subscription
      for (let i = 1; i <= 4; i++)
        expect(
          (await settle(bg.page(page).request('clob_postOrders', buy(i)))).e,
          `order ${i} covered`,
        ).toBeUndefined();
      expect(midReads()).toBe(0);
      expect(bg.registry.size).toBe(0);
    },
    30_000,
  );

  it('an unreachable channel leaves every covered order to the REST reads', async () => {
    const { bg, buy, midReads } = await granted({ unreachable: true });
    for (let i = 1; i <= 3; i++) {
      expect((await settle(bg.page(page).request('clob_postOrders', buy(i)))).e).toBeUndefined();
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(midReads()).toBe(3);
  }, 30_000);

  it('the channel closes when the last order-book grant ends', async () => {
    const { bg, grant, marketSockets } = await granted();
    await until(() => marketSockets().some((s) => s.readyState === 1));
    expect((await call(bg, 'grant.revoke', { id: grant.id })).ok).toBe(true);
    await until(() => marketSockets().every((s) => s.readyState === 3));
  }, 30_000);

  it(
    "covered perps orders are judged on the public stream's " +
      'mark and best bid and ask: no ticker or book read over REST',
    async () => {
      recorder.reset();
      const { bg, wire } = await ready({ WebSocket: recorder.WebSocket });
      await grantOf(bg);
      await until(() => armed(bg));
      const publicSocket = () =>
        recorder.log.frames.some((f) => Array.isArray(f.chs) && f.chs.includes('tickers::all'));
      await until(publicSocket);
      await new Promise((r) => setTimeout(r, 100)); // the subscription's snapshots
      const base = wire.sent.length;
      for (let i = 0; i < 3; i++)
        expect((await settle(bg.page(page).request('perps_sendCommand', await btcOrder()))).e).toBeUndefined();
      const reads = wire.sent.slice(base).filter((x) => x.method === 'GET' && /\/v1\/info\/(tickers|book)/.test(x.url));
      expect(reads.map((x) => x.url)).toEqual([]);
      expect(bg.registry.size).toBe(0);
    },
    30_000,
  );
});
