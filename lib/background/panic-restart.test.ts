/**
 * Panic survives the service worker stopping in the middle of it, black-box: a worker that stops after
 * the person pressed panic but before its lock (here: while a silent venue keeps panic waiting) must not
 * leave a vault the next worker opens again — with the signing gate open, the dead-man renewing the kill
 * switches panic left armed, and pages able to ask for signatures. A "restart" is a second
 * `startBackground` on the same database and `storage.session`; the first is cut off the network at that
 * moment, as a stopped worker would be.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { startHarness, type Harness } from '../../test/kits/sandbox';
import { startBackground } from './index';
import type { PanicTiming } from './panic';
import {
  BOUNDS,
  browser,
  callAs,
  KDF,
  onboardDemo,
  pageSender,
  until,
  withPages,
  type PagedBackground,
  type Reply,
} from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 5);
const TIMING: PanicTiming = { drainMs: 300, requestTimeoutMs: 3_000, venuesMaxMs: 6_000 };
const GRANT = {
  venue: 'perps',
  allow: { order: true, cancel: true, leverage: false },
  instruments: [2],
  maxNotional: '20000',
  dailyNotional: '1000000',
  priceBandPct: '20',
  slippagePct: '1',
};

let h: Harness;
let n = 0;
const started: { bg: PagedBackground; net: { cut: boolean } }[] = [];
beforeEach(async () => {
  fakeBrowser.reset();
  h = await startHarness({ now: undefined });
});
afterEach(async () => {
  for (const s of started.splice(0)) {
    await callAs(s.bg, 'vault.lock').catch(() => undefined);
    s.net.cut = true;
  }
  await h.close();
});
const call = async (bg: PagedBackground, type: string, payload: unknown = {}) =>
  (await callAs(bg, type, payload)) as Reply;

/** A background whose network can be cut (a stopped worker's); while `silent`, the perps cancel-all gets no answer. */
function start(dbName: string) {
  const net = { cut: false, silent: false, sent: [] as string[] };
  const fetchFn: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (net.cut) return Promise.reject(new TypeError('fetch failed'));
    net.sent.push(`${init?.method ?? 'GET'} ${url}`);
    if (net.silent && url.endsWith('/perps/v1/trade/orders/all')) return new Promise<Response>(() => undefined);
    return fetch(input, init);
  };
  const bg = withPages(startBackground({ browser, dbName, kdf: KDF, bounds: BOUNDS, fetchFn, panicTiming: TIMING }));
  started.push({ bg, net });
  return { bg, net };
}

describe('a worker that stops while panic runs', () => {
  it(
    'the next worker finds the vault locked: no signature, ' + 'no kill-switch renewal, until the person unlocks',
    async () => {
      const dbName = `panic-restart-${n++}`;
      const first = start(dbName);
      await onboardDemo(first.bg, h, page);
      await first.bg
        .grants()
        .create({ origin: SITE, account: h.demo.owner.address, limits: GRANT as never, durationMs: 3_600_000 });
      await until(
        async () =>
          (
            (await call(first.bg, 'deadman.status')).result as { venues: { venue: string; armed: boolean }[] }
          ).venues.some((v) => v.venue === 'perps' && v.armed),
        1_000,
      );

      // The person presses panic; the perps gateway is silent, so panic is still waiting on it…
      first.net.silent = true;
      void call(first.bg, 'panic.run', { closePositions: false });
      await until(() => first.net.sent.some((s) => s.endsWith('/perps/v1/trade/orders/all')), 500);
      // …when the browser stops the worker.
      first.net.cut = true;

      const next = start(dbName);
      const status = (await call(next.bg, 'vault.status')).result as { state: string };
      expect(status.state).toBe('locked');
      // Nothing signs on the next worker: the popup's order and the page's request are both refused.
      const order = await call(next.bg, 'perps.send', {
        account: h.demo.owner.address,
        op: { type: 'cancelAll', args: {} },
      });
      expect(order.ok).toBe(false);
      const renewals = () => next.net.sent.filter((s) => s.includes('/perps/v1/trade/auto-cancel')).length;
      await new Promise((r) => setTimeout(r, 1_500));
      expect(renewals()).toBe(0);
      // The person unlocks on the next worker: the site's standing permission panic revoked stays revoked.
      expect((await call(next.bg, 'vault.unlock', { password: 'a good password' })).ok).toBe(true);
      expect((await call(next.bg, 'grant.list')).result).toEqual([]);
    },
  );
});
