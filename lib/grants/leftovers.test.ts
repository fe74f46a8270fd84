/**
 * A grant use made durable by the audit journal record before the send (the page path): the use's
 * vault write runs beside the network round trip, the journal record (`lib/audit/journal.ts`) carries
 * the use until that write is stored, and the next worker's `GrantService` merges what a stopped worker
 * left (`GrantLedger.merge`) before its first decision — once, whatever the journal still says. Also a use whose
 * vault write failed in a running worker: merged again at the next read of the grants. Setup as ledger.restart.test.ts
 * here: a Vault and a GrantService over fake-indexeddb with a clock seam, plus the journal on an in-memory store;
 * `restart()` opens all three again (a worker restart).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from './evaluate';
import { openVaultDb } from '../vault/db';
import { durableAuditJournal } from '../audit/journal';
import { reconcileJournal } from '../audit/reconcile';
import { journalStore } from '../../test/kits/journal';
import { auditLog } from '../audit';
import {
  SITE,
  USE_ACCOUNT,
  USE_T0,
  USE_ORDER,
  USE_RECORD,
  useRef,
  useArmed,
  useWorkers,
  useOrder,
  uses24h,
  type UseWorker,
} from '../../test/kits/grants';
import { grantUseRecords } from './use-records';

const ACCOUNT = USE_ACCOUNT;
const T0 = USE_T0;
const ORDER = USE_ORDER;
const ref = useRef;
const armed = useArmed;
const RECORD = USE_RECORD;
const area = journalStore;
let logs = 0;
/** A worker with one ETH-PERP grant whose 24 h cap is `daily` USDC (`useWorkers`). */
const setup = (daily = '100') => useWorkers('grant-leftovers', daily);
/** One covered order, its record stored and "sent"; its audit entry not written yet (the record stays open). */
const order = async (w: UseWorker, write: 'lands' | 'never' = 'lands') =>
  (await useOrder(w, write, { close: false })).ok;

describe('a grant use carried by the journal record until its vault write lands', () => {
  it(
    'a worker that stops before the vault write: the next worker counts the use ' +
      'from the journal, refuses past the cap, writes the use and lets the record go',
    async () => {
      const s = await setup('70'); // two orders of 31 USDC
      expect(await order(s.first)).toBe(true);
      expect(await order(s.first, 'never')).toBe(true);
      const next = await s.restart();
      expect(await uses24h(next.grants), 'the use the stopped worker never wrote counts').toBe(2);
      expect(
        (await next.grants.decide(SITE, ACCOUNT, ORDER, ref, armed))?.ok,
        'a third order of 31 is past the 70 cap',
      ).toBe(false);
      expect((await grantUseRecords(next.vault).listGrants())[0]?.uses).toHaveLength(2); // written to the vault
      // The audit part recovered too (an `unknown` entry each): nothing is left for a third worker.
      await reconcileJournal(
        next.journal,
        auditLog(await openVaultDb(`grant-leftovers-log-${logs++}`), async () => undefined),
        undefined,
        () => undefined,
      );
      await new Promise((r) => setTimeout(r, 10));
      const third = await s.restart();
      expect(await third.journal.leftovers(), 'the records were let go once entry and use were stored').toHaveLength(0);
      expect(await uses24h(third.grants)).toBe(2);
    },
  );

  it(
    'uses whose writes landed are counted once, though the ' +
      'journal still carries them (their entries were never written)',
    async () => {
      const s = await setup();
      await order(s.first);
      await order(s.first);
      // useStored does not save by itself: the stored journal still carries both uses.
      expect(JSON.stringify(s.store.data)).toContain('"use"');
      const next = await s.restart();
      expect(await uses24h(next.grants)).toBe(2);
      expect((await grantUseRecords(next.vault).listGrants())[0]?.uses).toHaveLength(2);
    },
  );

  it('a leftover older than 24 h, or of a grant that is gone, is let go without counting', async () => {
    const s = await setup();
    s.store.data = {
      old: { ...RECORD, audited: true, use: { grant: s.grant.id, at: T0 - DAY_MS, notional: '31', seq: 7 } },
    };
    const late = await s.restart();
    expect(await uses24h(late.grants)).toBe(0);
    await new Promise((r) => setTimeout(r, 10));
    expect(await (await s.restart()).journal.leftovers()).toHaveLength(0);

    const t = await setup();
    await order(t.first, 'never');
    await (await t.restart()).grants.revoke(t.grant.id); // the stopped worker's vault waits for its write forever
    const after = await t.restart();
    expect(await after.grants.list()).toEqual([]);
    await reconcileJournal(
      after.journal,
      auditLog(await openVaultDb(`grant-leftovers-log-${logs++}`), async () => undefined),
      undefined,
      () => undefined,
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(await (await t.restart()).journal.leftovers()).toHaveLength(0);
  });

  it('a leftover whose number another stored use took counts under a new number (two uses, not one)', async () => {
    const s = await setup();
    await order(s.first, 'never'); // use 1 at T0, never written
    // Another use numbered 1 is stored meanwhile (as a worker that lost the journal would number it).
    await grantUseRecords((await s.restart()).vault).putGrant(s.grant, [{ at: T0 + 1_000, notional: '31', seq: 1 }]);
    const next = await s.restart();
    expect(await uses24h(next.grants)).toBe(2);
    await new Promise((r) => setTimeout(r, 10));
    const uses = (await grantUseRecords(next.vault).listGrants())[0]?.uses ?? [];
    expect(uses).toHaveLength(2);
    expect(new Set(uses.map((u) => u.seq)).size, 'one number each (a record of orders goes to one use)').toBe(2);
  });

  it(
    'a use whose vault write fails in a running worker counts ' +
      'on after the grants are read again, and is written then',
    async () => {
      const s = await setup('70');
      const v = grantUseRecords(s.first.vault) as unknown as { sealBucket: (...a: unknown[]) => Promise<unknown> };
      const real = v.sealBucket.bind(v);
      v.sealBucket = async () => {
        throw new DOMException('The transaction was aborted', 'AbortError');
      };
      const d = await s.first.grants.decide(SITE, ACCOUNT, ORDER, ref, armed);
      if (!d?.ok) throw new Error('not covered');
      await d.reservation.counted;
      await expect(d.reservation.written).rejects.toThrow('aborted');
      v.sealBucket = real;
      s.first.grants.reload(); // read from the vault again (as after a lock and an unlock)
      const second = await s.first.grants.decide(SITE, ACCOUNT, ORDER, ref, armed);
      expect(second?.ok, 'a second order of 31 fits the 70 cap').toBe(true);
      expect(
        (await s.first.grants.decide(SITE, ACCOUNT, ORDER, ref, armed))?.ok,
        'a third is past it: the failed use still counts',
      ).toBe(false);
      await new Promise((r) => setTimeout(r, 10));
      expect((await grantUseRecords(s.first.vault).listGrants())[0]?.uses).toHaveLength(2);
      expect(await uses24h(s.first.grants), 'once written, the person reads both').toBe(2);
    },
  );
});

describe('the journal record of a granted submission', () => {
  it(
    'stays after its entry is written while its use is not stored ' +
      '(audited), and goes once it is; recovery writes no second entry for it',
    async () => {
      const store = area();
      const j = durableAuditJournal(store);
      const use = { grant: 'g', at: T0, notional: '31', seq: 1 };
      const rec = j.open({ ...RECORD, use });
      await rec.stored;
      await j.close(rec.id);
      const left = await durableAuditJournal(store).leftovers();
      expect(left).toMatchObject([{ record: { audited: true, use } }]);
      await j.useStored(rec.id);
      expect(await durableAuditJournal(store).leftovers()).toEqual([]);
    },
  );

  it('a malformed use is not merged (the record, and its audit entry, stay)', async () => {
    const store = area();
    (store.data as Record<string, unknown>) = {
      x: { ...RECORD, use: { grant: 'g', at: T0, notional: '-5', seq: 1 } },
      y: { ...RECORD, use: { grant: 'g', at: 'soon', notional: '1', seq: 1 } },
    };
    const left = await durableAuditJournal(store).leftovers();
    expect(left.map((l) => l.record.use)).toEqual([undefined, undefined]);
    expect(left.map((l) => l.record.summary)).toEqual([RECORD.summary, RECORD.summary]);
  });
});
