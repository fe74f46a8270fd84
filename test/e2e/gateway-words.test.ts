/**
 * The approval window in real Chromium against a gateway that lies in its public reads: the extension's
 * venue URLs point at a gateway hop (`startLyingGateway`, `test/kits/sandbox.ts`) in front of the sandbox, which
 * serves an instrument name with bidi characters and a tick and lot that would round the order away, while the signing
 * path stays honest. What the window shows (its lines and its order numbers) must be what reached the venue (the
 * sandbox's request log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { connectDemo, launchHarness, messenger, onboardDemo, type Harness } from './harness';
import { patchInstruments, startLyingGateway, type LyingGateway } from '../kits/sandbox';

const PASSWORD = 'correct horse battery staple';
const BIDI = /[\u061C\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/;

let h: Harness;
let hop: LyingGateway;
let demo: Page;

beforeAll(async () => {
  h = await launchHarness({ now: undefined });
  hop = await startLyingGateway(h.sandbox.url, {
    rewrite: (a) =>
      a.path === '/perps/v1/info/instruments'
        ? patchInstruments(a.body, (i) =>
            i.instrument_id === 1
              ? { symbol: 'ETH-PERP\u202E', tick_size: '100', lot_size: '1', price_decimals: 0, quantity_decimals: 0 }
              : undefined,
          )
        : undefined,
  });
  const { popup } = await onboardDemo(h, PASSWORD);
  const r = await messenger(popup)('settings.set', {
    perpsUrl: `${hop.url}/perps`,
    clobUrl: `${hop.url}/clob`,
    gammaUrl: `${hop.url}/gamma`,
    dataUrl: `${hop.url}/data`,
  });
  expect(r.ok).toBe(true);
  await popup.close();
  demo = await connectDemo(h);
}, 90_000);

afterAll(async () => {
  await h?.close();
  await hop?.close();
});

describe('the approval window against a lying gateway', () => {
  it(
    'shows the instrument by its id and the size and price that reached ' +
      'the venue, padded never rounded, with the off-tick price flagged',
    async () => {
      const [ticker] = (await (await fetch(`${h.sandbox.url}/perps/v1/info/tickers?instrument_id=1`)).json()) as {
        mark_price: string;
      }[];
      const mark = Number(ticker!.mark_price);
      const price = (Math.floor(mark * 0.99) + 0.5).toFixed(1);
      const from = h.sandbox.ctx.requestLog.length;
      const opened = h.ctx.waitForEvent('page', {
        predicate: (p) => p.url().endsWith('/approval.html'),
        timeout: 10_000,
      });
      const sent = demo.evaluate(
        (p) =>
          (window as unknown as { countersign: { request: (a: unknown) => Promise<unknown> } }).countersign.request({
            method: 'perps_sendCommand',
            params: {
              op: { type: 'createOrders', args: [{ iid: 1, buy: true, qty: '0.013', p, tif: 'gtc', po: true }] },
            },
          }),
        price,
      );
      const w = await opened;
      await w.bringToFront();
      await w.getByTestId('approval-order').waitFor();
      const lines = await w.getByTestId('approval-lines').innerText();
      const order = await w.getByTestId('approval-order').innerText();
      const offStep = await w.getByTestId('approval-off-step').innerText();
      await w.waitForFunction(
        () => !(document.querySelector('[data-testid="approve"]') as HTMLButtonElement | null)?.disabled,
        undefined,
        { timeout: 5_000 },
      );
      await w.getByTestId('approve').click();
      await sent;
      const posted = h.sandbox.ctx.requestLog
        .slice(from)
        .find((x) => x.method === 'POST' && x.path === '/perps/v1/trade/orders');
      const arg = (JSON.parse(posted!.body!) as { op: { args: { iid: number; qty: string; p: string }[] } }).op
        .args[0]!;
      expect(arg).toMatchObject({ iid: 1, qty: '0.013', p: price });
      const grouped = price.replace(/\B(?=(\d{3})+(?!\d))/, ',');
      for (const text of [lines, order]) {
        expect(text).not.toMatch(BIDI);
        expect(text).not.toContain('ETH-PERP');
        expect(text).toContain('instrument #1');
        expect(text).toContain('0.013');
        expect(text).toContain(grouped);
      }
      expect(order).toMatch(/^Buy 0\.013 instrument #1 at /);
      expect(offStep).toContain('not a multiple of the tick 100 the venue reports');
    },
  );
});
