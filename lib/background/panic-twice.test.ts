/**
 * Panic pressed twice, black-box: the second press while the first runs, and a press once the first has
 * locked. Either way every order is cancelled, the vault ends locked, and no report says ok while one of
 * its steps did not happen. Against the in-process sandbox, whose records are the truth.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { panicBoundMs, type PanicReport, type PanicTiming } from './panic';
import { stepOk } from './panic-accounts';
import { markPrice, onTick, pageSender, useSandboxBackgrounds, type PagedBackground } from '../../test/kits/background';

const page = pageSender('https://trade.example', 8);
const TIMING: PanicTiming = { drainMs: 300, requestTimeoutMs: 2_000, venuesMaxMs: 5_000 };

let h: Harness;
const { call, owner, start } = useSandboxBackgrounds({ dbPrefix: 'panic-twice', onStart: (x) => (h = x) });
const openPerps = () =>
  [...h.ctx.venue.orders.values()].filter((o) => o.owner === owner().toLowerCase() && o.status === 'open');
const liveClob = () =>
  [...h.ctx.clob.orders.values()].filter((o) => o.address === owner().toLowerCase() && o.status === 'live');

async function ready(): Promise<PagedBackground> {
  const bg = await start({ page, panicTiming: TIMING });
  const p = Number(await markPrice(h, 2));
  expect(
    (
      await call(bg, 'perps.send', {
        account: owner(),
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: true, qty: '0.1', p: onTick(p * 0.9, 0.05, 2), tif: 'gtc', po: true }],
        },
      })
    ).ok,
  ).toBe(true);
  const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
  expect(
    (
      await call(bg, 'clob.postOrders', {
        account: owner(),
        orders: [{ tokenId, side: 'BUY', price: '0.2', size: '10', orderType: 'GTC' }],
      })
    ).ok,
  ).toBe(true);
  return bg;
}
/**
 * Every report's `ok` is what its own steps say: locked, no problem, every step done or nothing to do — never ok while
 * a step is not.
 */
const honest = (r: PanicReport) =>
  expect(r.ok).toBe(
    r.locked &&
      r.problems.length === 0 &&
      r.accounts.every((a) => stepOk(a.perps) && stepOk(a.clob) && stepOk(a.positions)),
  );

describe('panic pressed twice', () => {
  it(
    'at once: both end within the bound, everything is ' + 'cancelled, the vault is locked, and each report is honest',
    async () => {
      const bg = await ready();
      const t0 = Date.now();
      const [a, b] = (
        await Promise.all([
          call(bg, 'panic.run', { closePositions: false }),
          call(bg, 'panic.run', { closePositions: false }),
        ])
      ).map((r) => r.result as PanicReport);
      expect(Date.now() - t0).toBeLessThan(panicBoundMs(TIMING) + 2_000);
      expect(openPerps()).toEqual([]);
      expect(liveClob()).toEqual([]);
      for (const r of [a!, b!]) {
        expect(r.locked).toBe(true);
        honest(r);
      }
      expect(a!.ok || b!.ok).toBe(true);
      expect(((await call(bg, 'vault.status')).result as { state: string }).state).toBe('locked');
    },
  );

  it('again once locked: the report names the sealed keys and is not ok', async () => {
    const bg = await ready();
    expect(((await call(bg, 'panic.run', { closePositions: false })).result as PanicReport).ok).toBe(true);
    const again = (await call(bg, 'panic.run', { closePositions: false })).result as PanicReport;
    expect(again.locked).toBe(true);
    expect(again.ok).toBe(false);
    expect(again.perps).toMatchObject({ ok: false, error: expect.stringMatching(/sealed/) });
    honest(again);
  });
});
