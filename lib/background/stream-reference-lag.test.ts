/**
 * A covered order-book order is judged by the market channel only on a book that holds every change the
 * venue sent before the order arrived (`lib/streams/reference.ts`: the PONG of a PING sent for the order),
 * never at a price the REST reads taken for that order would refuse, here with a channel that delivers
 * every frame 300 ms late and in order (an honest, slow stream):
 * - a book change still on its way when the order arrives (the venue sent it before) is waited for;
 * - a move the site made from its own venue account and took back before sending the order is not its
 *   reference (`lib/approvals/README.md`: a midpoint moved for an instant does not carry to later orders);
 * - a second origin of the same site is judged on a book that holds the first one's order answered just
 *   before it.
 * Each test ends with a control: the same order, once the stream caught up, is not covered. The barrier
 * rests on the venue answering a PING behind the frames it queued before it (documented in
 * `lib/streams/reference.ts`); a venue that answers PINGs ahead of its book pushes is outside it.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import type { Hex } from 'viem';
import type { Harness } from '../../test/kits/sandbox';
import {
  connectSite,
  coveredBy,
  pageSender,
  pagePathKit,
  sandboxSuite,
  until,
  sleep,
} from '../../test/kits/background';
import type { WebSocketConstructor } from '../streams/perps';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const LAG_MS = 300; // a stream 3 ms behind already needs the barrier when two origins race

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, armed, grantOf } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'stream-reference-lag',
});

/**
 * A market channel that delivers every frame `lag.ms` late, in order (an honest, slow stream); `onDeliver` sees each
 * frame as it is delivered.
 */
const lag: { ms: number; onDeliver?: (text: string) => void } = { ms: 0 };
const sockets: NodeWebSocket[] = [];
class LaggingWebSocket extends NodeWebSocket {
  constructor(url: string) {
    super(url);
    sockets.push(this);
  }
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && /\/market$/.test(this.url) && lag.ms > 0) {
      setTimeout(() => {
        super.emit(event, ...args);
        lag.onDeliver?.(String(args[0]));
      }, lag.ms);
      return true;
    }
    return super.emit(event, ...args);
  }
}

let ids = 0;
/**
 * Another trader's (or the site's own venue account's) resting order, placed at the venue and pushed as the sandbox
 * does after any request.
 */
function placeOwn(token: string, side: 'BUY' | 'SELL', price: bigint, shares: bigint): Hex {
  const address = '0x00000000000000000000000000000000000a77ac'; // the site's own venue account
  h.ctx.clob.credit(address, 10n ** 12n);
  h.ctx.clob.creditToken(address, token, 10n ** 12n);
  const id = `0x${(++ids).toString(16).padStart(64, 'a')}` as Hex;
  h.ctx.clob.place({
    id,
    owner: 'site-own-account',
    address,
    maker: address,
    tokenId: token,
    side,
    price,
    originalSize: shares * 1_000_000n,
    orderType: 'GTC',
    postOnly: true,
    expiration: 0,
    created: Date.now(),
  });
  h.streams.sync();
  return id;
}
function cancelOwn(id: Hex): void {
  expect(h.ctx.clob.cancel(id, '0x00000000000000000000000000000000000a77ac')).toBeUndefined();
  h.streams.sync();
}
/** The venue's midpoint now (what the REST reads return at this moment). */
function venueMid(token: string): number {
  const b = h.ctx.clob.book(token);
  return Number(b.bids[0]!.price + b.asks[0]!.price) / 2 / 1e6;
}

async function granted(bandPct: string, outcome = 0, market = 0) {
  lag.ms = 0;
  lag.onDeliver = undefined;
  sockets.length = 0;
  const { bg, wire } = await ready({ WebSocket: LaggingWebSocket as unknown as WebSocketConstructor });
  const token = h.ctx.clob.markets[market]!.tokenIds[outcome]!; // a book no earlier test touched
  await grantOf(bg, {
    venue: 'clob',
    markets: [token],
    allow: { order: true },
    maxNotional: '500',
    dailyNotional: '5000',
    priceBandPct: bandPct,
  });
  await until(() => armed(bg, 'clob'));
  await until(() => sockets.some((s) => /\/market$/.test(s.url) && s.readyState === 1));
  await sleep(200); // the dump
  const coveredFrom = (who: ReturnType<typeof pageSender>, o: unknown) => coveredBy(bg, who, 'clob_postOrders', o);
  const covered = (o: unknown) => coveredFrom(page, o);
  const order = (side: 'BUY' | 'SELL', price: string, size: string) => ({
    orders: [{ tokenId: token, side, price, size, orderType: 'GTC' }],
  });
  const midReads = () => wire.sent.filter((x) => x.method === 'GET' && /\/clob\/midpoint/.test(x.url)).length;
  return { bg, token, order, covered, coveredFrom, midReads };
}

describe('a lagging market channel never judges a covered order on a book the REST reads would not show', () => {
  it(
    'a book change still on its way when the order arrives does not let the ' +
      "stream judge it: the order is judged at the venue's midpoint and asks",
    async () => {
      const { token, order, covered, midReads } = await granted('10');
      expect(await covered(order('BUY', '0.48', '5')), 'order 0: covered').toBe(true);
      await sleep(150); // its PONG is heard
      expect(venueMid(token)).toBe(0.5);
      lag.ms = LAG_MS;
      await sleep(50);

      // t = 0: ordinary traffic on the market (a deep bid, the top unchanged): a frame on its way.
      let traffic!: () => void;
      const trafficHeard = new Promise<void>((r) => (traffic = r));
      lag.onDeliver = (text) => {
        if (!text.includes('"0.41"')) return;
        lag.onDeliver = undefined;
        traffic();
      };
      placeOwn(token, 'BUY', 410_000n, 10n);
      await sleep(100);
      // t = 100 ms: the site's covered order 1 takes the asks at 0.52 and 0.54: the midpoint becomes 0.52.
      expect(await covered(order('BUY', '0.54', '300')), 'order 1 covered (0.54 is 8 % from 0.50)').toBe(true);
      expect(venueMid(token)).toBe(0.52);
      // t = 300 ms: the traffic frame of t = 0 arrives; order 1's book change (emitted at t ≈ 100) is still on its way.
      await trafficHeard;
      const before = midReads();
      const midAtCheck = venueMid(token);
      // 0.46 is 11.5 % under the venue's midpoint 0.52 (band 10 %): the REST reads refuse it; 8 % under the stale 0.50.
      const probeCovered = await covered(order('BUY', '0.46', '10'));
      expect(midAtCheck, 'the venue (and a REST read) says 0.52 when the order is checked').toBe(0.52);
      const judgedByStream = midReads() === before;

      // Control, once the stream caught up: the same order asks (10 % band around 0.52).
      await sleep(2 * LAG_MS);
      expect(
        await covered(order('BUY', '0.46', '10')),
        'control: the same order once the stream caught up is not covered',
      ).toBe(false);

      expect(
        probeCovered,
        `a book change delivered after the answer but emitted before it does not show that ` +
          `the book caught up: the order must be judged at 0.52 (REST or a caught-up stream) ` +
          `and ask${judgedByStream ? ' (it was judged by the stream: no midpoint read)' : ''}`,
      ).toBe(false);
    },
    30_000,
  );

  it(
    'the site moves the book from its own account and takes the move back ' +
      'before its order: the order is judged on the book as it is, and asks',
    async () => {
      const { token, order, covered } = await granted('2', 1);
      expect(await covered(order('BUY', '0.49', '5')), 'order 0 (2 % band): covered').toBe(true);
      await sleep(150);
      expect(venueMid(token)).toBe(0.505); // 0.49 / 0.52
      lag.ms = LAG_MS;
      await sleep(50);

      const bid = placeOwn(token, 'BUY', 510_000n, 1n); // the site's own bid inside the spread: midpoint 0.515
      const probe = new Promise<{ covered: boolean; midAtCheck: number }>((resolve) => {
        lag.onDeliver = (text) => {
          if (!text.includes('"0.51"')) return;
          lag.onDeliver = undefined;
          cancelOwn(bid); // gone at the venue, answered: the midpoint is 0.505 again
          const midAtCheck = venueMid(token);
          // 0.52 is 2.97 % over 0.505 (band 2 %): the REST reads refuse it; 0.97 % over the stale 0.515.
          void covered(order('BUY', '0.52', '10')).then((c) => resolve({ covered: c, midAtCheck }));
        };
      });
      const { covered: probeCovered, midAtCheck } = await probe;
      expect(midAtCheck).toBe(0.505);
      await sleep(2 * LAG_MS);
      expect(
        await covered(order('BUY', '0.52', '10')),
        'control: the same order once the stream caught up is not covered',
      ).toBe(false);
      expect(
        probeCovered,
        'a midpoint the site moved for an instant and took back before ' +
          'sending the order must not be its reference (lib/approvals/README.md)',
      ).toBe(false);
    },
    30_000,
  );

  it(
    'two origins of one site: an order of the second, right after the first ' +
      "one's covered order was answered, is judged on a book that holds it",
    async () => {
      const { bg, token, order, coveredFrom } = await granted('5', 0, 3); // quarter-tick market: 0.495 / 0.505
      const other = pageSender('https://other.example', 4);
      await connectSite(bg, other);
      await grantOf(
        bg,
        {
          venue: 'clob',
          markets: [token],
          allow: { order: true },
          maxNotional: '500',
          dailyNotional: '5000',
          priceBandPct: '1',
        },
        'https://other.example',
      );
      expect(await coveredFrom(other, order('BUY', '0.495', '5')), "the second origin's first order: covered").toBe(
        true,
      );
      await sleep(150);
      expect(venueMid(token)).toBe(0.5);
      lag.ms = LAG_MS;
      await sleep(50);
      // The first origin's covered order takes the asks at 0.505 and 0.51: the midpoint becomes 0.505.
      expect(await coveredFrom(page, order('BUY', '0.51', '300')), 'first origin, covered').toBe(true);
      const midAtCheck = venueMid(token);
      // At once, the second origin: 0.4975 is 1.49 % under 0.505 (its band 1 %): the REST reads refuse it; 0.5 % under
      // the stale 0.50.
      const probeCovered = await coveredFrom(other, order('BUY', '0.4975', '10'));
      expect(midAtCheck).toBe(0.505);
      await sleep(2 * LAG_MS);
      expect(
        await coveredFrom(other, order('BUY', '0.4975', '10')),
        'control: the same order once the stream caught up is not covered',
      ).toBe(false);
      expect(
        probeCovered,
        'an order checked after another covered order was answered must see that order in its reference (REST would)',
      ).toBe(false);
    },
    30_000,
  );
});
