/**
 * The audit journal (`journal.ts`): a record stored before a submission leaves, closed once its
 * entry is written; what a stopped worker left open is recorded as `unknown` by the next one, with a
 * notification; a store that refuses the record stops the send.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { appendAudit, auditLog, pageAudit } from '.';
import { durableAuditJournal } from './journal';
import { reconcileJournal } from './reconcile';
import { journalStore } from '../../test/kits/journal';
import { SEND_WAIT_MAX_MS } from '../tasks';

const area = journalStore;
const record = {
  at: 1,
  origin: 'https://trade.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: 'Buy 0.01 BTC-PERP (standing permission)',
  digest: '0x01',
};
let n = 0;

describe('the audit journal', () => {
  it("an answered order's entry is written only once the next submission's record is stored", async () => {
    const log = auditLog(await openVaultDb(`journal-${n++}`), async () => undefined);
    const store = area();
    let storeNow!: () => void;
    const put = store.put;
    store.put = (id, r) => new Promise<void>((res) => (storeNow = res)).then(() => put(id, r));
    const j = durableAuditJournal(store);
    const written = appendAudit(log, { ...record, result: 'ok' }, { afterSends: true }).then(() => 'entry');
    const next = j.open({ ...record, summary: 'the next order' }).stored.then(() => 'record');
    const first = await Promise.race([
      written,
      new Promise((r) => setTimeout(() => r('neither'), SEND_WAIT_MAX_MS / 2)),
    ]);
    expect(first, 'the entry waits while the next send waits for its record').toBe('neither');
    storeNow();
    expect(await Promise.race([written, next])).toBe('record');
    await written;
    expect((await pageAudit(log)).entries).toMatchObject([{ summary: record.summary, result: 'ok' }]);
  });

  it(
    'keeps an open record across a restart; the next ' + 'worker records it as unknown, notifies, and closes it',
    async () => {
      const store = area();
      const first = durableAuditJournal(store);
      const { stored } = first.open(record);
      await stored;
      const closed = first.open({ ...record, summary: 'answered and recorded' });
      await closed.stored;
      void first.close(closed.id);
      await new Promise((r) => setTimeout(r, 0));
      // The worker stops here; the next one starts on the same storage.session.
      const next = durableAuditJournal(store);
      const told: string[] = [];
      const log = auditLog(await openVaultDb(`journal-${n++}`), async () => undefined);
      expect(await reconcileJournal(next, log, undefined, (x) => told.push(x.kind))).toBe(1);
      expect(told).toEqual(['perps.createOrders']);
      const { entries } = await pageAudit(log);
      expect(entries).toMatchObject([
        { origin: record.origin, kind: 'perps.createOrders', summary: record.summary, result: 'unknown' },
      ]);
      // Closed: a third start finds nothing left.
      await new Promise((r) => setTimeout(r, 0));
      expect(await durableAuditJournal(store).leftovers()).toEqual([]);
    },
  );

  it('a record the store refuses is a JournalError (-32002): the caller sends nothing', async () => {
    const store = area();
    store.refuse = 99;
    const j = durableAuditJournal(store);
    const err: unknown = await j.open(record).stored.catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'Audit.JournalError' });
    expect((err as { constructor: { code?: number } }).constructor.code, 'nothing was sent: try again later').toBe(
      -32002,
    );
    expect(Object.keys(store.data)).toEqual([]);
  });

  it("a record written by this worker before the stopped one's were read is not taken for a leftover", async () => {
    const store = area();
    const old = durableAuditJournal(store);
    await old.open(record).stored;
    const next = durableAuditJournal(store);
    const mine = next.open({ ...record, summary: 'mine' });
    await mine.stored;
    expect((await next.leftovers()).map((l) => l.record.summary)).toEqual([record.summary]);
  });
});
