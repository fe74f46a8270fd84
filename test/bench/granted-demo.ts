/**
 * The granted set-up the page-path benches share (`grant-paths.ts`, `peer.ts`), on a harness whose demo
 * page is connected: the page's origin and the demo account; the sandbox's first order-book token and a
 * GTC buy price one cent under its midpoint (a resting order, never a fill); and two standing grants for
 * that origin, as the approval window saves them (without the window: the bench hook `countersignBench.grant`)
 * — perps on ETH-PERP (#2) and the order book on that token, 5 % bands, caps no bench reaches.
 */
import type { BenchHooks } from '../../lib/background/bench-hooks';
import type { Harness } from '../e2e/harness';

declare const countersignBench: BenchHooks;

/**
 * Grants the demo page's origin both venues (see the module docstring); resolves its origin, the account, the token and
 * the buy price (decimal string).
 */
export async function grantDemoPage(
  h: Harness,
): Promise<{ origin: string; account: string; token: string; price: string }> {
  const origin = new URL(h.sandbox.url).origin;
  const account = h.sandbox.demo.owner.address;
  const token = h.sandbox.ctx.clob.markets[0]!.tokenIds[0]!;
  const mid = Number(
    ((await (await fetch(`${h.sandbox.url}/clob/midpoint?token_id=${token}`)).json()) as { mid: string }).mid,
  );
  const price = (Math.floor(mid * 100) / 100 - 0.01).toFixed(2);
  await h.worker.evaluate(
    ([o, a]) =>
      countersignBench.grant({
        origin: o,
        account: a,
        durationMs: 86_400_000,
        limits: {
          venue: 'perps',
          instruments: [2],
          allow: { order: true },
          maxNotional: '1000',
          dailyNotional: '10000000',
          priceBandPct: '5',
          slippagePct: '1',
          ratePerMinute: 10_000,
        },
      }),
    [origin, account] as const,
  );
  await h.worker.evaluate(
    ([o, a, t]) =>
      countersignBench.grant({
        origin: o,
        account: a,
        durationMs: 86_400_000,
        limits: {
          venue: 'clob',
          markets: [t],
          allow: { order: true },
          maxNotional: '100',
          dailyNotional: '10000000',
          priceBandPct: '5',
          ratePerMinute: 10_000,
        },
      }),
    [origin, account, token] as const,
  );
  return { origin, account, token, price };
}
