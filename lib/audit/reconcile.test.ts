/**
 * The reconciliation of what a stopped worker or a killed browser left in the audit journal
 * (`./reconcile.ts`): each record with ids is asked of the venue and recorded once, dated when it was
 * sent — `ok` only when the venue says it holds it; `unknown` when it holds none of its ids, when it
 * cannot be asked (throws, or says nothing within the timeout) and when there is nothing to ask by. A
 * lookup a stored record carries in another shape is dropped (the disk is not trusted), never asked.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openVaultDb } from '../vault/db';
import { auditLog, pageAudit } from '.';
import { durableAuditJournal, type JournalLookup } from './journal';
import { reconcileJournal, type ReconcileNotice, type VenueLookup } from './reconcile';
import { journalStore } from '../../test/kits/journal';

const base = {
  origin: 'https://trade.example',
  account: '0xabc',
  kind: 'perps.createOrders',
  summary: 'Buy 0.01 BTC-PERP',
};
const COID = 'ab'.repeat(16);
const HASH = `0x${'cd'.repeat(32)}`;
let n = 0;

/** A journal left by a stopped worker with `records`, and a log to reconcile it into. */
async function leftBehind(records: object[]) {
  const store = journalStore();
  const first = durableAuditJournal(store);
  for (const [i, r] of records.entries()) await first.open({ digest: `0x0${i}`, ...r } as never).stored;
  return {
    store,
    next: durableAuditJournal(store),
    log: auditLog(await openVaultDb(`reconcile-${n++}`), async () => undefined),
  };
}

describe('reconciling the records a stop left open', () => {
  it(
    "asks the venue by each record's ids and writes one entry each, dated when it was sent: ok when " +
      'held, unknown when not, when the venue fails or is silent, and when there is nothing to ask by',
    async () => {
      const { next, log, store } = await leftBehind([
        {
          ...base,
          at: 1_000,
          summary: 'held',
          lookup: { venue: 'perps', orders: [{ c: COID, iid: 1, buy: true, qty: '0.01' }] },
        },
        {
          ...base,
          at: 2_000,
          summary: 'absent',
          kind: 'clob.postOrders',
          lookup: { venue: 'clob', orderHashes: [HASH] },
        },
        {
          ...base,
          at: 3_000,
          summary: 'fails',
          lookup: { venue: 'perps', orders: [{ c: 'ef'.repeat(16), iid: 1, buy: true, qty: '0.01' }] },
        },
        {
          ...base,
          at: 4_000,
          summary: 'silent',
          lookup: { venue: 'perps', orders: [{ c: '12'.repeat(16), iid: 1, buy: true, qty: '0.01' }] },
        },
        { ...base, at: 5_000, summary: 'a cancel', kind: 'perps.cancelAll' },
      ]);
      const asked: JournalLookup[] = [];
      const ask: VenueLookup = async (_account, l) => {
        asked.push(l);
        if (l.venue === 'clob') return 'absent';
        if (l.orders[0]?.c === COID) return 'held';
        if (l.orders[0]?.c === 'ef'.repeat(16)) throw new Error('502');
        return new Promise(() => undefined); // never answers
      };
      const told: ReconcileNotice[] = [];
      expect(await reconcileJournal(next, log, ask, (x) => told.push(x), 50)).toBe(5);
      const entries = (await pageAudit(log)).entries;
      const by = (s: string) => entries.find((e) => e.summary === s);
      expect(by('held')).toMatchObject({
        at: 1_000,
        result: 'ok',
        detail: expect.stringMatching(/the venue holds it/),
      });
      expect(by('absent')).toMatchObject({
        at: 2_000,
        result: 'unknown',
        detail: expect.stringMatching(/holds no order with its ids/),
      });
      expect(by('fails')).toMatchObject({
        at: 3_000,
        result: 'unknown',
        detail: expect.stringMatching(/could not be asked/),
      });
      expect(by('silent')).toMatchObject({
        at: 4_000,
        result: 'unknown',
        detail: expect.stringMatching(/could not be asked/),
      });
      expect(by('a cancel')).toMatchObject({
        at: 5_000,
        result: 'unknown',
        detail: expect.stringMatching(/check the venue/),
      });
      expect(asked).toHaveLength(4);
      expect(told.map((t) => t.venue)).toEqual(['held', 'absent', undefined, undefined, undefined]);
      expect(told.every((t) => t.recorded)).toBe(true);
      await new Promise((r) => setTimeout(r, 0));
      expect(Object.keys(store.data), 'every record closed').toEqual([]);
      expect(await reconcileJournal(durableAuditJournal(store), log, ask, () => undefined)).toBe(0);
    },
  );

  it(
    'a record whose entry the signer already wrote (its close lost with ' +
      'the worker) is closed without a second entry or a question to the venue',
    async () => {
      const { next, log, store } = await leftBehind([
        {
          ...base,
          at: 1_000,
          digest: '0xfeed',
          lookup: { venue: 'perps', orders: [{ c: COID, iid: 1, buy: true, qty: '0.01' }] },
        },
      ]);
      const { appendAudit } = await import('./log');
      await appendAudit(log, { ...base, at: 1_200, digest: '0xfeed', result: 'ok' });
      let asked = 0;
      expect(
        await reconcileJournal(
          next,
          log,
          async () => (asked++, 'held'),
          () => undefined,
        ),
      ).toBe(0);
      expect(asked).toBe(0);
      expect((await pageAudit(log)).entries).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 0));
      expect(Object.keys(store.data)).toEqual([]);
    },
  );

  it(
    'a stored lookup of another shape (ids the venues never write, too many, ' +
      'another venue) is dropped: the record is recorded unknown without asking',
    async () => {
      const { next, log } = await leftBehind([
        {
          ...base,
          at: 1,
          summary: 'upper-case coid',
          lookup: { venue: 'perps', orders: [{ c: COID.toUpperCase(), iid: 1, buy: true, qty: '1' }] },
        },
        { ...base, at: 2, summary: 'a URL for a hash', lookup: { venue: 'clob', orderHashes: ['../../auth/api-key'] } },
        {
          ...base,
          at: 3,
          summary: 'too many',
          lookup: {
            venue: 'perps',
            orders: Array.from({ length: 101 }, () => ({ c: COID, iid: 1, buy: true, qty: '1' })),
          },
        },
        {
          ...base,
          at: 4,
          summary: 'another venue',
          lookup: { venue: 'elsewhere', orders: [{ c: COID, iid: 1, buy: true, qty: '1' }] },
        },
      ]);
      let asked = 0;
      await reconcileJournal(
        next,
        log,
        async () => (asked++, 'held'),
        () => undefined,
      );
      expect(asked).toBe(0);
      expect((await pageAudit(log)).entries.map((e) => e.result)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    },
  );
});
