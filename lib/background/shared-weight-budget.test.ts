/**
 * One client-side weight budget per gateway, shared by the venue reads and the signed commands,
 * black-box through the popup's procedures against the in-process sandbox: what the person's reads
 * spent, a command cannot spend again (and the gateway never has to answer 429).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, useSandboxBackgrounds } from '../../test/kits/background';

const page = pageSender('https://trade.example', 7);

let h: Harness;
const { call, owner, start } = useSandboxBackgrounds({ dbPrefix: 'shared-weight-budget', onStart: (x) => (h = x) });

/** Calls `perps.read` `name` until the client meter refuses it (at most `max` times); how many were answered. */
async function readUntilRefused(bg: Awaited<ReturnType<typeof start>>, name: string, max: number): Promise<number> {
  for (let i = 0; i < max; i++) {
    const r = await call(bg, 'perps.read', { account: owner(), name });
    if (!r.ok) {
      expect(r).toMatchObject({ ok: false, error: { name: 'Signer.WeightBudgetError' } });
      return i;
    }
  }
  throw new Error(`${max} reads of ${name} were all answered`);
}

describe("the gateway's request budget", () => {
  it(
    "reads the person made fill it: the person's next order is " +
      'refused before it is sent, and no order reaches the gateway',
    async () => {
      const bg = await start({ page });
      // Request weight 10 each, then 2 each, until the person's share (90 % of 1 200 a minute) has no room for 2 more.
      expect(await readUntilRefused(bg, 'deposits', 200)).toBeGreaterThan(0);
      await readUntilRefused(bg, 'instruments', 10);
      // Twenty orders: request weight 2 (`1 + floor(n / 20)`).
      const args = Array.from({ length: 20 }, () => ({
        iid: 2,
        buy: true,
        qty: '0.01',
        p: '100',
        tif: 'gtc',
        po: true,
      }));
      const reply = await call(bg, 'perps.send', { account: owner(), op: { type: 'createOrders', args } });
      expect(reply).toMatchObject({ ok: false, error: { name: 'Signer.WeightBudgetError' } });
      expect(
        h.ctx.requestLog.filter((r) => r.method === 'POST' && r.path.startsWith('/perps/v1/trade')),
        'no order reached the gateway',
      ).toEqual([]);
    },
    60_000,
  );
});
