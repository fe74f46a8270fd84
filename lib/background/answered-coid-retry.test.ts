/**
 * A keyed retry of an order the venue answered is never signed again, whatever shape the retry takes
 * (lib/page/README.md "Idempotent submissions"): an IOC order that filled at once (so its client order id is
 * free again at the venue, which cannot judge the reuse), answered to the page, then retried by a library that adds an
 * idempotencyKey, or that batches the same order with a new one — under a standing grant (no window), in the same
 * worker and after a browser restart. The real background on the fake browser against the in-process sandbox.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import {
  pageSender,
  pagePathKit,
  sandboxSuite,
  sleep,
  until,
  perpsPosts,
  type PagedBackground,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, armed, grantOf, ready, settle, iocBtc, approveAll } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'answered-coid-retry',
});

/** The venue's fills of `coid` (orders the sandbox filled carrying it). */
const filledWith = (coid: string) =>
  [...h.ctx.venue.orders.values()].filter((o) => o.coid === coid && o.status === 'filled').length;

/** Sends `params` from the page; approves any window that opens (a person who thinks it is the retry), and settles. */
async function send(bg: PagedBackground, params: unknown) {
  const r = settle(bg.page(page).request('perps_sendCommand', params));
  await sleep(300);
  approveAll(bg);
  return r;
}

describe('a retry of an answered client order id is never a second order', () => {
  it(
    'an IOC order answered under a grant, retried with an idempotencyKey added ' +
      '(a library that adds one on retry): nothing is posted again, no second fill',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'a1'.repeat(16);
      const order = await iocBtc(coid);
      const first = await send(bg, order);
      expect(first.e).toBeUndefined();
      expect(filledWith(coid)).toBe(1);
      const before = perpsPosts(wire);
      // Control: the very same request gets the first answer back and posts nothing (held).
      const same = await send(bg, order);
      expect(same.r).toEqual(first.r);
      expect(perpsPosts(wire)).toBe(before);
      const retry = await send(bg, { ...order, idempotencyKey: 'retry-1' });
      expect(
        perpsPosts(wire) - before,
        `the answered order is not signed and posted again (retry got ${JSON.stringify(retry).slice(0, 200)})`,
      ).toBe(0);
      expect(filledWith(coid), 'one fill of the order').toBe(1);
    },
    30_000,
  );

  it(
    'an IOC order answered under a grant, retried inside a batch ' +
      'with a new order: the answered order is not posted again',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'a2'.repeat(16);
      const order = await iocBtc(coid);
      expect((await send(bg, order)).e).toBeUndefined();
      const before = perpsPosts(wire);
      const batch = {
        op: { type: 'createOrders', args: [order.op.args[0]!, { ...order.op.args[0]!, c: 'b2'.repeat(16) }] },
      };
      const retry = await send(bg, batch);
      expect(
        perpsPosts(wire) - before,
        `coid ${coid}, answered, is not sent again inside a batch (${JSON.stringify(retry).slice(0, 200)})`,
      ).toBe(0);
      expect(filledWith(coid)).toBe(1);
    },
    30_000,
  );

  it(
    'after a browser restart (grants ended): the answered IOC order retried ' +
      'with an idempotencyKey added opens no window and is not posted again (the ' +
      'test approves any window, as a person who takes it for the retry would)',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const coid = 'a3'.repeat(16);
      const order = await iocBtc(coid);
      expect((await send(bg, order)).e).toBeUndefined();
      await sleep(50); // the answered record is written behind the answer
      await fakeBrowser.storage.session.clear();
      const { bg: next } = await ready({ dbName, onboard: false, wire });
      await fakeBrowser.runtime.onStartup.trigger();
      expect((await call(next, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      const before = perpsPosts(wire);
      const r = settle(next.page(page).request('perps_sendCommand', { ...order, idempotencyKey: 'retry-3' }));
      await sleep(300);
      const windows = next.registry.size;
      approveAll(next);
      const retry = await r;
      expect.soft(windows, 'no window for the retry of an answered order').toBe(0);
      expect(
        perpsPosts(wire) - before,
        `not posted again after the restart (${JSON.stringify(retry).slice(0, 200)})`,
      ).toBe(0);
      expect(filledWith(coid)).toBe(1);
    },
    30_000,
  );
});
