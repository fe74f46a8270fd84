/**
 * Checking the keyed audit chain. Two checks, with what each detects stated exactly:
 *
 * **The check a tab open runs** (`checkAudit(log)`, also the export's first page): compares the MAC'd
 * checkpoint with the store's ends — its oldest key, the first chained entry (MAC, anchor), the newest
 * (MAC, head), the entries above the checkpoint — then verifies only the entries added since the last
 * verified position (`meta` › `auditVerified`, MAC'd), reading in key-range chunks of 1 000. Its cost
 * grows with what is new, never with the log: it never counts the whole store (Chromium counts by
 * walking every record while holding the database connection, ≈1 s at 1 000 000 entries, and every
 * append and page read would wait behind it). It detects: the oldest entries dropped (with or without
 * the anchor moved), the newest truncated or replaced, anything added before the oldest; and among the
 * entries added since the last check, any deleted, changed, forged, inserted or reordered (MAC or link).
 * Among entries an earlier check already verified, a deleted, changed or reordered entry is NOT seen
 * by this check: a page that shows a changed or reordered entry marks it `changed` (every entry shown
 * has its MAC checked, `read.ts`), and the full check finds all three.
 *
 * **The full check** (`checkAudit(log, { full: true })`, the tab's "Check everything"): walks every
 * chained entry (each MAC and link: a deleted entry breaks its successor's link, a changed or reordered
 * one its own MAC), then checks the count the checkpoint seals: the entries walked plus those kept from
 * before the current seal, counted in bounded key ranges (`COUNT_STEP` ids, each its own transaction,
 * so appends and reads go between steps; never one whole-store count). It runs in
 * the background and reports `{ done, total }` until it finishes; a check with more than
 * `INLINE_LIMIT` new entries does too. Memory is bounded by the chunk size at any log size.
 *
 * A break a full check finds is kept (MAC'd) in the verified position, so every later check reports it
 * until a full check passes again (or retention drops the entry). A check's `fullAt` says when the
 * last full check passed while this background ran (absent: the ends and the new entries only).
 */
import { readAuditRows, readMeta, type AuditSealEvent, type AuditVerifiedRecord } from '../vault/db';
import { prepare, serial, shared, type AuditLog, type Checkpoint } from './log';
import { entryAuthentic, partsOk, signParts, verifiedParts } from './mac';

/** Entries verified inline by one check; more run as a background check with progress. */
export const INLINE_LIMIT = 10_000;
const CHUNK = 1_000;
/** Ids counted per step of a full check's count (`countSteps`). */
const COUNT_STEP = 20_000;

/** Progress of a background check: entries walked of `total` (ids, estimated). */
export type AuditProgress = { done: number; total: number; full: boolean };

/**
 * The result of a check. `state`: `ok` (nothing removed, changed, added or re-sealed over),
 * `broken` (`brokenAt` / `reason` say where and what, in plain words), `checking` (a background check
 * runs: `progress`), `locked` (no key: nothing can be checked). `count`: entries in the log;
 * `checked`: entries whose link and MAC this call verified (incremental: only the new ones);
 * `unauthenticated`: entries kept from before the current seal; `pending`: entries recorded while
 * locked and not yet chained; `since`: when the current seal started (Unix ms); `seals`: why it started.
 */
export type AuditCheck = {
  ok: boolean;
  state: 'ok' | 'broken' | 'checking' | 'locked';
  count: number;
  checked: number;
  full: boolean;
  brokenAt?: number;
  reason?: string;
  progress?: AuditProgress;
  unauthenticated: number;
  pending: number;
  since?: number;
  seals: AuditSealEvent[];
  /**
   * When (Unix ms) the last full check that passed ended, while this background has run: every entry
   * was linked and the store's count matched then. Absent until one has; a check without it covered the
   * log's ends and what was added since the last check only.
   */
  fullAt?: number;
};

const CHANGED = 'this entry was changed or forged (its seal does not match)';
const GAP = 'entries before it were removed or moved';

type Walk = { checked: number; upTo: number; head: string; broken?: { id: number; reason: string } };

/** Verifies entries with id in (`from`, `c.lastId`] in order, each linking to `prev`. */
async function walk(
  log: AuditLog,
  key: CryptoKey,
  c: Checkpoint,
  from: number,
  prev: string,
  progress?: (pos: number) => void,
): Promise<Walk | undefined> {
  let pos = from;
  let checked = 0;
  for (;;) {
    if (pos >= c.lastId) break;
    if (progress && !(await log.key())) return undefined; // locked meanwhile: a background check stops

    const chunk = await readAuditRows(log.db, IDBKeyRange.bound(pos, c.lastId, true, false), CHUNK);
    if (!chunk.length) break;
    // MACs are independent of each other (each covers its own `prev`): check a chunk's concurrently, links in order.
    const authentic = await Promise.all(chunk.map((e) => entryAuthentic(key, e)));
    for (const [i, e] of chunk.entries()) {
      if (!authentic[i] || e.mac === undefined)
        return { checked, upTo: pos, head: prev, broken: { id: e.id, reason: CHANGED } };
      if (e.prev !== prev) return { checked, upTo: pos, head: prev, broken: { id: e.id, reason: GAP } };
      prev = e.mac;
      pos = e.id;
      checked++;
    }
    progress?.(pos);
  }
  return { checked, upTo: pos, head: prev };
}

async function readVerified(log: AuditLog, key: CryptoKey): Promise<AuditVerifiedRecord | undefined> {
  const v = await readMeta(log.db, 'auditVerified');
  if (!v || typeof v.upTo !== 'number' || typeof v.head !== 'string') return undefined;
  const broken = v.broken && typeof v.broken.id === 'number' && typeof v.broken.reason === 'string' ? v.broken : null;
  return (await partsOk(key, verifiedParts(v.upTo, v.head, broken), v.mac)) ? { ...v, broken } : undefined;
}

async function saveVerified(
  log: AuditLog,
  key: CryptoKey,
  upTo: number,
  head: string,
  broken: { id: number; reason: string } | null,
): Promise<void> {
  await log.db.put('meta', {
    id: 'auditVerified',
    upTo,
    head,
    broken,
    mac: await signParts(key, verifiedParts(upTo, head, broken)),
  });
}

type Ends = { count: number; pending: number; unauthenticated: number; broken?: { id?: number; reason: string } };

/**
 * The comparison of the checkpoint with the store's ends, at a cost that does not grow with the log: its
 * oldest key, the first chained entry (MAC and anchor), the newest (MAC and head), and a count of the ids
 * above the checkpoint only (entries recorded while locked). Never counts the whole store: Chromium
 * counts by walking every record, holding the database connection meanwhile (≈1 s at 1 000 000
 * entries), so appends and the Audit tab's reads would wait behind it. `count` is the checkpoint's
 * count plus what is pending; an entry removed from or added to the middle of what was already verified
 * is left to the full check (the walk and `countSteps`). The unauthenticated range is counted only after
 * a new seal kept entries from before it.
 */
async function endsCheck(log: AuditLog, key: CryptoKey, c: Checkpoint): Promise<Ends> {
  const tx = log.db.transaction('audit');
  const store = tx.store;
  const pending = await store.count(IDBKeyRange.lowerBound(c.lastId, true));
  const oldest = (await store.openKeyCursor())?.key;
  const chainStart = Math.max(c.firstId, c.chainFrom);
  const firstCursor = chainStart <= c.lastId ? await store.openCursor(IDBKeyRange.bound(chainStart, c.lastId)) : null;
  const firstChained = firstCursor ? { ...firstCursor.value, id: firstCursor.primaryKey } : undefined;
  const newest = c.lastId >= chainStart ? await store.get(c.lastId) : undefined;
  const unauthenticated =
    c.chainFrom > c.firstId && c.lastId >= c.firstId
      ? await store.count(IDBKeyRange.bound(c.firstId, Math.min(c.chainFrom - 1, c.lastId)))
      : 0;
  await tx.done;
  const r = { count: c.count + pending, pending, unauthenticated };
  if (c.count > 0 && oldest !== c.firstId) {
    return {
      ...r,
      broken: {
        reason:
          typeof oldest === 'number' && oldest > c.firstId
            ? 'the oldest entries were removed'
            : 'entries were added before the oldest one',
      },
    };
  }
  if (c.count === 0 && typeof oldest === 'number' && oldest <= c.lastId)
    return { ...r, broken: { reason: 'entries were added outside Countersign' } };
  if (chainStart <= c.lastId) {
    if (!firstChained) return { ...r, broken: { reason: 'the sealed entries were removed' } };
    if (!(await entryAuthentic(key, firstChained))) return { ...r, broken: { id: firstChained.id, reason: CHANGED } };
    if (firstChained.prev !== c.anchor)
      return {
        ...r,
        broken: { id: firstChained.id, reason: 'the start of the log was moved (its oldest entries were removed)' },
      };
    if (!newest) return { ...r, broken: { id: c.lastId, reason: 'the newest entries were removed' } };
    if (newest.mac !== c.head || !(await entryAuthentic(key, newest)))
      return { ...r, broken: { id: c.lastId, reason: 'the newest entry was replaced or changed' } };
  }
  return r;
}

/**
 * The store's count against the count the checkpoint seals, after a full walk that linked `walked`
 * chained entries: the walk accounts for every id from the chain's start to the newest (an entry deleted
 * there breaks its successor's link, one added fails its MAC or link), so only the entries kept from
 * before the current seal (`c.firstId` up to `c.chainFrom`) are counted, `COUNT_STEP` ids per step, each
 * step its own read transaction, so an append or a page read waits for one step at most (≈10–30 ms in
 * Chromium), never for a whole-store count. Returns the difference as a break at the oldest entry (kept
 * until a full check passes), or `undefined` when walked plus counted equals the sealed count. Stops
 * (`'locked'`) when the vault locks.
 */
async function countSteps(
  log: AuditLog,
  c: Checkpoint,
  walked: number,
): Promise<{ id: number; reason: string } | 'locked' | undefined> {
  let count = walked;
  const last = Math.min(c.chainFrom - 1, c.lastId);
  for (let from = c.firstId; from <= last; from += COUNT_STEP) {
    if (!(await log.key())) return 'locked';
    count += await log.db.count(
      'audit',
      IDBKeyRange.bound(from, Math.min(from + COUNT_STEP, last), false, from + COUNT_STEP <= last),
    );
  }
  if (count === c.count) return undefined;
  const n = Math.abs(count - c.count);
  const what =
    count < c.count
      ? `${n === 1 ? 'entry was' : 'entries were'} removed`
      : `${n === 1 ? 'entry was' : 'entries were'} added outside Countersign`;
  return {
    id: c.firstId,
    reason:
      `${n} ${what} between #${c.firstId} and #${c.lastId} (the ` +
      `full check found ${count} where the seal records ${c.count})`,
  };
}

/** Where the next walk starts: after the last verified entry when that record still holds, else the chain's start. */
async function startPoint(
  log: AuditLog,
  key: CryptoKey,
  c: Checkpoint,
  full: boolean,
): Promise<{ from: number; prev: string; sticky?: { id: number; reason: string } }> {
  const from = Math.max(c.firstId, c.chainFrom) - 1;
  if (full) return { from, prev: c.anchor };
  const v = await readVerified(log, key);
  if (!v || v.upTo < from || v.upTo > c.lastId) return { from, prev: c.anchor };
  const holds = v.upTo === from ? v.head === c.anchor : (await log.db.get('audit', v.upTo))?.mac === v.head;
  if (!holds) return { from, prev: c.anchor };
  const sticky =
    v.broken && v.broken.id >= c.firstId && (await log.db.getKey('audit', v.broken.id)) !== undefined
      ? v.broken
      : undefined;
  return { from: v.upTo, prev: v.head, ...(sticky ? { sticky } : {}) };
}

/**
 * The entry count shown while locked (nothing can be checked): the stored checkpoint's count, unverified,
 * plus the entries above it; the store's whole count only for a log without a checkpoint.
 */
async function lockedCount(log: AuditLog): Promise<number> {
  const c = await readMeta(log.db, 'auditCheckpoint');
  if (!c || typeof c.count !== 'number' || typeof c.lastId !== 'number') return log.db.count('audit');
  return c.count + (await log.db.count('audit', IDBKeyRange.lowerBound(c.lastId, true)));
}

/**
 * Checks the log (see the module docstring). `full`: re-verify every chained entry, in the
 * background. While locked returns `state: 'locked'`. While a background check runs, returns its
 * progress (`state: 'checking'`); call again to poll. Maintenance first: entries recorded while locked
 * are chained in, and a missing or invalid checkpoint starts a new seal (kept in `seals`, reported).
 */
export async function checkAudit(log: AuditLog, o: { full?: boolean; inlineLimit?: number } = {}): Promise<AuditCheck> {
  const full = !!o.full;
  const key = await log.key();
  const s = shared(log.db);
  if (!key) {
    s.cp = undefined; // forget the cached key with the checkpoint
    return {
      ok: false,
      state: 'locked',
      count: await lockedCount(log),
      checked: 0,
      full,
      unauthenticated: 0,
      pending: 0,
      seals: [],
    };
  }
  const c = await serial(s, 'tail', () => prepare(log, key, true));
  const cheap = await endsCheck(log, key, c);
  const base = {
    count: cheap.count,
    pending: cheap.pending,
    unauthenticated: cheap.unauthenticated,
    since: c.startedAt,
    seals: c.seals,
    full,
    ...(s.fullAt === undefined ? {} : { fullAt: s.fullAt }),
  };
  if (s.job) return { ...base, ok: false, state: 'checking', checked: 0, progress: { ...s.job } };
  const broken = (b: { id?: number | undefined; reason: string }, checked = 0): AuditCheck => ({
    ...base,
    ok: false,
    state: 'broken',
    checked,
    ...(b.id === undefined ? {} : { brokenAt: b.id }),
    reason: b.reason,
  });
  if (cheap.broken) return broken(cheap.broken);
  const resealed = c.seals.find((e) => (e.reason === 'missing' || e.reason === 'invalid') && cheap.unauthenticated > 0);
  if (resealed) {
    const what = resealed.reason === 'missing' ? 'was missing' : 'did not verify';
    return broken({
      id: resealed.fromId,
      reason:
        `the log's seal ${what} on ${new Date(resealed.at).toISOString()}: the ` +
        `${cheap.unauthenticated} entries before #${resealed.fromId} cannot be authenticated`,
    });
  }
  const start = await startPoint(log, key, c, full);
  if (start.sticky) return broken(start.sticky);
  const total = Math.max(0, c.lastId - start.from);
  const save = (w: Walk) => saveVerified(log, key, w.upTo, w.head, w.broken ?? null);
  if (full || total > (o.inlineLimit ?? INLINE_LIMIT)) {
    const job = { full, done: 0, total };
    s.job = job;
    void serial(s, 'walk', async () => {
      try {
        const w = await walk(
          log,
          key,
          c,
          start.from,
          start.prev,
          (pos) => void (job.done = Math.min(total, pos - start.from)),
        );
        if (!w) return;
        // The walk links every chained entry; the count also covers those kept from before the seal.
        const counted = full && !w.broken ? await countSteps(log, c, w.checked) : undefined;
        if (counted === 'locked') return;
        await save(counted ? { ...w, broken: counted } : w);
        if (full) s.fullAt = w.broken || counted ? undefined : log.now();
      } finally {
        s.job = undefined;
      }
    }).catch(() => undefined);
    return { ...base, ok: false, state: 'checking', checked: 0, progress: { ...job } };
  }
  const w = await serial(s, 'walk', async () => {
    const r = (await walk(log, key, c, start.from, start.prev))!;
    await save(r);
    return r;
  });
  if (w.broken) return broken(w.broken, w.checked);
  return { ...base, ok: true, state: 'ok', checked: w.checked };
}

/** The running background check's progress, or `undefined` when none runs. */
export function auditProgress(log: AuditLog): AuditProgress | undefined {
  const j = shared(log.db).job;
  return j ? { ...j } : undefined;
}
