/**
 * When a venue says slow down, the person's own controls answer in time, black-box: the order book's
 * 429 names how long to wait (`Retry-After`: the sandbox's ten-minute window, or a huge or malformed
 * value a venue may send); the person's cancel, and a site's post, either go through after a short wait
 * or come back at once saying slow down — never hanging for as long as the venue asked. Against the
 * in-process sandbox, whose records are the truth.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { MultiWindow } from '../ratelimit/sliding-window';
import { panicBoundMs, type PanicReport, type PanicTiming } from './panic';
import { pageSender, useSandboxBackgrounds } from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 6);
/** How long the person's control may take to answer when the venue says slow down (ms). */
const ANSWER_MS = 20_000;

let h: Harness;
const { call, owner, start } = useSandboxBackgrounds({ dbPrefix: 'slow-down', onStart: (x) => (h = x) });
/** `p`'s reply, or 'still waiting' after `ms`. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);

/**
 * A background on the sandbox whose order-book answers can be swapped (`answer`), with the demo account and one resting
 * order-book buy.
 */
async function ready(answer?: (url: string, method: string) => Response | undefined, panicTiming?: PanicTiming) {
  const fetchFn: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    return answer?.(url, init?.method ?? 'GET') ?? fetch(input, init);
  };
  const bg = await start({ page, fetchFn, ...(panicTiming ? { panicTiming } : {}) });
  const tokenId = h.ctx.clob.markets[0]!.tokenIds[0];
  const posted = await call(bg, 'clob.postOrders', {
    account: owner(),
    orders: [{ tokenId, side: 'BUY', price: '0.2', size: '10', orderType: 'GTC' }],
  });
  expect(posted.ok).toBe(true);
  const live = [...h.ctx.clob.orders.values()].filter(
    (o) => o.address === owner().toLowerCase() && o.status === 'live',
  );
  expect(live.length).toBe(1);
  return { bg, orderId: live[0]!.id };
}

describe("the order book's cancel budget is spent for ten minutes", () => {
  it(
    "the person's cancel answers at once that the venue " + 'said slow down, instead of waiting out its Retry-After',
    async () => {
      const { bg, orderId } = await ready();
      // Someone spent the account's ten-minute `DELETE /orders` budget at the exchange: Retry-After ≈ 600 s.
      const limiter = new MultiWindow([
        { limit: 2_000, windowMs: 10_000 },
        { limit: 15_000, windowMs: 600_000 },
      ]);
      for (let i = 9; i >= 0; i--)
        expect(limiter.take(h.demo.clob.apiKey, 1_500, h.ctx.now() - 500 - i * 10_500)).toBe(0);
      h.ctx.clobLimits.set('DELETE /orders', limiter);
      const reply = await within(call(bg, 'clob.cancel', { account: owner(), orderIds: [orderId] }), ANSWER_MS);
      expect(reply).not.toBe('still waiting');
      expect(reply).toMatchObject({
        ok: false,
        error: { code: -32002, shortMessage: expect.stringMatching(/asks to wait \d+ s/) },
      });
      expect(h.ctx.requestLog.some((r) => r.path === '/clob/orders' && r.method === 'DELETE' && r.status === 429)).toBe(
        true,
      );
    },
    30_000,
  );
});

describe('an order book that answers 429 with a huge or malformed Retry-After', () => {
  for (const [what, value] of [
    ['a day in seconds', '86400'],
    ['an HTTP date a week ahead', new Date(Date.now() + 7 * 86_400_000).toUTCString()],
    ['four hundred digits', '9'.repeat(400)],
  ] as const) {
    it(`${what}: the person's cancel answers in time`, async () => {
      let refusals = 0;
      const { bg, orderId } = await ready((url, method) => {
        if (method !== 'DELETE' || !url.endsWith('/clob/orders') || refusals >= 2) return undefined;
        refusals++;
        return new Response(JSON.stringify({ error: 'Too Many Requests' }), {
          status: 429,
          headers: { 'Content-Type': 'application/json', 'Retry-After': value },
        });
      });
      const reply = await within(call(bg, 'clob.cancel', { account: owner(), orderIds: [orderId] }), ANSWER_MS);
      expect(reply).not.toBe('still waiting');
      expect(reply).toMatchObject({ ok: false, error: { code: -32002 } });
    }, 30_000);
  }

  it('a malformed value: the cancel is retried after a short backoff and goes through', async () => {
    let refusals = 0;
    const { bg, orderId } = await ready((url, method) => {
      if (method !== 'DELETE' || !url.endsWith('/clob/orders') || refusals >= 1) return undefined;
      refusals++;
      return new Response(JSON.stringify({ error: 'Too Many Requests' }), {
        status: 429,
        headers: { 'Content-Type': 'application/json', 'Retry-After': 'soon' },
      });
    });
    const reply = await within(call(bg, 'clob.cancel', { account: owner(), orderIds: [orderId] }), ANSWER_MS);
    expect(reply).toMatchObject({ ok: true });
    expect(h.ctx.clob.orders.get(orderId)?.status).not.toBe('live');
  }, 30_000);
});

describe('a perps gateway that answers every cancel "slow down, retry after 0 s"', () => {
  it(
    'panic backs off between its cancels instead of ' + 'resending at once, ends within its bound and is not ok',
    async () => {
      const timing: PanicTiming = { drainMs: 300, requestTimeoutMs: 1_000, venuesMaxMs: 3_000 };
      let sent = 0;
      const { bg } = await ready((url, method) => {
        if (method !== 'DELETE' || !url.endsWith('/perps/v1/trade/orders/all')) return undefined;
        sent++;
        return new Response(JSON.stringify({ status: 'err', error: 'rate limited' }), {
          status: 429,
          headers: { 'Content-Type': 'application/json', 'Retry-After': '0' },
        });
      }, timing);
      const t0 = Date.now();
      const report = (await call(bg, 'panic.run', { closePositions: false })).result as PanicReport;
      expect(Date.now() - t0).toBeLessThan(panicBoundMs(timing) + 2_000);
      expect(report.perps).toMatchObject({ ok: false, error: expect.stringMatching(/slow down/) });
      expect(report.ok).toBe(false);
      expect(report.locked).toBe(true);
      // At most one cancel every quarter second over the 3 s phase (the first at once).
      expect(sent).toBeGreaterThan(1);
      expect(sent).toBeLessThanOrEqual(Math.ceil(timing.venuesMaxMs / 250) + 1);
    },
    30_000,
  );
});
