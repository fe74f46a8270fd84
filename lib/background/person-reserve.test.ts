/**
 * The person's controls have a reserve no site can use, black-box: a site that spends every shared
 * budget it can reach (the client-side weight budget of the perps gateway under its standing grant, the
 * venue's own rate limit, the approval windows), then the person acts — their reduce-only close, their
 * cancel and panic still go through; when the venue says slow down, panic waits its Retry-After and
 * retries within its bound. Against the in-process sandbox, whose records are the truth.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { panicBoundMs, type PanicReport, type PanicTiming } from './panic';
import {
  markPrice,
  onTick,
  pageSender,
  until,
  useSandboxBackgrounds,
  type PagedBackground,
} from '../../test/kits/background';
import { describeGrant } from '../grants/evaluate';
import type { Harness } from '../../test/kits/sandbox';
import { MultiWindow } from '../ratelimit/sliding-window';

const SITE = 'https://flood.example';
const page = pageSender(SITE, 7);
/** ETH-PERP orders and cancels for the site, caps far above what the flood spends. */
const GRANT = {
  venue: 'perps',
  allow: { order: true, cancel: true, leverage: false },
  instruments: [2],
  maxNotional: '50000',
  dailyNotional: '100000000',
  priceBandPct: '20',
  slippagePct: '1',
};
const TIMING: PanicTiming = { drainMs: 500, requestTimeoutMs: 2_000, venuesMaxMs: 8_000 };

let h: Harness;
// A sandbox per test: the venue's rate-limit windows one test spends must not reach the next.
const { call, owner, start } = useSandboxBackgrounds({ dbPrefix: 'reserve', onStart: (x) => (h = x) });
const accepted = (from = 0) =>
  h.ctx.requestLog
    .slice(from)
    .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders' && r.status === 200);

async function ready(): Promise<PagedBackground> {
  const bg = await start({ page, panicTiming: TIMING });
  await bg.grants().create({ origin: SITE, account: owner(), limits: GRANT as never, durationMs: 3_600_000 });
  await until(
    async () =>
      ((await call(bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }).venues.some(
        (v) => v.venue === 'perps' && v.armed,
      ),
    1_000,
  );
  return bg;
}

/**
 * The site sends batches of 20 resting ETH buys under its grant until Countersign refuses one, then
 * single orders until it refuses again; returns the action weight the venue accepted from it.
 */
async function flood(bg: PagedBackground): Promise<number> {
  const mark = Number(await markPrice(h, 2));
  const from = h.ctx.requestLog.length;
  let refused = 0;
  for (let i = 0; i < 200 && refused < 2; i++) {
    const args = Array.from({ length: refused ? 1 : 20 }, (_, k) => ({
      iid: 2,
      buy: true,
      qty: '0.01',
      p: onTick(mark * (0.85 + ((i * 20 + k) % 100) / 1000), 0.05, 2),
      tif: 'gtc',
      po: true,
    }));
    await bg
      .page(page)
      .request('perps_sendCommand', { op: { type: 'createOrders', args } })
      .catch(() => void refused++);
  }
  expect(refused).toBe(2); // the site did reach the end of what it may spend
  return accepted(from).reduce(
    (s, r) => s + (JSON.parse(r.body ?? '{}') as { op?: { args?: unknown[] } }).op!.args!.length,
    0,
  );
}

describe('a site that spends the gateway weight budget under its grant', () => {
  it(
    'gets at most its share of the action budget; the ' + "person's reduce-only close and cancel still go through",
    async () => {
      const bg = await ready();
      // The person holds a BTC position (a taker buy that fills at once).
      const buy = await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createOrders',
          args: [
            { iid: 1, buy: true, qty: '0.01', p: onTick(Number(await markPrice(h, 1)) * 1.005, 0.5, 1), tif: 'ioc' },
          ],
        },
      });
      expect(buy.ok).toBe(true);

      const spent = await flood(bg);

      // The person's reduce-only close of the BTC position.
      const close = await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createOrders',
          args: [
            {
              iid: 1,
              buy: false,
              qty: '0.01',
              p: onTick(Number(await markPrice(h, 1)) * 0.995, 0.5, 1),
              tif: 'ioc',
              ro: true,
            },
          ],
        },
      });
      expect(close).toMatchObject({ ok: true });
      // The person's cancel of everything the site left resting.
      const cancel = await call(bg, 'perps.send', { account: owner(), op: { type: 'cancelAll', args: {} } });
      expect(cancel).toMatchObject({ ok: true });
      expect(
        [...h.ctx.venue.orders.values()].filter((o) => o.owner === owner().toLowerCase() && o.status === 'open'),
      ).toEqual([]);
      // sites' share: half of the client budget, which is the venue's
      expect(spent).toBeLessThanOrEqual(h.ctx.config.perpsActionBudget.limit / 2);
      // And panic, after all of it, cancels and locks with every step done.
      const r = await call(bg, 'panic.run', { closePositions: false });
      expect((r.result as PanicReport).perps).toMatchObject({ ok: true });
    },
  );

  it("the standing permission's words state the share of the budget the site may use", async () => {
    expect(describeGrant(GRANT as never).join(' ')).toMatch(
      /at most half of .*request and action weight.*the rest is kept for your own closes, cancels and panic/i,
    );
  });
});

describe('the venue says slow down', () => {
  it("panic waits the perps gateway's Retry-After and cancels within its bound", async () => {
    const bg = await ready();
    const mark = Number(await markPrice(h, 2));
    expect(
      (
        await call(bg, 'perps.send', {
          account: owner(),
          op: {
            type: 'createOrders',
            args: [{ iid: 2, buy: true, qty: '0.1', p: onTick(mark * 0.9, 0.05, 2), tif: 'gtc', po: true }],
          },
        })
      ).ok,
    ).toBe(true);
    // Someone else spent the account's request weight at the venue: it frees about 2 s from now.
    const key = owner().toLowerCase();
    h.ctx.perpsRequestWeight.record(key, h.ctx.config.perpsRequestBudget.limit, h.ctx.now() - 58_000);
    const t0 = Date.now();
    const r = await call(bg, 'panic.run', { closePositions: false });
    const ms = Date.now() - t0;
    const report = r.result as PanicReport;
    expect(h.ctx.requestLog.some((x) => x.path === '/perps/v1/trade/orders/all' && x.status === 429)).toBe(true);
    expect(report.perps).toMatchObject({ ok: true });
    expect([...h.ctx.venue.orders.values()].filter((o) => o.owner === key && o.status === 'open')).toEqual([]);
    expect(ms).toBeLessThan(panicBoundMs(TIMING) + 2_000);
    expect(report.locked).toBe(true);
  });

  it("a Retry-After longer than panic's bound: panic does not wait past it, says so, and is not ok", async () => {
    const bg = await ready();
    h.ctx.perpsRequestWeight.record(owner().toLowerCase(), h.ctx.config.perpsRequestBudget.limit, h.ctx.now());
    const t0 = Date.now();
    const report = (await call(bg, 'panic.run', { closePositions: false })).result as PanicReport;
    expect(Date.now() - t0).toBeLessThan(panicBoundMs(TIMING) + 2_000);
    expect(report.perps).toMatchObject({ ok: false, error: expect.stringMatching(/slow down|rate/i) });
    expect(report.ok).toBe(false);
    expect(report.locked).toBe(true);
  });

  it("panic waits the order book's Retry-After and cancels within its bound", async () => {
    const bg = await ready();
    const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
    expect(
      (
        await call(bg, 'clob.postOrders', {
          account: owner(),
          orders: [{ tokenId, side: 'BUY', price: '0.2', size: '10', orderType: 'GTC' }],
        })
      ).ok,
    ).toBe(true);
    // The account's cancel-all budget at the exchange is spent (250 per 10 s): it frees about 1 s from now.
    const limiter = new MultiWindow([
      { limit: 250, windowMs: 10_000 },
      { limit: 6_000, windowMs: 600_000 },
    ]);
    limiter.take(h.demo.clob.apiKey, 250, h.ctx.now() - 9_000);
    h.ctx.clobLimits.set('DELETE /cancel-all', limiter);
    const report = (await call(bg, 'panic.run', { closePositions: false })).result as PanicReport;
    expect(h.ctx.requestLog.some((x) => x.path === '/clob/cancel-all' && x.status === 429)).toBe(true);
    expect(report.clob).toEqual({ ok: true, detail: '1 open order(s) cancelled' });
    expect(
      [...h.ctx.clob.orders.values()].filter((o) => o.address === owner().toLowerCase() && o.status === 'live'),
    ).toEqual([]);
  });

  it(
    "an order book that says slow down for longer than panic's " +
      'bound is reported as such, with its kill switch, not as silent',
    async () => {
      const bg = await ready();
      const limiter = new MultiWindow([
        { limit: 250, windowMs: 10_000 },
        { limit: 6_000, windowMs: 600_000 },
      ]);
      limiter.take(h.demo.clob.apiKey, 250, h.ctx.now());
      h.ctx.clobLimits.set('DELETE /cancel-all', limiter);
      const t0 = Date.now();
      const report = (await call(bg, 'panic.run', { closePositions: false })).result as PanicReport;
      expect(Date.now() - t0).toBeLessThan(panicBoundMs(TIMING) + 2_000);
      expect(report.clob).toMatchObject({
        ok: false,
        error: expect.stringMatching(
          new RegExp(
            String.raw`^the venue said slow down for \d+ s, longer than panic may wait — not cancelled — ` +
              String.raw`(no kill switch was armed|its kill switch)`,
          ),
        ),
      });
      expect(report.clob).not.toHaveProperty('noAnswer');
      expect(report.ok).toBe(false);
    },
  );
});
