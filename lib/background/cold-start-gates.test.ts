/**
 * A worker the browser just started answers gated requests from the real vault state, never from what
 * `storage.session` held before the vault opened: a granted order sent to a worker that is still
 * building its services, with the vault locked in the meantime, is not signed and nothing reaches the
 * venue; a session state lost while the worker was stopped reads as locked although the popup's start
 * hint of that unlock is still stored. The real background on the fake browser against the in-process
 * sandbox (`pagePathKit`); a worker stop is a second background on the same database and storage.session.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import { pageSender, sandboxSuite, until, perpsPosts, pagePathKit, sleep } from '../../test/kits/background';
import { START_HINT_KEY, usableHint, VAULT_EPOCH_KEY } from '../messaging/start-hint';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const popup = () => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/popup.html`,
});

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, armed, grantOf, ready, codeOf, settle, stopFlush, btcOrder } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'cold-start-gates',
});

describe('a just-started worker answers gated requests from the real vault state', () => {
  it(
    'a granted order sent while the worker builds its services, with a lock from ' +
      'the popup right behind it: nothing is signed or sent, the page gets an error',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const order = await btcOrder();
      stopFlush(bg);
      const before = perpsPosts(wire);
      // The next worker: both arrive before its vault database is open.
      const { bg: next } = await ready({ dbName, onboard: false, wire });
      const sent = settle(next.page(page).request('perps_sendCommand', order));
      const locked = next.handle({ type: 'vault.lock', payload: {} }, popup());
      expect((await locked).ok).toBe(true);
      const out = await sent;
      expect(out.e, 'the granted order is refused').toBeDefined();
      expect(codeOf(out.e)).toBeTypeOf('number');
      await sleep(100);
      expect(perpsPosts(wire) - before, 'no order reached the venue').toBe(0);
      expect(((await call(next, 'vault.status')).result as { unlocked: boolean }).unlocked).toBe(false);
    },
    30_000,
  );

  it(
    'the session state gone while the worker was stopped, the start hint of that unlock still ' +
      'stored: the next worker reads locked, asks for nothing to be signed and sends nothing',
    async () => {
      const { bg, wire, dbName } = await ready();
      await grantOf(bg);
      await until(() => armed(bg));
      const order = await btcOrder();
      // The popup's hint of this unlock, as the popup stores it (the epoch read before the status).
      const epoch = (await fakeBrowser.storage.session.get(VAULT_EPOCH_KEY))[VAULT_EPOCH_KEY];
      const status = (await call(bg, 'vault.status')).result;
      await fakeBrowser.storage.session.set({ [START_HINT_KEY]: { epoch, status } });
      expect(
        usableHint(await fakeBrowser.storage.session.get([START_HINT_KEY, VAULT_EPOCH_KEY])),
        'the stored hint says unlocked',
      ).toMatchObject({ unlocked: true });
      stopFlush(bg);
      await fakeBrowser.storage.session.remove('vault.session'); // the vault's session state (`compose.ts`)
      const before = perpsPosts(wire);
      const { bg: next } = await ready({ dbName, onboard: false, wire });
      const asked = next.handle({ type: 'vault.status', payload: {} }, popup());
      const sent = settle(next.page(page).request('perps_sendCommand', order));
      const reply = (await asked) as { ok: boolean; result?: { unlocked: boolean; state: string } };
      expect(reply.result).toMatchObject({ unlocked: false, state: 'locked' });
      const out = await sent;
      expect(out.e, 'the granted order is refused').toBeDefined();
      expect(next.registry.size, 'no approval window asks to sign with a locked vault').toBe(0);
      await sleep(100);
      expect(perpsPosts(wire) - before, 'no order reached the venue').toBe(0);
    },
    30_000,
  );
});
