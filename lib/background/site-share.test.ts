/**
 * What a site sends is the site's, however it is shaped, black-box: a site whose standing permission
 * lets it send reduce-only orders and cancels (the shapes the person's own closes and cancels have) still
 * draws on the sites' share of the gateway's weight budget — never on the reserve kept for the person —
 * and is told "slow down" with a code no dapp library retries at once. Against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import type { PanicReport } from './panic';
import { markPrice, onTick, pageSender, useSandboxBackgrounds, VIEM_RETRIES } from '../../test/kits/background';

const SITE = 'https://closer.example';
const page = pageSender(SITE, 9);
const GRANT = {
  venue: 'perps',
  allow: { order: true, cancel: true, leverage: false },
  instruments: [2],
  maxNotional: '50000',
  dailyNotional: '100000000',
  priceBandPct: '20',
  slippagePct: '1',
};

let h: Harness;
const { call, owner, start } = useSandboxBackgrounds({ dbPrefix: 'site-share', onStart: (x) => (h = x) });
/** The orders of every order submission the venue received from `from` on (whatever it answered). */
const ordersSent = (from: number) =>
  h.ctx.requestLog
    .slice(from)
    .filter((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders')
    .reduce((s, r) => s + ((JSON.parse(r.body ?? '{}') as { op?: { args?: unknown[] } }).op?.args?.length ?? 0), 0);

describe("a site's reduce-only orders under its standing permission", () => {
  it(
    "draw on the sites' share: refused at half the action budget with " +
      "-32002, and the person's own order, close and cancel still go",
    async () => {
      const bg = await start({ page });
      await bg.grants().create({ origin: SITE, account: owner(), limits: GRANT as never, durationMs: 3_600_000 });
      // The person holds an ETH long, so the site's reduce-only sells are real closes at the venue.
      const mark = Number(await markPrice(h, 2));
      expect(
        (
          await call(bg, 'perps.send', {
            account: owner(),
            op: {
              type: 'createOrders',
              args: [{ iid: 2, buy: true, qty: '1', p: onTick(mark * 1.005, 0.05, 2), tif: 'ioc' }],
            },
          })
        ).ok,
      ).toBe(true);

      const from = h.ctx.requestLog.length;
      const refusals: { code?: number; message: string }[] = [];
      for (let i = 0; i < 200 && refusals.length < 2; i++) {
        const args = Array.from({ length: refusals.length ? 1 : 20 }, (_, k) => ({
          iid: 2,
          buy: false,
          qty: '0.01',
          p: onTick(mark * (1.05 + ((i * 20 + k) % 100) / 1000), 0.05, 2),
          tif: 'gtc',
          po: true,
          ro: true,
        }));
        await bg
          .page(page)
          .request('perps_sendCommand', { op: { type: 'createOrders', args } })
          .catch((e: { code?: number; message: string }) => void refusals.push(e));
      }
      expect(refusals.length).toBe(2);
      for (const e of refusals) {
        expect(e.code).toBe(-32002);
        expect(VIEM_RETRIES).not.toContain(e.code);
        expect(e.message).toMatch(/share .* sites may use/);
      }
      expect(ordersSent(from)).toBeLessThanOrEqual(h.ctx.config.perpsActionBudget.limit / 2);

      // The person's ordinary order (the person's share), their close and their cancel (the reserve) still go.
      const own = await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: true, qty: '0.01', p: onTick(mark * 0.8, 0.05, 2), tif: 'gtc', po: true }],
        },
      });
      expect(own).toMatchObject({ ok: true });
      const close = await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: false, qty: '0.5', p: onTick(mark * 0.995, 0.05, 2), tif: 'ioc', ro: true }],
        },
      });
      expect(close).toMatchObject({ ok: true });
      expect(await call(bg, 'perps.send', { account: owner(), op: { type: 'cancelAll', args: {} } })).toMatchObject({
        ok: true,
      });
    },
  );
});

describe("a page that spends the venue's public read budget itself", () => {
  it("panic still cancels and closes the person's position: it needs no public read", async () => {
    const bg = await start({ page });
    const mark = Number(await markPrice(h, 2));
    expect(
      (
        await call(bg, 'perps.send', {
          account: owner(),
          op: {
            type: 'createOrders',
            args: [{ iid: 2, buy: true, qty: '1', p: onTick(mark * 1.005, 0.05, 2), tif: 'ioc' }],
          },
        })
      ).ok,
    ).toBe(true);
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
    // The page fetched the venue's public endpoints from the same browser until the venue's public budget was spent.
    h.ctx.perpsRequestWeight.record('public', h.ctx.config.perpsRequestBudget.limit, h.ctx.now());
    const report = (await call(bg, 'panic.run', { closePositions: true })).result as PanicReport;
    expect(report.perps).toMatchObject({ ok: true });
    expect(report.positions).toMatchObject({ ok: true, detail: expect.stringMatching(/^closed /) });
    expect(
      [...(h.ctx.venue.accounts.get(owner().toLowerCase())?.positions.values() ?? [])].filter((p) => p.size !== 0n),
    ).toEqual([]);
  });
});
