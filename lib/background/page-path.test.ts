/**
 * The page path's ordering ("fast page path"): a covered order is answered before its
 * owned-order record is written, and that record is still in place before the site's next request is
 * checked — so a granted cancel of the order the page was just told about is covered, never a window.
 * Black-box through the page's port, against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import { BOUNDS, browser, grantAtOrderWindow, KDF, withPages, type PagedBackground } from '../../test/kits/background';

const SITE = 'https://trade.example';
const GRANT_LIMITS = {
  venue: 'perps',
  allow: { order: true, cancel: true, leverage: false },
  instruments: [2],
  maxNotional: '5000',
  dailyNotional: '50000',
  priceBandPct: '20',
  slippagePct: '1',
}; // under the caps the offer proposes from the demo equity
const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});
const page = {
  get id() {
    return fakeBrowser.runtime.id;
  },
  url: `${SITE}/app`,
  frameId: 0,
  tab: { id: 3, url: `${SITE}/app` },
};
const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await bg.handle({ type, payload }, popup())) as { ok: boolean; result?: unknown };
const ethOrder = (p: string) => ({
  op: { type: 'createOrders', args: [{ iid: 2, buy: true, qty: '0.1', p, tif: 'gtc', po: true }] },
});

let h: Harness;
beforeEach(async () => {
  fakeBrowser.reset();
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

/**
 * A background with the demo account, the site connected and holding a perps grant (orders and cancels on ETH-PERP).
 */
async function granted(): Promise<PagedBackground> {
  const bg = withPages(startBackground({ browser, dbName: `page-path-${Math.random()}`, kdf: KDF, bounds: BOUNDS }));
  await call(bg, 'vault.create', { password: 'a good password' });
  await call(bg, 'settings.set', { perpsUrl: h.perps, clobUrl: h.clobUrl });
  await call(bg, 'vault.importOwnerKey', { privateKey: h.demo.owner.privateKey });
  const p = h.demo.proxy;
  await call(bg, 'proxy.import', {
    account: h.demo.owner.address,
    privateKey: p.privateKey,
    proxy: p.address,
    secret: p.secret,
    expiry: p.expiry,
  });
  await grantAtOrderWindow(bg, page, ethOrder('3100'), GRANT_LIMITS);
  return bg;
}

describe('page path ordering', () => {
  it(
    'answers a covered order before recording it, and a granted cancel of ' +
      'that order sent at once is covered (no window) once the record is in',
    async () => {
      const bg = await granted();
      const grants = bg.grants();
      const record = grants.recordOrders.bind(grants);
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const recorded = vi.spyOn(grants, 'recordOrders').mockImplementation(async (...args) => {
        await gate; // the record is slow: the page must not wait for it, its next request must
        return record(...args);
      });
      const site = bg.page(page);
      const ack = await site.request('perps_sendCommand', ethOrder('3000'));
      expect(bg.registry.size).toBe(0);
      // answered first; the record starts in the next task, and is held at the gate
      await vi.waitFor(() => expect(recorded).toHaveBeenCalledTimes(1));
      const oid = (ack as { oid: number }[])[0]!.oid;
      expect(Number.isSafeInteger(oid)).toBe(true);
      let done = false;
      const cancel = site
        .request('perps_sendCommand', { op: { type: 'cancelOrders', args: [oid] } })
        .finally(() => (done = true));
      await new Promise((r) => setTimeout(r, 100));
      // Not checked yet: a check now would not know the order is the grant's, and would open a window.
      expect(bg.registry.size).toBe(0);
      expect(done).toBe(false);
      release();
      await cancel;
      expect(bg.registry.size).toBe(0);
      expect(h.ctx.venue.orders.get(oid)?.status).toBe('cancelled');
    },
  );

  it(
    'keeps one settings read for the signer, yet the next ' + 'signature after a settings change uses the new gateway',
    async () => {
      const bg = await granted();
      const site = bg.page(page);
      const from = h.ctx.requestLog.length;
      await site.request('perps_sendCommand', ethOrder('3001'));
      expect(h.ctx.requestLog.slice(from).some((r) => r.method === 'POST' && r.path === '/perps/v1/trade/orders')).toBe(
        true,
      );
      // Another gateway root (the sandbox answers 404 there): the order goes there, not to the cached one.
      expect((await call(bg, 'settings.set', { perpsUrl: `${h.url}/elsewhere` })).ok).toBe(true);
      const next = h.ctx.requestLog.length;
      await site.request('perps_sendCommand', ethOrder('3002')).catch(() => undefined);
      // The signer asks the new root (for its signing domain, which is not there: nothing is signed or sent).
      const paths = h.ctx.requestLog.slice(next).map((r) => `${r.method} ${r.path}`);
      expect(paths.some((p) => p.startsWith('GET /elsewhere/'))).toBe(true);
      expect(paths).not.toContain('POST /perps/v1/trade/orders');
    },
  );
});
