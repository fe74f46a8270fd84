/**
 * A granted order refused before anything is signed counts no use against its grant: a perps order the
 * site sends while its account has no proxy key (deleted, or past its expiry) is refused, and once a proxy
 * key is back the grant still covers as many orders as its cap allows. Black-box: page requests, vault
 * calls and what reached the sandbox. Setup: `pagePathKit`.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, sandboxSuite, until, perpsPosts, pagePathKit, waitPending } from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { armed, grantOf, ready, settle, btcOrder, closeAll, capOf, owner } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'granted-refusals-count-no-use',
});

type Ready = Awaited<ReturnType<typeof ready>>;

/** Two more orders of the site: each covered by the grant (no window) and sent to the sandbox. */
async function twoCoveredOrders(bg: Ready['bg'], wire: Ready['wire']): Promise<void> {
  const before = perpsPosts(wire);
  for (let i = 0; i < 2; i++) {
    const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
    const pending = await Promise.race([waitPending(bg), order.then(() => [])]);
    closeAll(bg);
    expect(pending, `order ${i + 1} of 2 is covered (no window)`).toHaveLength(0);
    expect((await order).e).toBeUndefined();
  }
  expect(perpsPosts(wire) - before).toBe(2);
}

describe('perps under a grant: an order refused for want of a proxy key', () => {
  it(
    "the proxy key deleted: the site's granted order is refused and counts " +
      'no use; with the key back, a grant capped at 2 orders covers 2 more',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(2.5));
      await until(() => armed(bg));
      await bg.vault().deleteProxy(h.demo.proxy.address);
      const refused = await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      expect(refused.e, 'no proxy key: refused').toBeDefined();
      const { proxy } = h.demo;
      await bg.vault().putProxy({
        account: owner(),
        privateKey: proxy.privateKey,
        secret: proxy.secret,
        proxy: proxy.address,
        expiry: proxy.expiry,
      });
      await twoCoveredOrders(bg, wire);
    },
    30_000,
  );

  it(
    "the proxy key past its expiry: the site's granted order is refused and counts " +
      'no use; with an unexpired key, a grant capped at 2 orders covers 2 more',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(2.5));
      await until(() => armed(bg));
      const { proxy } = h.demo;
      const put = (expiry: number) =>
        bg.vault().putProxy({
          account: owner(),
          privateKey: proxy.privateKey,
          secret: proxy.secret,
          proxy: proxy.address,
          expiry,
        });
      await put(Date.now() + 300);
      await new Promise((r) => setTimeout(r, 400));
      const refused = await settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      expect(refused.e, 'no unexpired proxy key: refused').toBeDefined();
      await put(proxy.expiry);
      await twoCoveredOrders(bg, wire);
    },
    30_000,
  );
});
