/**
 * The audit journal (issue #20, outside attack B3 in `lib/background/attack28.test.ts`): a submission's
 * audit entry is written after its answer goes back to the page, so a worker that stops between the
 * send and that write would leave a signature that left with no trace. Before anything is sent, the
 * signer opens a journal record (what the entry will say: origin, account, kind, summary, digest) in
 * `storage.session` — readable by extension contexts only, kept across worker restarts, gone with the
 * browser, like the provider's outcome records — and closes it once the entry is written (or the person
 * was told it could not be). The next worker finds what a stopped one left open and records each as an
 * `unknown` audit entry ("sent; the answer was not recorded"), and the person is notified.
 * Nothing here is a secret.
 */
import * as v from 'valibot';
import { BaseError } from '../errors/base';
import { appendAudit, type AuditInput, type AuditLog } from './log';

/** What an open record says: the audit entry it stands for, without its result; `at` Unix ms (opened). */
export type JournalRecord = Omit<AuditInput, 'result' | 'detail'>;

/** The journal the signer uses (see the module docstring). */
export type AuditJournal = {
  /**
   * Opens a record for a submission about to be sent. `stored` resolves once it is in the store —
   * nothing may be sent before (it rejects with `JournalError` when the store refuses the write).
   */
  open: (record: JournalRecord) => { id: string; stored: Promise<void> };
  /** Closes record `id` (its audit entry was written, or the person was told it was not). Best effort. */
  close: (id: string) => void;
  /** The records a stopped worker left open (read once at start; each stays stored until closed). */
  leftovers: () => Promise<{ id: string; record: JournalRecord }[]>;
};

/** The store refused the journal record: nothing was sent (EIP-1193 -32002 without `data.command`: try again later). */
export class JournalError extends BaseError {
  override name = 'Audit.JournalError';
  static override readonly code = -32002;
  constructor(cause: unknown) {
    super('Countersign could not note this submission before sending it, so nothing was sent; try again.', { cause });
  }
}

/** `storage.session` key of the journal. */
const AUDIT_JOURNAL_KEY = 'auditJournal';
/** Most open records kept (the oldest go first; a record is open for one round trip). */
const MAX_OPEN = 500;

const journalRecord = v.object({
  at: v.number(),
  origin: v.pipe(v.string(), v.maxLength(300)),
  account: v.pipe(v.string(), v.maxLength(64)),
  kind: v.pipe(v.string(), v.maxLength(64)),
  summary: v.pipe(v.string(), v.maxLength(500)),
  digest: v.optional(v.pipe(v.string(), v.maxLength(2_000))),
});

/** The part of `browser.storage.session` the journal uses. */
type SessionArea = { get: (key: string) => Promise<Record<string, unknown>>; set: (items: Record<string, unknown>) => Promise<void> };

/**
 * A journal on `storage.session` under `AUDIT_JOURNAL_KEY`. Create it first thing at worker start: it
 * reads what a stopped worker left before its own first write (writes are whole-record replacements,
 * chained in call order). Malformed entries are dropped.
 */
export function sessionAuditJournal(area: SessionArea, now: () => number = Date.now): AuditJournal {
  const open = new Map<string, JournalRecord>();
  let seq = 0;
  const loaded = area
    .get(AUDIT_JOURNAL_KEY)
    .then((all) => {
      const raw = all[AUDIT_JOURNAL_KEY];
      const left: string[] = [];
      if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
        for (const [id, x] of Object.entries(raw)) {
          const r = v.safeParse(journalRecord, x);
          if (r.success && !open.has(id)) {
            open.set(id, r.output);
            left.push(id);
          }
        }
      }
      return left;
    })
    .catch(() => [] as string[]);
  let saving: Promise<unknown> = loaded;
  const save = (): Promise<void> => {
    const run = saving.then(() => area.set({ [AUDIT_JOURNAL_KEY]: Object.fromEntries(open) }));
    saving = run.catch(() => undefined);
    return run;
  };
  return {
    open(record) {
      const id = `${now()}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;
      open.set(id, { ...record });
      while (open.size > MAX_OPEN) open.delete(open.keys().next().value as string);
      const stored = save().catch((err: unknown) => {
        open.delete(id);
        throw new JournalError(err);
      });
      return { id, stored };
    },
    close(id) {
      if (open.delete(id)) void save().catch(() => undefined);
    },
    async leftovers() {
      const ids = await loaded;
      return ids.flatMap((id) => {
        const record = open.get(id);
        return record ? [{ id, record }] : [];
      });
    },
  };
}

/**
 * Records what a stopped worker left open (`journal.leftovers()`): one `unknown` audit entry each —
 * sent, or about to be, with no recorded answer — then closes it and calls `notify(kind)` so the person
 * learns of it. Returns how many it recorded. A record whose entry cannot be written stays open (tried
 * again at the next start).
 */
export async function recoverAuditJournal(journal: AuditJournal, log: AuditLog, notify: (kind: string) => void): Promise<number> {
  let n = 0;
  for (const { id, record } of await journal.leftovers()) {
    try {
      await appendAudit(log, { ...record, result: 'unknown', detail: 'Countersign stopped after this was sent and before its answer was recorded; check the venue.' });
    } catch {
      continue;
    }
    journal.close(id);
    notify(record.kind);
    n++;
  }
  return n;
}
