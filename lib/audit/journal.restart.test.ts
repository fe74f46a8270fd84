/**
 * The audit journal (`lib/audit/journal.ts`) across worker stops: a record stored before a send is never
 * dropped, evicted or recorded twice by a later worker, so every submission that left ends in the audit
 * log (as `unknown` if need be) with one notification. The background-level side is in
 * lib/background/journal.restart.test.ts.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { auditLog, pageAudit } from '.';
import { durableAuditJournal } from './journal';
import { reconcileJournal } from './reconcile';
import { journalStore } from '../../test/kits/journal';

const area = journalStore;
const record = {
  at: 1,
  origin: 'https://trade.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: 'Buy 0.01 BTC-PERP (standing permission)',
  digest: '0x01',
};
const tick = () => new Promise((r) => setTimeout(r, 0));
let n = 0;

describe('the audit journal keeps every stored record until it is recorded once', () => {
  it(
    'a record whose summary is longer than 500 characters (the audit log takes 20 000) is stored ' +
      'before the send and recorded (or notified) by the next worker, never dropped as malformed',
    async () => {
      const store = area();
      const first = durableAuditJournal(store);
      // What `describePerpsCommand` writes for a cancel of 60 client order ids (`Cancel client order ids ab12cd34…,
      // …`).
      const summary =
        `Cancel client order ids ` +
        `${Array.from({ length: 60 }, (_, i) => `${String(i).padStart(8, '0')}…`).join(', ')} — proxy key`;
      expect(summary.length).toBeGreaterThan(500);
      await first.open({ ...record, kind: 'perps.cancelOrdersCOID', summary }).stored; // accepted: the send goes on
      // The worker stops after the send; the next one starts.
      const next = durableAuditJournal(store);
      const told: string[] = [];
      const log = auditLog(await openVaultDb(`journal-restart-${n++}`), async () => undefined);
      const recorded = await reconcileJournal(next, log, undefined, (x) => told.push(x.kind));
      expect(
        recorded + told.length,
        'the record was stored (so the command was sent): the next worker records an unknown entry or notifies',
      ).toBeGreaterThan(0);
    },
  );

  it(
    'past MAX_OPEN (500) new records are refused: they never evict the ' +
      'stored record of a submission in flight, which survives a worker stop',
    async () => {
      const store = area();
      const first = durableAuditJournal(store);
      const victim = first.open({ ...record, origin: 'https://victim.example', summary: 'the victim order' });
      await victim.stored; // the victim's command is sent now; its answer has not come back
      const flood = Array.from({ length: 500 }, (_, i) =>
        first.open({ ...record, origin: 'https://evil.example', summary: `flood ${i}` }),
      );
      // past MAX_OPEN the flood's records are refused (nothing of theirs is sent)
      await Promise.allSettled(flood.map((f) => f.stored));
      // the flood's own records close normally (refused by the meter, say)
      for (const f of flood) void first.close(f.id);
      await tick();
      const left = await durableAuditJournal(store).leftovers();
      expect(
        left.map((l) => l.record.origin),
        "the victim's stored record is kept while its submission is in flight, whatever another origin opens",
      ).toContain('https://victim.example');
    },
  );

  it(
    'a leftover recorded as unknown whose close storage.session refuses once ' +
      'is recorded (and notified) once, not again by every later worker start',
    async () => {
      const store = area();
      await durableAuditJournal(store).open(record).stored; // sent, then the worker stops
      const log = auditLog(await openVaultDb(`journal-restart-${n++}`), async () => undefined);
      const told: string[] = [];
      const second = durableAuditJournal(store);
      await second.leftovers();
      store.refuse = 1; // the close's write (fire and forget) fails once
      expect(await reconcileJournal(second, log, undefined, (x) => told.push(x.kind))).toBe(1);
      await tick();
      // The second worker stops (no later journal write of its own); a third starts.
      await reconcileJournal(durableAuditJournal(store), log, undefined, (x) => told.push(x.kind));
      const { entries } = await pageAudit(log);
      expect(
        entries.filter((e) => e.result === 'unknown'),
        `one submission: ${entries.length} unknown entries and ${told.length} notifications`,
      ).toHaveLength(1);
    },
  );

  it('a refused record does not take an earlier stored record out of storage', async () => {
    const store = area();
    const j = durableAuditJournal(store);
    await j.open({ ...record, summary: 'kept' }).stored;
    store.refuse = 1;
    await expect(j.open({ ...record, summary: 'refused' }).stored).rejects.toMatchObject({
      name: 'Audit.JournalError',
    });
    await j.open({ ...record, summary: 'later' }).stored;
    expect((await durableAuditJournal(store).leftovers()).map((l) => l.record.summary).sort()).toEqual([
      'kept',
      'later',
    ]);
  });

  it(
    "records opened by the new worker before the stopped worker's " +
      'records are read neither count as leftovers nor evict them',
    async () => {
      const store = area();
      const old = durableAuditJournal(store);
      await old.open({ ...record, summary: 'left' }).stored;
      const next = durableAuditJournal(store);
      const mine = next.open({ ...record, summary: 'mine' });
      const log = auditLog(await openVaultDb(`journal-restart-${n++}`), async () => undefined);
      const told: string[] = [];
      await mine.stored;
      expect(await reconcileJournal(next, log, undefined, (x) => told.push(x.kind))).toBe(1);
      expect((await pageAudit(log)).entries.map((e) => e.summary)).toEqual(['left']);
    },
  );
});
