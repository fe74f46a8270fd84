/**
 * A proxy key read that queued behind a granted order's use write before the person deleted the key is
 * answered with it (it ran first), but the key is not kept for later reads: a granted order the site
 * sends after the delete was called — while the delete still waits its turn in the vault — is not signed
 * with the deleted key. Black-box: page requests, vault calls and what reached the sandbox. Setup: `pagePathKit`.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, sandboxSuite, until, perpsPosts, pagePathKit, waitPending } from '../../test/kits/background';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { armed, grantOf, ready, settle, holdUseWrites, btcOrder, closeAll, capOf } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'granted-key-reads-queued',
});

describe("perps under a grant: a proxy key deleted while a granted order's key read waits behind its use write", () => {
  it(
    "a granted order's key read queued before the delete call and the delete waits behind another vault " +
      'call: no order is signed with the key after the delete call, the one the site sends meanwhile included',
    async () => {
      const { bg, wire } = await ready();
      await grantOf(bg, await capOf(10));
      await until(() => armed(bg));
      // Any key write empties the keys held in memory: the first order's key read then queues.
      await bg.vault().generateOwnerKey('another');
      const hold = holdUseWrites(bg);
      // The first order read the key before the delete was called: it may be sent, once.
      const before = perpsPosts(wire);
      const first = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await until(() => hold.held() > 0);
      // Another vault call queued before the delete holds the writer lock (as a popup's password check does while its
      // KDF runs).
      let go!: () => void;
      const busy = new Promise<void>((r) => (go = r));
      const other = bg.vault().exclusive(() => busy);
      // The record alone (what `proxy.delete` does once the gateway has deleted the proxy).
      const deleting = bg.vault().deleteProxy(h.demo.proxy.address);
      hold.release();
      await Promise.race([first, new Promise((r) => setTimeout(r, 200))]);
      const next = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await Promise.race([next, new Promise((r) => setTimeout(r, 200))]);
      go();
      await other;
      await deleting;
      await first;
      await Promise.race([next, waitPending(bg)]);
      closeAll(bg);
      expect((await next).e, 'no proxy key: the order sent after the delete call is refused').toBeDefined();
      const firstSent = (await first).e === undefined ? 1 : 0;
      expect(perpsPosts(wire) - before, 'nothing is signed with the key after its delete was called').toBe(firstSent);
    },
    30_000,
  );
});
