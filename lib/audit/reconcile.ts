/**
 * After a stop or a crash: what was sent becomes known. The audit journal (`./journal.ts`) keeps a
 * record of each submission from before its send until its audit entry is written; a worker that
 * stopped, or a browser that was killed, leaves the records of what was in flight. The first start with
 * the vault unlocked (the venue's account reads need its keys) asks the venue about each — perps orders
 * by client order id (`GET /v1/account/orders?client_order_id=`), order-book orders by order hash
 * (`GET /data/order/{hash}`: the exchange's order id is the EIP-712 digest signed) — and writes the
 * audit entry, dated when the submission was sent (the record's `at`):
 *
 * - the venue holds it (open, filled or cancelled since): result `ok`, "the venue holds it";
 * - the venue was asked and holds none of its ids: result `unknown` (it refused it, or it never arrived);
 * - it could not be asked (no ids to ask by — cancels, transfers, withdrawals, orders without a client
 *   order id — or the venue did not answer): result `unknown`, "check the venue".
 *
 * A record whose entry the signer had written before the stop (its close was lost with the worker) is
 * closed without a second entry. Each recorded record is closed; one whose entry cannot be written stays
 * for the next start. The person
 * is notified of each (`notify`). Keyed retries are held separately (`lib/page/idempotency.ts`): a
 * record left in flight there answers the retry "unknown — look it up", whatever this finds.
 */
import { auditGroupOf } from '../vault/db';
import { appendAudit, auditWritten, type AuditLog } from './log';
import type { AuditJournal, JournalLookup } from './journal';

/**
 * Asks the venue whether it holds any order of `lookup` for `account` (lowercase address), sent at
 * `sentAt` (Unix ms): `'held'` or `'absent'`. Throws when the venue cannot be asked (no answer, a
 * refusal, the account's keys missing).
 */
export type VenueLookup = (account: string, lookup: JournalLookup, sentAt: number) => Promise<'held' | 'absent'>;

/** How many of a kind's newest entries are searched for one already written for a record. */
const RECORDED_SCAN = 5_000;

/**
 * Whether the log already holds the entry of `r` — the signer wrote it and the journal record's close
 * was lost with the worker (the two are separate writes): the same kind, account and digest (an EIP-712
 * digest names one submission: salt and time are in it), among the kind's `RECORDED_SCAN` newest entries.
 */
async function alreadyRecorded(
  log: AuditLog,
  r: { kind: string; account: string; digest?: string | undefined },
): Promise<boolean> {
  if (!r.digest) return false;
  await auditWritten(log);
  const group = auditGroupOf(r.kind);
  const tx = log.db.transaction('audit');
  let seen = 0;
  for (
    let c = await tx.store.index('byGroup').openCursor(IDBKeyRange.bound([group, 0], [group, Infinity]), 'prev');
    c && seen < RECORDED_SCAN;
    c = await c.continue(), seen++
  ) {
    const e = c.value;
    if (e.kind === r.kind && e.digest === r.digest && e.account === r.account) return true;
  }
  return false;
}

/**
 * What the person is told about one record: its audit kind, what the venue said (`undefined`: not asked) and whether
 * its entry was written.
 */
export type ReconcileNotice = { kind: string; venue: 'held' | 'absent' | undefined; recorded: boolean };

const STOPPED = 'Countersign stopped after this was sent and before its answer was recorded';

/** The audit entry's result and detail for what the venue said (see the module docstring). */
function verdict(said: 'held' | 'absent' | 'unasked' | 'silent'): { result: 'ok' | 'unknown'; detail: string } {
  switch (said) {
    case 'held':
      return { result: 'ok', detail: `${STOPPED}; the venue holds it (looked up at the next unlock).` };
    case 'absent':
      return {
        result: 'unknown',
        detail:
          `${STOPPED}; the venue holds no order with its ids ` +
          `(it refused it, or it never arrived). Check the venue.`,
      };
    case 'silent':
      return { result: 'unknown', detail: `${STOPPED}; the venue could not be asked about it. Check the venue.` };
    case 'unasked':
      return { result: 'unknown', detail: `${STOPPED}; check the venue.` };
  }
}

/**
 * Records what a stopped worker or a killed browser left in `journal` (see the module docstring):
 * asks `ask` about each record with a lookup (at most `timeoutMs` each), appends its entry to `log`,
 * closes the record and calls `notify`. A record already `audited` (kept for its grant use only) is left
 * to the grant service. Returns how many it recorded; throws nothing.
 */
export async function reconcileJournal(
  journal: AuditJournal,
  log: AuditLog,
  ask: VenueLookup | undefined,
  notify: (n: ReconcileNotice) => void,
  timeoutMs = 10_000,
): Promise<number> {
  let n = 0;
  for (const { id, record: r } of await journal.leftovers()) {
    if (r.audited) continue;
    const { use: _use, audited: _audited, lookup, ...record } = r;
    if (await alreadyRecorded(log, record).catch(() => false)) {
      await journal
        .close(id)
        .catch(() => journal.close(id))
        .catch(() => undefined);
      continue;
    }
    let said: 'held' | 'absent' | 'unasked' | 'silent' = 'unasked';
    if (lookup && ask)
      said = await withTimeout(ask(record.account, lookup, record.at), timeoutMs).catch(() => 'silent' as const);
    const venue = said === 'held' || said === 'absent' ? said : undefined;
    try {
      await appendAudit(log, { ...record, ...verdict(said) });
    } catch {
      // told even when the entry cannot be written; the record is kept for the next start
      notify({ kind: record.kind, venue, recorded: false });
      continue;
    }
    // Closed once stored (tried twice): a record left behind would be recorded again at the next start.
    await journal
      .close(id)
      .catch(() => journal.close(id))
      .catch(() => undefined);
    notify({ kind: record.kind, venue, recorded: true });
    n++;
  }
  return n;
}

/** `p`, or a rejection after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error('the venue did not answer in time')), ms)),
  );
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
