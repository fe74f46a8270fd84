/**
 * The approval window's early reads (`lib/messaging/approval-early-reads.ts`) are answers taken before the
 * window renders. What the window shows from them may be stale by the time the person clicks; the click
 * carries the request id and digest shown, and the background binds it to the pending request, so a
 * stale screen never approves another request. Black-box: the window's own store over the real background.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { Harness } from '../../test/kits/sandbox';
import {
  callAs,
  pageSender,
  pagePathKit,
  perpsPosts,
  sandboxSuite,
  until,
  waitPending,
} from '../../test/kits/background';
import type { BrowserSender } from '../messaging/router';
import { beginApprovalReads, earlyAnswers } from '../messaging/approval-early-reads';
import { createCaller } from '../messaging/client';
import { createApprovalStore } from '../../entrypoints/popup/stores/approvals';

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const windowSender = (): BrowserSender => ({
  id: fakeBrowser.runtime.id,
  url: `${fakeBrowser.runtime.getURL('/').replace(/\/$/, '')}/approval.html`,
});

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { ready, settle, btcOrder, closeAll } = pagePathKit({
  harness: () => h,
  started,
  site: SITE,
  page,
  dbPrefix: 'approval-window-early-reads',
});

describe('the approval window: what its early reads showed and what the approve click signs', () => {
  it(
    'a lock and unlock between the early read and the render: the approve click on the request ' +
      'the early read showed signs nothing, and the request made after the unlock stays pending',
    async () => {
      const { bg, wire } = await ready();
      const first = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      const [shown] = await waitPending(bg);
      const send = (m: unknown) => bg.handle(m as never, windowSender());
      beginApprovalReads(send);
      await callAs(bg, 'vault.lock');
      expect((await first).e, 'the lock refused the request the early read showed').toBeDefined();
      await callAs(bg, 'vault.unlock', { password: 'a good password' });
      const before = perpsPosts(wire);
      const second = settle(bg.page(page).request('perps_sendCommand', await btcOrder('0.02')));
      await until(() => bg.registry.size === 1 && bg.registry.list()[0]!.id !== shown!.id);
      const pending = bg.registry.list()[0]!;
      // The window renders from the early answer, taken before the lock.
      const store = createApprovalStore({
        call: createCaller(earlyAnswers(send)),
        onEmpty: () => undefined,
        focus: { has: () => true, listen: () => () => undefined },
        armDelayMs: 0,
      });
      await store.load();
      expect(store.head.value?.id, 'the window shows what the early read answered').toBe(shown!.id);
      store.arm();
      await until(() => store.armed.value);
      await store.decide(true);
      expect(store.error.value, 'the click is refused').toBeDefined();
      expect(
        bg.registry.list().map((r) => [r.id, r.digest]),
        'the request made after the unlock is still pending, undecided',
      ).toEqual([[pending.id, pending.digest]]);
      expect(store.head.value?.id, 'the window then shows the pending request').toBe(pending.id);
      closeAll(bg);
      expect((await second).e).toBeDefined();
      expect(perpsPosts(wire) - before, 'nothing signed or sent').toBe(0);
    },
    30_000,
  );
});
