/**
 * The grant use ledger: the one owner of "this grant use is counted and durable".
 *
 * `reserve(held, use)` counts a use at once (in memory, against the grant's caps, for every later check)
 * and starts its write to the grant use records (`GrantUseRecords`, `lib/grants/use-records.ts`: per-minute
 * sealed buckets and a head). It returns one `UseReservation`:
 * - `counted` resolves once every check of the store passed (the grant is there, the vault open, the
 *   records it reads open and complete); it rejects with `TamperedRecordError`, `KeyNotFoundError` (the
 *   grant was revoked meanwhile) or `VaultLockedError`.
 * - `durable` resolves once the use is in storage: in the audit journal record that carries it, when
 *   the signer opened one through `carry` (stored before the send, `lib/audit/journal.ts`), else in the
 *   vault (`written`). **Nothing covered by the use leaves before `counted` and `durable`.**
 *
 * A use not yet in the vault (its write still running, failed, or left by a stopped worker in the
 * journal) is kept here and merged into the grant's uses whenever they are read from the vault again
 * (`merge`): a use already stored (same `seq` and time) or outside the 24 h window is settled, one whose
 * grant is gone is dropped, any other counts again and is written (a new `seq` when its own is taken).
 * Once a use is in the vault, by whichever write, the journal record carrying it lets it go
 * (`AuditJournal.useStored`). Counting more than was signed only refuses sooner; a crash never un-counts.
 */
import type { AuditJournal, JournalRecord, JournalUse } from '../audit/journal';
import { DAY_MS, type Grant, type GrantUse } from './evaluate';
import { UseWindow } from './usage';
import type { GrantUseRecords } from './use-records';

/** A live grant in memory: the grant and its uses with their running 24 h / 60 s figures. */
export type LedgerGrant = { grant: Grant; win: UseWindow };

/**
 * One counted use (see the module docstring): `grantId` and `seq` name it; `use`, the use as an audit
 * journal record carries it; `counted` and `durable` the two conditions before anything covered by it is
 * sent; `written`, its own vault write (rejects with a storage error too). `carry(journal, record)` opens
 * the submission's journal record (`AuditJournal.open`) carrying the use — `durable` is then that
 * record's `stored` — and lets the use go from the record once it is in the vault. Call `carry` before
 * reading `durable`.
 */
export type UseReservation = {
  readonly grantId: string;
  readonly seq: number;
  readonly use: JournalUse;
  readonly counted: Promise<void>;
  readonly written: Promise<void>;
  readonly durable: Promise<void>;
  carry: (journal: AuditJournal, record: JournalRecord) => { id: string; stored: Promise<void> };
};

/**
 * A use counted here and not yet known to be in the vault: `settles` are called once it is (by whichever
 * write lands), or once it need not be (outside 24 h, grant gone); `done` then.
 */
type Unstored = { grantId: string; use: GrantUse; settles: (() => void)[]; done: boolean };

/** The uses a journal carries (`AuditJournal.leftovers`), each let go from its record once settled. */
async function journalLeftovers(journal: AuditJournal): Promise<Unstored[]> {
  return (await journal.leftovers()).flatMap(({ id, record }) =>
    record.use
      ? [
          {
            grantId: record.use.grant,
            use: { at: record.use.at, notional: record.use.notional, seq: record.use.seq },
            settles: [() => void journal.useStored(id).catch(() => undefined)],
            done: false,
          },
        ]
      : [],
  );
}

/**
 * The ledger of one worker (see the module docstring). `records`: the grant use records (the vault);
 * `journal`: the audit journal whose records a stopped worker left carrying uses (read once, at the first
 * `merge`); `now` Unix ms clock. Not serialised itself: `GrantService` calls it inside its mutex.
 */
export class GrantLedger {
  private readonly unstored = new Set<Unstored>();
  /**
   * Uses counted here (they hold the grant's room for the orders deciding beside them) whose vault write
   * has not landed, by `grantId|seq|at`, with the journal record that may carry them. Such a use is
   * durable only while that record is stored and carries it (`AuditJournal.carries`); otherwise a stop now
   * forgets it (nothing covered by it has left), so the usage a person reads leaves it out.
   */
  private readonly volatile = new Map<string, { journal?: AuditJournal; record?: string }>();
  /** The journal's leftovers were read (once per worker, at the first merge). */
  private leftoversTaken = false;
  private readonly now: () => number;

  constructor(private readonly o: { records: GrantUseRecords; journal?: AuditJournal; now?: () => number }) {
    this.now = o.now ?? Date.now;
  }

  /** Every grant with its uses as stored (not yet merged: call `merge`). Throws what `listGrants` throws. */
  async read(): Promise<LedgerGrant[]> {
    return (await this.o.records.listGrants()).map(({ grant, uses }) => ({ grant, win: new UseWindow(uses) }));
  }

  /**
   * Counts `use` on `held` (in memory at once) and writes it; returns its reservation (see the module
   * docstring). `use.seq` is its number (`held.win.nextSeq()`); `use.at` now.
   */
  reserve(held: LedgerGrant, use: GrantUse): UseReservation {
    held.win.push(use);
    const p: Unstored = { grantId: held.grant.id, use, settles: [], done: false };
    const key = volatileKey(held.grant.id, use);
    const holder: { journal?: AuditJournal; record?: string } = {};
    this.volatile.set(key, holder);
    const { counted, stored } = this.write(held, p);
    const onStored = (cb: () => void) => (p.done ? cb() : void p.settles.push(cb));
    const carried: JournalUse = { grant: held.grant.id, at: use.at, notional: use.notional, seq: use.seq ?? 0 };
    let carrier: Promise<void> | undefined;
    return {
      grantId: held.grant.id,
      seq: carried.seq,
      use: carried,
      counted,
      written: stored,
      get durable() {
        return carrier ?? stored;
      },
      carry(journal, record) {
        const opened = journal.open({ ...record, use: carried });
        carrier = opened.stored;
        Object.assign(holder, { journal, record: opened.id }); // durable while the journal carries it
        // Let go once the use is in the vault (a failed write: merged again at the next read, or by the next worker).
        onStored(() => void journal.useStored(opened.id).catch(() => undefined));
        return opened;
      },
    };
  }

  /**
   * `win`'s uses without those not yet durable (see `volatile`): the usage a stop would leave, which is
   * the usage a person reads (`GrantService.list`).
   */
  durableUses(grantId: string, win: UseWindow): UseWindow {
    if (!this.volatile.size) return win;
    const durable = (u: GrantUse) => {
      const c = this.volatile.get(volatileKey(grantId, u));
      return !c || (c.journal !== undefined && c.record !== undefined && c.journal.carries(c.record));
    };
    const uses = win.uses.filter(durable);
    return uses.length === win.uses.length ? win : new UseWindow(uses);
  }

  /**
   * Writes `p.use` of `held`, `p` kept in `unstored` until written (a failed write is merged again at the
   * next read of the grants). Returns the records' promises of this write.
   */
  private write(held: LedgerGrant, p: Unstored): { counted: Promise<void>; stored: Promise<void> } {
    this.unstored.add(p);
    const w = this.o.records.addGrantUse(held.grant, p.use);
    w.stored.then(
      () => this.settle(p),
      () => undefined, // kept: merged at the next read
    );
    w.stored.catch(() => undefined); // the caller's await sees the error
    return w;
  }

  /** `p` is in the vault (or need not be): out of `unstored`, its `settles` called once. */
  private settle(p: Unstored): void {
    this.unstored.delete(p);
    this.volatile.delete(volatileKey(p.grantId, p.use));
    p.done = true;
    for (const s of p.settles.splice(0)) s();
  }

  /**
   * Puts the uses not yet in the vault (and, the first time, the journal's leftovers) back into `all`, the
   * grants just read from the vault (see the module docstring). Call inside the grant service's mutex.
   */
  async merge(all: LedgerGrant[]): Promise<void> {
    if (!this.leftoversTaken && this.o.journal) {
      // A journal that cannot be read throws here (nothing is covered until it can: a stopped worker's
      // uses may be in it); the next read of the grants tries again.
      for (const p of await journalLeftovers(this.o.journal)) this.unstored.add(p);
      this.leftoversTaken = true;
    }
    const now = this.now();
    for (const p of [...this.unstored]) {
      const held = all.find((x) => x.grant.id === p.grantId);
      const done =
        !held || p.use.at <= now - DAY_MS || held.win.uses.some((u) => u.seq === p.use.seq && u.at === p.use.at);
      if (done || !held) {
        this.settle(p);
        continue;
      }
      if (held.win.uses.some((u) => u.seq === p.use.seq)) p.use = { ...p.use, seq: held.win.nextSeq() };
      held.win = new UseWindow([...held.win.uses, p.use]);
      this.write(held, p); // its journal record (if any) is let go once this write lands
    }
  }
}

/** The key of a use in `GrantLedger.volatile`. */
const volatileKey = (grantId: string, u: GrantUse) => `${grantId}|${u.seq ?? 0}|${u.at}`;
