/**
 * The audit journal (held by `lib/background/journal.restart.test.ts`): a submission's
 * audit entry is written after its answer goes back to the page, so a worker that stops between the
 * send and that write would leave a signature that left with no trace. Before anything is sent, the
 * signer opens a journal record (what the entry will say: origin, account, kind, summary, digest) in
 * `storage.session` — readable by extension contexts only, kept across worker restarts, gone with the
 * browser, like the provider's outcome records — and closes it once the entry is written (or the person
 * was told it could not be). The next worker finds what a stopped one left open and records each as an
 * `unknown` audit entry ("sent; the answer was not recorded"), and the person is notified.
 *
 * A submission covered by a standing grant also carries the grant use it counted (`use`): the record is
 * what makes the use durable before the send, while the use's vault write runs beside the network round
 * trip. The grant use ledger (`lib/grants/ledger.ts`) owns that part: its reservation opens the record
 * with the use (`UseReservation.carry`), lets the use go once it is in the vault (`useStored`), and the
 * next worker's ledger merges a use a stopped worker left (`leftovers`), unless it is already in the
 * vault. A record is gone once both parts are done: its entry written (`close`) and its use stored.
 * Nothing here is a secret.
 */
import { BaseError } from '../errors/base';
import { appendAudit, type AuditInput, type AuditLog } from './log';

/**
 * A grant use as a journal record carries it: grant id `grant`, `at` Unix ms, `notional` USDC (decimal
 * string, as `GrantUse.notional`), `seq` the grant's use number.
 */
export type JournalUse = { grant: string; at: number; notional: string; seq: number };

/**
 * What an open record says: the audit entry it stands for, without its result (`at` Unix ms, opened);
 * `use`, the grant use the submission counted, until it is stored; `audited`, its entry was written (the
 * record stays for its use only).
 */
export type JournalRecord = Omit<AuditInput, 'result' | 'detail'> & { use?: JournalUse; audited?: true };

/** The journal the signer uses (see the module docstring). */
export type AuditJournal = {
  /**
   * Opens a record for a submission about to be sent. `stored` resolves once it is in the store —
   * nothing may be sent before (it rejects with `JournalError` when the store refuses the write).
   */
  open: (record: JournalRecord) => { id: string; stored: Promise<void> };
  /**
   * Closes the audit part of record `id` (its entry was written, or the person was told it was not);
   * resolves once stored (rejects when the store refuses). A record whose use is not stored yet stays,
   * marked `audited`.
   */
  close: (id: string) => Promise<void>;
  /**
   * Record `id`'s use is in the vault: the record no longer needs to keep it (dropped now when audited).
   * Not saved by itself when the record still waits for its entry (`close` saves it; a use the store
   * still holds is merged only if it is not in the vault already).
   */
  useStored: (id: string) => Promise<void>;
  /** Drops record `id` with its use: nothing was sent (refused before the send); resolves once stored. */
  discard: (id: string) => Promise<void>;
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
/**
 * Most records open at once (a record is open for one round trip). Past it a new record is refused
 * (`JournalError`: nothing is sent; panic's own commands go anyway) — a stored record is never evicted
 * (`lib/audit/journal.restart.test.ts`).
 */
const MAX_OPEN = 500;
/**
 * Most of those that may carry a grant use (submissions a site sends under its standing permission, no
 * window): past it such a record is refused (`JournalError`, nothing sent), so a site's burst under its
 * grant never takes the room the person's own submissions need (`lib/background/lagging-use-writes.test.ts`).
 */
const MAX_OPEN_GRANTED = 400;
/** Longest text kept per field (characters): the audit log's own limit on a summary is larger; a record keeps the start. */
const FIELD_MAX = { origin: 300, account: 64, kind: 64, summary: 2_000, digest: 2_000 } as const;

const cut = (x: unknown, max: number): string | undefined => (typeof x === 'string' ? x.slice(0, max) : undefined);

/**
 * A stored record as the next worker reads it: every field cut to `FIELD_MAX`, missing ones named as
 * unknown — a record that is there always becomes an entry and a notification (a long summary is cut,
 * never dropped as malformed). Undefined only for what is not a record at all.
 */
function readRecord(x: unknown, now: number): JournalRecord | undefined {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return undefined;
  const r = x as Record<string, unknown>;
  const digest = cut(r.digest, FIELD_MAX.digest);
  const use = readUse(r.use);
  return {
    ...(use ? { use } : {}),
    ...(r.audited === true ? { audited: true as const } : {}),
    at: typeof r.at === 'number' && Number.isFinite(r.at) ? r.at : now,
    origin: cut(r.origin, FIELD_MAX.origin) ?? 'unknown',
    account: cut(r.account, FIELD_MAX.account) ?? '',
    kind: cut(r.kind, FIELD_MAX.kind) ?? 'perps.unknown',
    summary: cut(r.summary, FIELD_MAX.summary) ?? 'A submission (its record could not be read)',
    ...(digest === undefined ? {} : { digest }),
  };
}

/**
 * A record's use, when it has exactly the shape `JournalUse` (a grant id of at most 64 characters, a
 * finite time, a decimal notional of at most 40 characters, a non-negative integer number); else none.
 */
function readUse(x: unknown): JournalUse | undefined {
  if (typeof x !== 'object' || x === null) return undefined;
  const u = x as Record<string, unknown>;
  const ok =
    typeof u.grant === 'string' && u.grant.length > 0 && u.grant.length <= 64 &&
    typeof u.at === 'number' && Number.isFinite(u.at) &&
    typeof u.notional === 'string' && u.notional.length <= 40 && /^\d+(\.\d+)?$/.test(u.notional) &&
    typeof u.seq === 'number' && Number.isSafeInteger(u.seq) && u.seq >= 0;
  return ok ? { grant: u.grant as string, at: u.at as number, notional: u.notional as string, seq: u.seq as number } : undefined;
}

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
          const r = readRecord(x, now());
          if (r && !open.has(id)) {
            open.set(id, r);
            left.push(id);
          }
        }
      }
      return left;
    })
    .catch(() => [] as string[]);
  let saving: Promise<unknown> = loaded;
  /** The store may hold what memory no longer does (a save failed): the next close saves again. */
  let behind = false;
  const save = (): Promise<void> => {
    const run = saving.then(() => area.set({ [AUDIT_JOURNAL_KEY]: Object.fromEntries(open) }));
    saving = run.then(
      () => (behind = false),
      () => (behind = true),
    );
    return run;
  };
  return {
    open(record) {
      const id = `${now()}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;
      if (open.size >= MAX_OPEN) return { id, stored: Promise.reject(new JournalError(new Error('too many submissions in flight'))) };
      if (record.use && [...open.values()].filter((r) => r.use).length >= MAX_OPEN_GRANTED) {
        return { id, stored: Promise.reject(new JournalError(new Error('too many submissions under standing permissions in flight'))) };
      }
      const kept = readRecord(record, now()) ?? { ...record };
      open.set(id, kept);
      const stored = save().catch((err: unknown) => {
        open.delete(id);
        throw new JournalError(err);
      });
      return { id, stored };
    },
    close(id) {
      const r = open.get(id);
      if (r?.use) {
        open.set(id, { ...r, audited: true }); // kept for its use, until `useStored`
        return save();
      }
      return open.delete(id) || behind ? save() : Promise.resolve();
    },
    discard(id) {
      return open.delete(id) || behind ? save() : Promise.resolve();
    },
    useStored(id) {
      const r = open.get(id);
      if (!r?.use) return Promise.resolve();
      if (r.audited) {
        open.delete(id);
        return save();
      }
      const { use: _stored, ...rest } = r;
      open.set(id, rest); // saved with the next change (the store may keep the use meanwhile: merged only if missing)
      return Promise.resolve();
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
 * again at the next start). A record already `audited` (kept for its grant use only) is left to the
 * grant service.
 */
export async function recoverAuditJournal(journal: AuditJournal, log: AuditLog, notify: (kind: string) => void): Promise<number> {
  let n = 0;
  for (const { id, record: r } of await journal.leftovers()) {
    if (r.audited) continue;
    const { use: _use, audited: _audited, ...record } = r;
    // The person is told whether or not the entry can be written (storage.session ends with the browser:
    // a record kept for the next start may never be read again).
    notify(record.kind);
    try {
      await appendAudit(log, { ...record, result: 'unknown', detail: 'Countersign stopped after this was sent and before its answer was recorded; check the venue.' });
    } catch {
      continue; // kept: tried again at the next start
    }
    // Closed once stored (tried twice): a record left behind would be recorded again at the next start.
    await journal.close(id).catch(() => journal.close(id)).catch(() => undefined);
    n++;
  }
  return n;
}
