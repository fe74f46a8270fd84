/**
 * Panic and an account whose perps proxy key has expired, black-box: orders the key placed before it
 * expired still rest at the venue, and panic cannot sign their cancel. Its report must say so for that
 * account — never "no key for this venue" and an overall ok while orders it could not cancel may rest.
 * Against the in-process sandbox, whose records are the truth.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Harness } from '../../test/kits/sandbox';
import type { PanicReport, PanicTiming } from './panic';
import {
  callAs,
  markPrice,
  onTick,
  until,
  useSandboxBackgrounds,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';

const TIMING: PanicTiming = { drainMs: 300, requestTimeoutMs: 1_000, venuesMaxMs: 4_000 };

let h: Harness;
const { start } = useSandboxBackgrounds({ dbPrefix: 'panic-expired', onStart: (x) => (h = x) });
const ok = async (bg: PagedBackground, type: string, payload: unknown = {}) => {
  const r = (await callAs(bg, type, payload)) as Reply;
  if (!r.ok) throw new Error(`${type}: ${JSON.stringify(r.error)}`);
  return r.result;
};

describe('panic and an expired proxy key', () => {
  it(
    "the account's perps step says its orders were not " +
      'cancelled because its key expired, and the report is not ok',
    async () => {
      const bg = await start({ panicTiming: TIMING });
      await ok(bg, 'vault.create', { password: 'a good password' });
      await ok(bg, 'settings.set', {
        perpsUrl: h.perps,
        clobUrl: h.clobUrl,
        gammaUrl: `${h.url}/gamma`,
        dataUrl: `${h.url}/data`,
      });
      const key = generatePrivateKey();
      const B = privateKeyToAccount(key).address;
      await ok(bg, 'vault.importOwnerKey', { privateKey: key, label: 'B' });
      const expiry = Date.now() + 3_000;
      await ok(bg, 'proxy.issue', { account: B, expiry, label: '' });
      await ok(bg, 'account.select', { address: B });
      const p = Number(await markPrice(h, 2));
      await ok(bg, 'perps.send', {
        account: B,
        op: {
          type: 'createOrders',
          args: [{ iid: 2, buy: true, qty: '0.1', p: onTick(p * 0.9, 0.05, 2), tif: 'gtc', po: true }],
        },
      });
      const resting = () =>
        [...h.ctx.venue.orders.values()].filter((o) => o.owner === B.toLowerCase() && o.status === 'open');
      expect(resting().length).toBe(1);
      await until(() => Date.now() > expiry + 200, 600);

      const report = (await ok(bg, 'panic.run', { closePositions: false })) as PanicReport;
      expect(resting().length).toBe(1); // nothing could cancel it
      const row = report.accounts.find((a) => a.account.toLowerCase() === B.toLowerCase())!;
      expect(row.perps).toMatchObject({
        ok: false,
        error: expect.stringMatching(/not cancelled: its perps proxy key expired/),
      });
      expect(report.ok).toBe(false);
      expect(report.locked).toBe(true);
    },
  );
});
