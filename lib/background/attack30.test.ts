/**
 * ATTACKS 30 (background level; outside review of 3b793a4 + 1b1e391, issue #20 page path). Setup as
 * attack28/29: the real background on the fake browser against the in-process sandbox, a malicious
 * connected page (two tabs), the popup, and `restart()` (a second background on the same database and
 * `storage.session`). Grant/vault-level attacks: lib/grants/attack30.test.ts.
 *
 * Tried:
 * - a worker stops with a granted order sent and its use write pending; in the next worker the popup's
 *   `grant.list` and two tabs' orders all race as its very first requests (is the leftover merged before
 *   any decision, whoever reads first?)                                             — holds
 * - the use store fails its integrity check at each use's read: every flagged perps request (falls back
 *   to a window) leaves its journal record open in storage.session with a use that is never stored
 *   (nothing in this worker ever lets it go)                                        — was broken (minor, DoS)
 *
 * Fixed: a journal record of a command that was not sent goes with its use (`AuditJournal.discard`; the
 * use still counts in memory, which only refuses sooner). "(was broken)" tests failed before the fix.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../sandbox/testkit';
import { pageSender, sandboxSuite, until, waitPending, perpsPosts, pagePathKit, browser } from './testkit';
import { TamperedRecordError } from '../vault/errors';
import { grantUseRecords } from '../grants/use-records';
const AUDIT_JOURNAL_KEY = 'auditJournal'; // lib/audit/journal.ts (not exported)

const SITE = 'https://trade.example';
const page = pageSender(SITE, 3);
const page2 = pageSender(SITE, 5);

let h: Harness;
const started = sandboxSuite((x) => (h = x));
const { call, armed, grantOf, ready, settle, restart, stopFlush, holdUseWrites, btcOrder, closeAll, capOf } = pagePathKit({ harness: () => h, started, site: SITE, page, dbPrefix: 'attack30' });

describe('30.1 the next worker\'s first requests race the leftover merge', () => {
  it('holds: popup grant.list and two tabs\' orders are the restarted worker\'s first requests, all at once: the unwritten use counts, exactly the room left is used (cap 2.5 orders: one more, not two)', async () => {
    const { bg, wire, dbName } = await ready();
    await grantOf(bg, await capOf(2.5));
    await until(() => armed(bg));
    const before = perpsPosts(wire);
    const hold = holdUseWrites(bg);
    expect((await settle(bg.page(page).request('perps_sendCommand', await btcOrder()))).e).toBeUndefined();
    expect(hold.held()).toBe(1);
    stopFlush(bg);
    const next = await restart(dbName, wire);
    const racing = [settle(call(next, 'grant.list')), settle(next.page(page).request('perps_sendCommand', await btcOrder())), settle(next.page(page2).request('perps_sendCommand', await btcOrder()))];
    await waitPending(next).catch(() => undefined);
    closeAll(next);
    await Promise.all(racing);
    hold.release(new Error('the worker is gone'));
    expect(perpsPosts(wire) - before, 'two orders sent on a 2.5-order cap').toBe(2);
  }, 30_000);
});

describe('30.2 journal records of flagged (tampered-store) requests', () => {
  it('each granted-shaped perps request the tampered store flags leaves its journal record in storage.session (audited, with a use never stored) for the rest of the worker\'s life: records pile up toward MAX_OPEN (500), after which every submission — approved ones too — is refused (was broken; minor, DoS)', async () => {
    const { bg, wire } = await ready();
    await grantOf(bg, await capOf(10));
    await until(() => armed(bg));
    const v = grantUseRecords(bg.vault()) as unknown as { useHeads: Map<string, unknown>; readBucket: (...a: unknown[]) => Promise<unknown> };
    v.readBucket = async () => {
      throw new TamperedRecordError();
    };
    const before = perpsPosts(wire);
    for (let i = 0; i < 3; i++) {
      v.useHeads.clear(); // no held bucket: each use reads what is stored (and fails)
      const order = settle(bg.page(page).request('perps_sendCommand', await btcOrder()));
      await waitPending(bg);
      closeAll(bg);
      await order;
    }
    expect(perpsPosts(wire) - before).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    const raw = (await browser.storage.session.get(AUDIT_JOURNAL_KEY))[AUDIT_JOURNAL_KEY] as Record<string, { use?: unknown }> | undefined;
    const withUse = Object.values(raw ?? {}).filter((r) => r.use);
    expect(withUse, 'no record is kept for a use the store refused (nothing was sent under it)').toHaveLength(0);
  }, 30_000);
});
