/**
 * The keyed audit chain: appending, sealing and the MAC'd checkpoint (see `./index.ts`
 * for the whole design and what it does not detect).
 *
 * Every entry's link is HMAC-SHA256 (WebCrypto) under the vault's audit key over the fields a person
 * reads, the entry's id and the previous link. The checkpoint (`meta` › `auditCheckpoint`: count,
 * oldest id, anchor, newest id, head, seal history) is MAC'd with the same key and written in the same
 * IndexedDB transaction as each append, adoption and prune. WebCrypto is asynchronous and an IndexedDB
 * transaction cannot wait for it, so MACs are computed first and the write transaction then checks
 * that the checkpoint is still the one they were computed from (optimistic concurrency); appends are
 * also serialised per database so that check almost never fails. What each MAC covers, and signing and
 * checking them: `./mac.ts`.
 */
import { BaseError } from '../errors/base';
import {
  auditGroupOf,
  metaRecord,
  readAuditRows,
  readMeta,
  type AuditCheckpointRecord,
  type AuditEntry,
  type AuditSealEvent,
  type StoredAuditEntry,
  type VaultDb,
} from '../vault/db';
import { afterSends } from '../tasks';
import { checkpointParts, macEntry, partsOk, sealCheckpoint } from './mac';

/** Where the audit key comes from: the vault's `auditKey()` in the extension; tests make their own. */
export type AuditKeySource = () => Promise<CryptoKey | undefined>;

/**
 * A handle on the audit log of one vault database: the database, the key source (HMAC-SHA256
 * `CryptoKey`, `undefined` while locked) and the clock (Unix ms). Cheap to create; handles on the same
 * database share their lock, cache and running verification.
 */
export type AuditLog = { readonly db: VaultDb; readonly key: AuditKeySource; readonly now: () => number };

/** Builds an `AuditLog` handle. `now` defaults to `Date.now` (Unix ms). */
export function auditLog(db: VaultDb, key: AuditKeySource, o: { now?: () => number } = {}): AuditLog {
  return { db, key, now: o.now ?? Date.now };
}

/**
 * What a caller records: `at` Unix ms; origin or "extension"; account (lowercase
 * address or ''); kind (`<group>.<verb>`); summary in plain words; optional EIP-712 digest; result;
 * optional detail. Nothing else is needed (a dead-man period is one entry with its count in `summary`).
 */
export type AuditInput = Pick<AuditEntry, 'at' | 'origin' | 'account' | 'kind' | 'summary' | 'result'> & {
  digest?: string | undefined;
  detail?: string | undefined;
};

/** The checkpoint as stored (MAC'd). */
export type Checkpoint = AuditCheckpointRecord;

/** The link before the first entry (64 hex zeros). */
export const ZERO = '0'.repeat(64);
const ADOPT_CHUNK = 500;

// ------------------------------------------------------------------------------------------------
// Shared per-database state: the append lock, the walk lock, the verified checkpoint cache

type Shared = {
  tail: Promise<unknown>;
  walk: Promise<unknown>;
  cp: { key: CryptoKey; c: Checkpoint } | undefined;
  job: { full: boolean; done: number; total: number } | undefined;
  /** When (Unix ms) the last full check that passed ended, in this worker; `undefined` until one has. */
  fullAt: number | undefined;
  /**
   * Appends and reads someone waits for, queued behind the tail (`appendAudit` without `afterSends`, `auditWritten`):
   * while there is one, an entry's `afterSends` wait ends (`hurry`).
   */
  urgent: number;
  /** Ends the wait of the entry now waiting for `afterSends`, if one is. */
  hurry: (() => void) | undefined;
};
const SHARED = new WeakMap<VaultDb, Shared>();

/** The state every handle on `db` shares. */
export function shared(db: VaultDb): Shared {
  let s = SHARED.get(db);
  if (!s)
    SHARED.set(
      db,
      (s = {
        tail: Promise.resolve(),
        walk: Promise.resolve(),
        cp: undefined,
        job: undefined,
        fullAt: undefined,
        urgent: 0,
        hurry: undefined,
      }),
    );
  return s;
}

/** Runs `fn` after every earlier holder of `lock` on this database (a promise-chain mutex). */
export function serial<T>(s: Shared, lock: 'tail' | 'walk', fn: () => Promise<T>): Promise<T> {
  const run = s[lock].then(fn, fn);
  s[lock] = run.catch(() => undefined);
  return run;
}

const sameCheckpoint = (a: Checkpoint | undefined, b: Checkpoint | undefined) =>
  !!a && !!b && a.mac === b.mac && JSON.stringify(checkpointParts(a)) === JSON.stringify(checkpointParts(b));

/** Reads the checkpoint and checks its MAC (cached per key). */
export async function readCheckpoint(
  log: AuditLog,
  key: CryptoKey,
): Promise<{ status: 'ok'; c: Checkpoint } | { status: 'missing' } | { status: 'invalid' }> {
  const s = shared(log.db);
  const stored = await readMeta(log.db, 'auditCheckpoint');
  if (!stored) return { status: 'missing' };
  if (s.cp?.key === key && sameCheckpoint(s.cp.c, stored)) return { status: 'ok', c: s.cp.c };
  const ok = stored.v === 1 && Array.isArray(stored.seals) && (await partsOk(key, checkpointParts(stored), stored.mac));
  if (!ok) return { status: 'invalid' };
  s.cp = { key, c: stored };
  return { status: 'ok', c: stored };
}

/**
 * Writes in one transaction over `audit` and `meta` when the stored checkpoint is still `expected`
 * (and, with `noneAfter`, no entry has an id above it). Returns false (nothing written) otherwise.
 */
async function writeIf(
  db: VaultDb,
  expected: Checkpoint,
  next: Checkpoint,
  entries: AuditEntry[],
  noneAfter?: number,
): Promise<boolean> {
  const tx = db.transaction(['audit', 'meta'], 'readwrite');
  const meta = tx.objectStore('meta');
  const audit = tx.objectStore('audit');
  // Both reads asked at once (one round trip to the browser's IndexedDB instead of two; same transaction).
  const [raw, extra] = await Promise.all([
    meta.get('auditCheckpoint'),
    noneAfter === undefined ? undefined : audit.getKey(IDBKeyRange.lowerBound(noneAfter, true)),
  ]);
  const stored = metaRecord(raw, 'auditCheckpoint');
  if (!sameCheckpoint(stored, expected) || extra !== undefined) {
    tx.abort();
    await tx.done.catch(() => undefined);
    return false;
  }
  for (const e of entries) void audit.put(e);
  void meta.put(next);
  await tx.done;
  return true;
}

// ------------------------------------------------------------------------------------------------
// Sealing: make the log a keyed chain with a valid checkpoint and nothing left unchained

/** The stored form of a caller's entry (only known fields; `group` derived). Throws `Audit.InvalidEntryError`. */
function normalize(input: AuditInput): AuditEntry {
  const str = (field: string, v: unknown, max: number) => {
    if (typeof v !== 'string' || v.length > max) throw new InvalidEntryError(field);
    return v;
  };
  if (typeof input?.at !== 'number' || !Number.isSafeInteger(input.at) || input.at < 0)
    throw new InvalidEntryError('at');
  if (!['ok', 'rejected', 'error', 'unknown'].includes(input.result)) throw new InvalidEntryError('result');
  const e: AuditEntry = {
    at: input.at,
    origin: str('origin', input.origin, 2_000),
    account: str('account', input.account, 200),
    kind: str('kind', input.kind, 200),
    group: '',
    summary: str('summary', input.summary, 20_000),
    result: input.result,
  };
  e.group = auditGroupOf(e.kind);
  if (input.digest !== undefined) e.digest = str('digest', input.digest, 200);
  if (input.detail !== undefined) e.detail = str('detail', input.detail, 20_000);
  return e;
}

/** An entry recorded earlier, reduced to the fields a person reads (drops stray fields and old links). */
function fieldsOf(e: AuditEntry): AuditEntry {
  const out: AuditEntry = {
    at: e.at,
    origin: e.origin,
    account: e.account,
    kind: e.kind,
    group: auditGroupOf(String(e.kind)),
    summary: e.summary,
    result: e.result,
  };
  if (e.digest !== undefined) out.digest = e.digest;
  if (e.detail !== undefined) out.detail = e.detail;
  return out;
}

/** Chains entries recorded while locked (ids above the checkpoint) into the keyed chain, marked `auth: 'locked'`. */
async function adoptPending(log: AuditLog, key: CryptoKey, c: Checkpoint): Promise<Checkpoint | undefined> {
  for (;;) {
    const pending = await readAuditRows(log.db, IDBKeyRange.lowerBound(c.lastId, true), ADOPT_CHUNK);
    const [first] = pending;
    if (!first) return c;
    let head = c.head;
    let last = c.lastId;
    const adopted: AuditEntry[] = [];
    for (const e of pending) {
      const a: AuditEntry = { ...fieldsOf(e), id: e.id, auth: 'locked', prev: head };
      a.mac = await macEntry(key, a, e.id, head);
      head = a.mac;
      last = e.id;
      adopted.push(a);
    }
    const next = await sealCheckpoint(key, {
      ...c,
      count: c.count + adopted.length,
      firstId: c.count === 0 ? first.id : c.firstId,
      lastId: last,
      head,
    });
    if (!(await writeIf(log.db, c, next, adopted))) return undefined;
    shared(log.db).cp = { key, c: next };
    c = next;
  }
}

const SEAL_TEXT: Record<AuditSealEvent['reason'], (a: number, b: number, n: number) => string> = {
  legacy: (a, b, n) =>
    `The audit log is now sealed with this vault's key. The ${n} entries ` +
    `recorded before (#${a}–#${b}) are kept but cannot be authenticated.`,
  missing: (a, b) =>
    `The audit log's seal was missing (removed outside Countersign). ` +
    `Entries #${a}–#${b} cannot be authenticated; a new seal starts here.`,
  invalid: (a, b) =>
    `The audit log's seal did not verify with this vault's key (changed outside Countersign, or ` +
    `written by another vault). Entries #${a}–#${b} cannot be authenticated; a new seal starts here.`,
  restore: (a, b) =>
    `The vault was restored from a backup: entries #${a}–#${b} were sealed by ` +
    `the previous vault's key and cannot be authenticated; a new seal starts here.`,
};

/**
 * Starts a new seal over what the store holds when the checkpoint is missing or does not verify. An
 * empty store starts a fresh chain; entries that only lack links (recorded while locked in a new log)
 * are adopted; otherwise every entry kept stays outside the new chain, the event is kept in the
 * checkpoint's seal history and a keyed `audit.seal` entry says so.
 */
async function reseal(log: AuditLog, key: CryptoKey, found: 'missing' | 'invalid' | 'restore'): Promise<void> {
  const tx = log.db.transaction('audit');
  const first = await tx.store.openCursor();
  const oldest: StoredAuditEntry | undefined = first ? { ...first.value, id: first.primaryKey } : undefined;
  const last = await tx.store.openCursor(null, 'prev');
  const newest: StoredAuditEntry | undefined = last ? { ...last.value, id: last.primaryKey } : undefined;
  const count = await tx.store.count();
  await tx.done;
  const now = log.now();
  const base = { id: 'auditCheckpoint' as const, v: 1 as const, startedAt: now, seals: [] as AuditSealEvent[] };
  if (!oldest || !newest) {
    await log.db.put(
      'meta',
      await sealCheckpoint(key, { ...base, count: 0, firstId: 1, chainFrom: 1, anchor: ZERO, lastId: 0, head: ZERO }),
    );
    return;
  }
  if (found === 'missing' && newest.mac === undefined && oldest.hash === undefined) {
    // A new log whose only entries were recorded while locked: they are chained in (marked) next.
    await log.db.put(
      'meta',
      await sealCheckpoint(key, {
        ...base,
        count: 0,
        firstId: oldest.id,
        chainFrom: oldest.id,
        anchor: ZERO,
        lastId: oldest.id - 1,
        head: ZERO,
      }),
    );
    return;
  }
  const reason: AuditSealEvent['reason'] =
    found === 'missing' ? (newest.mac === undefined && oldest.hash !== undefined ? 'legacy' : 'missing') : found;
  const link =
    typeof newest.mac === 'string'
      ? newest.mac
      : typeof newest.hash === 'string'
        ? newest.hash.replace(/^0x/, '')
        : ZERO;
  const anchor = /^[0-9a-f]{64}$/.test(link) ? link : ZERO;
  const event: AuditSealEvent = { at: now, fromId: newest.id + 1, reason, count };
  await log.db.put(
    'meta',
    await sealCheckpoint(key, {
      ...base,
      count,
      firstId: oldest.id,
      chainFrom: newest.id + 1,
      anchor,
      lastId: newest.id,
      head: anchor,
      seals: [event],
    }),
  );
  shared(log.db).cp = undefined;
  await appendKeyed(log, key, {
    at: now,
    origin: 'extension',
    account: '',
    kind: 'audit.seal',
    group: 'audit',
    summary: SEAL_TEXT[reason](oldest.id, newest.id, count),
    result: reason === 'legacy' || reason === 'restore' ? 'ok' : 'error',
  });
}

/**
 * Brings the log to a sealed state (call with the tail lock held): a valid checkpoint and no entry
 * above it. Returns the checkpoint. `fresh`: re-read the stored checkpoint instead of trusting the
 * cache (appends trust it: their write transaction re-checks the stored one).
 */
export async function prepare(log: AuditLog, key: CryptoKey, fresh = false): Promise<Checkpoint> {
  const s = shared(log.db);
  if (!fresh && s.cp?.key === key) return s.cp.c;
  for (let i = 0; ; i++) {
    if (i > 8) throw new ConflictError();
    const r = await readCheckpoint(log, key);
    if (r.status !== 'ok') {
      await reseal(log, key, r.status);
      continue;
    }
    const c = await adoptPending(log, key, r.c);
    if (c) return c;
    s.cp = undefined;
  }
}

/** Appends a keyed entry after the checkpoint (tail lock held). */
async function appendKeyed(log: AuditLog, key: CryptoKey, entry: AuditEntry): Promise<number> {
  const s = shared(log.db);
  for (let i = 0; ; i++) {
    if (i > 8) throw new ConflictError();
    const c = await prepare(log, key);
    const id = c.lastId + 1;
    const mac = await macEntry(key, entry, id, c.head);
    const stored: AuditEntry = { ...entry, id, prev: c.head, mac };
    const next = await sealCheckpoint(key, {
      ...c,
      count: c.count + 1,
      firstId: c.count === 0 ? id : c.firstId,
      lastId: id,
      head: mac,
    });
    if (await writeIf(log.db, c, next, [stored], c.lastId)) {
      s.cp = { key, c: next };
      return id;
    }
    s.cp = undefined;
  }
}

/**
 * Appends an entry. While the key is available the entry is MAC'd and chained,
 * and the checkpoint moves in the same transaction; entries recorded earlier while locked are chained
 * in first (marked `auth: 'locked'`). With no key (vault fully locked) the entry is still kept — a
 * signature is never left unrecorded — without a link, shown as "recorded while locked" and chained in
 * (marked) at the next keyed append. Returns its id and whether it is sealed. Throws
 * `Audit.InvalidEntryError` (names the field) and nothing else on bad input.
 *
 * `afterSends`: the entry is queued now (in order, seen by `auditWritten`), and its sealing and write start in a later
 * task (`afterSends`, `lib/tasks`: `SEND_GRACE_MS` after this call, once no journal record a send waits for is being
 * stored, `SEND_WAIT_MAX_MS` past the grace at the latest) — what the current task still does (the signer posting an
 * answer back to a page) and the next request's way to its send go first. The wait ends at once when an append
 * without `afterSends` or a read (`auditWritten`) is queued behind it: those are waited for.
 */
export async function appendAudit(
  log: AuditLog,
  input: AuditInput,
  o: { afterSends?: boolean } = {},
): Promise<{ id: number; sealed: boolean }> {
  const entry = normalize(input);
  // The key as it is now (a lock right after does not turn this entry into one "recorded while locked"),
  // and the entry queued at once: a read that starts after this call sees it (`auditWritten`).
  const keyed = log.key();
  keyed.catch(() => undefined); // awaited below, maybe a task later: a refusal is not unhandled meanwhile
  const s = shared(log.db);
  const asked = performance.now();
  if (!o.afterSends) urgentBehind(s);
  return serial(s, 'tail', async () => {
    if (!o.afterSends) s.urgent--;
    else if (s.urgent === 0) {
      await new Promise<void>((resolve) => {
        s.hurry = resolve;
        void afterSends(asked).then(resolve);
      });
      s.hurry = undefined;
    }
    const key = await keyed;
    if (!key) {
      s.cp = undefined; // no key: forget the cached one with its checkpoint
      return { id: await log.db.add('audit', entry), sealed: false };
    }
    return { id: await appendKeyed(log, key, entry), sealed: true };
  });
}

/**
 * Resolves once every append queued on `log`'s database before this call has settled (written or
 * failed). The log's readers (`pageAudit`, `exportAudit`, `auditOrigins`) wait for it, so an entry
 * appended after an answer went back (`SigningService`) is never missing from a
 * read that started later.
 */
export async function auditWritten(log: Pick<AuditLog, 'db'>): Promise<void> {
  const s = shared(log.db);
  urgentBehind(s);
  try {
    await s.tail;
  } finally {
    s.urgent--;
  }
}

/** Someone waits behind the tail: the entry waiting for `afterSends` is written now, and those after it do not wait. */
function urgentBehind(s: Shared): void {
  s.urgent++;
  s.hurry?.();
}

/**
 * After a person restored the vault from a backup (a different master key): when the checkpoint no
 * longer verifies, starts a new seal recorded as a restore (entries sealed by the previous vault stay,
 * marked as not authenticated). A no-op when the checkpoint still verifies or the vault is locked.
 */
export async function resealAfterRestore(log: AuditLog): Promise<void> {
  const key = await log.key();
  if (!key) return;
  const s = shared(log.db);
  await serial(s, 'tail', async () => {
    s.cp = undefined;
    const r = await readCheckpoint(log, key);
    if (r.status === 'invalid') await reseal(log, key, 'restore');
  });
}

/** Writes `next` over `expected` with `deleteTo` (inclusive) removed from the oldest end. For prune. */
export async function commitPrune(
  log: AuditLog,
  key: CryptoKey,
  expected: Checkpoint,
  next: Omit<Checkpoint, 'mac'>,
  deleteFrom: number,
  deleteTo: number,
): Promise<boolean> {
  const sealed = await sealCheckpoint(key, next);
  const tx = log.db.transaction(['audit', 'meta'], 'readwrite');
  const stored = metaRecord(await tx.objectStore('meta').get('auditCheckpoint'), 'auditCheckpoint');
  if (!sameCheckpoint(stored, expected)) {
    tx.abort();
    await tx.done.catch(() => undefined);
    return false;
  }
  void tx.objectStore('audit').delete(IDBKeyRange.bound(deleteFrom, deleteTo));
  void tx.objectStore('meta').put(sealed);
  await tx.done;
  shared(log.db).cp = { key, c: sealed };
  return true;
}

/** Thrown when an entry's field is missing or malformed; nothing is recorded. */
export class InvalidEntryError extends BaseError {
  override name = 'Audit.InvalidEntryError';
  constructor(field: string) {
    super(`The audit entry's ${field} is missing or malformed; nothing was recorded.`, { data: { field } });
  }
}

/** Thrown when the log kept changing under an append (another writer outside Countersign). */
export class ConflictError extends BaseError {
  override name = 'Audit.ConflictError';
  /**
   * EIP-1474 -32002 "resource unavailable" (never -32603, which dapp libraries retry). Raised after a
   * submission was sent, the signer reports it as the unknown outcome instead (`Signer.OutcomeUnknownError`).
   */
  static override readonly code: number | undefined = -32002;
  constructor() {
    super('The audit log kept changing while an entry was being recorded; try again.');
  }
}
