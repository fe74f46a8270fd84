/**
 * A covered perps order is judged on the public perps stream (`PerpsStreamReference`,
 * `lib/streams/reference.ts`) only after the answer to a ping posted for it came: a public feed whose pushes
 * come 3 s late (its socket alive) never judges an order on the mark and book of 3 s ago while the venue has moved —
 * once the reference taken for an earlier order (reused for 1 s, as it always was) is over, the order is judged where
 * the REST reads would judge it, and asks outside the band. Control: the same order once the feed caught up asks too.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import type { Harness } from '../../test/kits/sandbox';
import { coveredBy, pageSender, pagePathKit, sandboxSuite, until, sleep, onTick } from '../../test/kits/background';
import type { WebSocketConstructor } from '../streams/perps';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const LAG_MS = 3_000;

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, armed, grantOf, mark } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'perps-stream-lag',
});

/**
 * The public perps socket (it never sends `auth`) delivers every frame `lag.ms` late, in order; the account's session
 * socket is untouched.
 */
const lag = { ms: 0 };
const sockets: (NodeWebSocket & { authed: boolean; chs: string[] })[] = [];
class LaggingWebSocket extends NodeWebSocket {
  authed = false;
  chs: string[] = [];
  constructor(url: string) {
    super(url);
    sockets.push(this);
  }
  override send(data: string): void {
    try {
      const f = JSON.parse(data) as { op?: { type?: string }; chs?: string[] };
      if (f.op?.type === 'auth') this.authed = true;
      if (Array.isArray(f.chs)) this.chs.push(...f.chs);
    } catch {
      /* text frame */
    }
    super.send(data);
  }
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && /\/perps\//.test(this.url) && !this.authed && lag.ms > 0) {
      setTimeout(() => super.emit(event, ...args), lag.ms);
      return true;
    }
    return super.emit(event, ...args);
  }
}

describe('a lagging public perps stream never judges a covered order on an old mark', () => {
  it(
    'a feed 3 s late: the order waits for the answer to its own ' +
      'ping (or the REST reads judge it), and asks outside the band',
    async () => {
      lag.ms = 0;
      sockets.length = 0;
      const { bg } = await ready({ WebSocket: LaggingWebSocket as unknown as WebSocketConstructor });
      await grantOf(bg); // BTC-PERP, 2 % band
      await until(() => armed(bg));
      await until(() => sockets.some((s) => !s.authed && s.chs.includes('tickers::all')));
      await sleep(300); // the snapshots
      const m = Number(await mark(1));
      const order = (p: string) => ({
        op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.01', p, tif: 'gtc', po: true }] },
      });
      const covered = (o: unknown) => coveredBy(bg, page, 'perps_sendCommand', o);
      expect(await covered(order(onTick(m * 0.995, 0.5, 1))), 'the stream path works').toBe(true);

      lag.ms = LAG_MS;
      await sleep(50);
      // The venue moves 6 % up: its resting BTC orders are gone, new quotes around the new price, the mark with them.
      const { venue } = h.ctx;
      for (const o of [...venue.book(1).bids, ...venue.book(1).asks]) venue.cancel(venue.findAccount(o.owner)!, o);
      const up = m * 1.06;
      venue.placeOrders(venue.account(h.demo.counterparty.address), [
        { iid: 1, buy: true, qty: '0.01', p: onTick(up - 10, 0.5, 1), tif: 'gtc', po: true },
        { iid: 1, buy: false, qty: '0.01', p: onTick(up + 10, 0.5, 1), tif: 'gtc', po: true },
      ]);
      const newMark = onTick(up, 0.5, 1);
      expect(
        (
          await fetch(`${h.url}/admin/mark`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ instrument_id: 1, price: newMark }),
          })
        ).status,
      ).toBe(200);
      expect(Number(await mark(1)), 'the venue (and a REST ticker read) says the mark moved').toBe(Number(newMark));

      // The reference taken for the first order is reused for 1 s, as it always was (`PageReads.perpsRef`).
      await sleep(1_100);
      // A buy at the old mark: 5.7 % under the venue's mark now (band 2 %): the REST reads refuse it.
      const probeCovered = await covered(order(onTick(m, 0.5, 1)));
      await sleep(LAG_MS + 500);
      expect(
        await covered(order(onTick(m, 0.5, 1))),
        'control: the same order once the feed caught up is not covered',
      ).toBe(false);
      expect(
        probeCovered,
        'a covered perps order is judged on the stream only after ' +
          'the answer to its own ping: never on the mark of 3 s ago',
      ).toBe(false);
    },
    30_000,
  );
});
