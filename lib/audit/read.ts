/**
 * Reading the audit log a page at a time: the Audit tab pages
 * newest first with key cursors (`before` = the last id shown), through the `byOrigin`, `byGroup` and
 * `byOriginGroup` indexes when filtered, so a page costs the same at 20 entries or 1 000 000; exports
 * page oldest first (`after`) and the popup assembles the file. Nothing here reads the whole log.
 * Each entry comes with its own status (its MAC checked against the vault's key), so what a person
 * reads on a page is authenticated even before a full check has run.
 */
import { unwrap } from 'idb';
import { auditGroupOf, readAuditRows, type AuditEntry, type StoredAuditEntry } from '../vault/db';
import { auditWritten, readCheckpoint, shared, type AuditLog, type Checkpoint } from './log';
import { entryAuthentic } from './mac';
import { backgroundTask } from '../tasks';

/**
 * An entry's status: `ok` (sealed, MAC verifies); `locked` (recorded while locked, chained in later:
 * not authenticated); `pending` (recorded while locked, not chained yet); `unauthenticated` (kept from
 * before the current seal); `changed` (its MAC does not verify: edited or forged); `unchecked` (no key
 * or no valid checkpoint to check it against).
 */
export type AuditEntryStatus = 'ok' | 'locked' | 'pending' | 'unauthenticated' | 'changed' | 'unchecked';

/** An entry as the popup and exports see it (`at` Unix ms; `mac` hex link when sealed). */
export type AuditEntryView = Pick<
  AuditEntry,
  'at' | 'origin' | 'account' | 'kind' | 'summary' | 'digest' | 'result' | 'detail' | 'mac'
> & { id: number; status: AuditEntryStatus };

/** One page and the cursor of the next (`null`: no more). */
export type AuditPage = { entries: AuditEntryView[]; next: number | null };

/** Largest page the Audit tab may ask for. */
export const MAX_PAGE = 500;
/** Largest export page. */
export const MAX_EXPORT_PAGE = 1_000;
/** Longest a page read waits for the appends to pause, in ms (`appendsQuiet`). */
export const QUIET_WAIT_MS = 50;

/**
 * Resolves once no append is queued or running, or after `QUIET_WAIT_MS` ms: every entry queued before
 * the call is in what the read then sees (as `auditWritten`), and an append queued while the read waits
 * goes first. An append's write transaction needs the store to itself, so it waits for every read
 * transaction open on it; appends hold a signature's audit trail and a page read can wait a little. Under
 * a burst of appends the read goes at the bound, so it is never held longer than that.
 */
export async function appendsQuiet(log: Pick<AuditLog, 'db'>): Promise<void> {
  const s = shared(log.db);
  const until = performance.now() + QUIET_WAIT_MS;
  for (;;) {
    const tail = s.tail;
    await tail;
    if (performance.now() >= until) return;
    await backgroundTask(); // an append queued right after the last one settled is queued by then
    if (s.tail === tail) return;
  }
}

/** Entry MACs a read checks at once (see `views`). */
const VERIFY_BATCH = 10;

/**
 * A store or index offering `getAllRecords` (IndexedDB 3.0: Chromium ≥ 141, fake-indexeddb): records
 * in a key range, in either direction, in one request.
 */
type RecordsSource = {
  getAllRecords: (o: {
    query: IDBKeyRange | null;
    count: number;
    direction: 'prev';
  }) => IDBRequest<{ key: IDBValidKey; primaryKey: IDBValidKey; value: unknown }[]>;
};

/** The result of a native IndexedDB request (for the requests `idb` does not type). */
function requestResult<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function views(log: AuditLog, rows: StoredAuditEntry[]): Promise<AuditEntryView[]> {
  const key = await log.key();
  let c: Checkpoint | undefined;
  if (!key)
    shared(log.db).cp = undefined; // no key: forget the cached one
  else {
    const r = await readCheckpoint(log, key);
    if (r.status === 'ok') c = r.c;
  }
  const authentic: boolean[] = [];
  for (let i = 0; i < rows.length; i += VERIFY_BATCH) {
    // A few MACs at a time, and none while an append is under way: the appends' own MACs queue behind
    // at most one batch on the browser's WebCrypto thread, never behind a whole page.
    if (i) await auditWritten(log);
    const batch = rows.slice(i, i + VERIFY_BATCH);
    authentic.push(
      ...(await Promise.all(
        batch.map(async (e) => (key && c && e.id >= c.chainFrom && e.id <= c.lastId ? entryAuthentic(key, e) : false)),
      )),
    );
  }
  const out: AuditEntryView[] = [];
  for (const [i, e] of rows.entries()) {
    let status: AuditEntryStatus;
    if (!key || !c) status = 'unchecked';
    else if (e.id > c.lastId) status = 'pending';
    else if (e.id < c.chainFrom) status = 'unauthenticated';
    else if (!authentic[i]) status = 'changed';
    else status = e.auth === 'locked' ? 'locked' : 'ok';
    out.push({
      id: e.id,
      at: e.at,
      origin: e.origin,
      account: e.account,
      kind: e.kind,
      summary: e.summary,
      ...(e.digest === undefined ? {} : { digest: e.digest }),
      result: e.result,
      ...(e.detail === undefined ? {} : { detail: e.detail }),
      ...(e.mac === undefined ? {} : { mac: e.mac }),
      status,
    });
  }
  return out;
}

/**
 * A page of the log, newest first: at most `limit` (1–500, default 50) entries with id below
 * `before`, from `origin` exactly and of `kind` (a group such as `perps`, or a kind prefix within
 * one such as `perps.create`). Pass the returned `next` as `before` for the following page.
 */
export async function pageAudit(
  log: AuditLog,
  q: {
    before?: number | undefined;
    limit?: number | undefined;
    origin?: string | undefined;
    kind?: string | undefined;
  } = {},
): Promise<AuditPage> {
  await appendsQuiet(log); // entries queued before this read are in it; appends queued meanwhile go first
  const limit = Math.min(Math.max(1, q.limit ?? 50), MAX_PAGE);
  const upper = q.before ?? Infinity;
  const group = q.kind ? auditGroupOf(q.kind) : undefined;
  const tx = log.db.transaction('audit');
  const source =
    q.origin && group
      ? tx.store.index('byOriginGroup')
      : q.origin
        ? tx.store.index('byOrigin')
        : group
          ? tx.store.index('byGroup')
          : tx.store;
  const range =
    q.origin && group
      ? IDBKeyRange.bound([q.origin, group, -Infinity], [q.origin, group, upper], false, true)
      : q.origin
        ? IDBKeyRange.bound([q.origin, -Infinity], [q.origin, upper], false, true)
        : group
          ? IDBKeyRange.bound([group, -Infinity], [group, upper], false, true)
          : q.before === undefined
            ? null
            : IDBKeyRange.upperBound(q.before, true);
  const rows: StoredAuditEntry[] = [];
  const native = (unwrap as (v: unknown) => unknown)(source) as Partial<RecordsSource>;
  if (typeof native.getAllRecords === 'function' && (!q.kind || q.kind === group)) {
    // One request for the whole page: the read transaction is as short as it can be, so an append
    // waiting behind it (a write needs the store to itself) waits least.
    const records = await requestResult(native.getAllRecords({ query: range, count: limit, direction: 'prev' }));
    for (const r of records) rows.push({ ...(r.value as AuditEntry), id: r.primaryKey as number });
  } else {
    for (let c = await source.openCursor(range, 'prev'); c && rows.length < limit; c = await c.continue()) {
      if (!q.kind || c.value.kind.startsWith(q.kind)) rows.push({ ...c.value, id: c.primaryKey });
    }
  }
  await tx.done;
  return { entries: await views(log, rows), next: rows.length === limit ? (rows.at(-1)?.id ?? null) : null };
}

/** An export page, oldest first: at most `limit` (1–1000, default 1000) entries with id above `after`. */
export async function exportAudit(
  log: AuditLog,
  q: { after?: number | undefined; limit?: number | undefined } = {},
): Promise<AuditPage> {
  await auditWritten(log); // entries queued before this read are in it
  const limit = Math.min(Math.max(1, q.limit ?? MAX_EXPORT_PAGE), MAX_EXPORT_PAGE);
  const rows = await readAuditRows(
    log.db,
    q.after === undefined ? undefined : IDBKeyRange.lowerBound(q.after, true),
    limit,
  );
  return { entries: await views(log, rows), next: rows.length === limit ? (rows.at(-1)?.id ?? null) : null };
}

/**
 * The distinct origins in the log, sorted (at most `max`, default 200): one key seek per origin along
 * `byOrigin` (arrays sort after numbers, so `[origin, []]` is past every `[origin, id]`).
 */
export async function auditOrigins(log: AuditLog, max = 200): Promise<string[]> {
  await auditWritten(log); // entries queued before this read are in it
  const tx = log.db.transaction('audit');
  const index = tx.store.index('byOrigin');
  const out: string[] = [];
  for (let c = await index.openKeyCursor(); c && out.length < max;) {
    const origin = c.key[0];
    out.push(origin);
    c = await index.openKeyCursor(IDBKeyRange.lowerBound([origin, []], true));
  }
  await tx.done;
  return out;
}

/** CSV of entries (RFC 4180 quoting), in the order given; `header` adds the column names first. */
export function auditCsv(entries: readonly AuditEntryView[], o: { header?: boolean } = {}): string {
  const q = (v: unknown) => `"${String(v ?? '').replace(/"/g, '""')}"`;
  const head = ['id', 'time', 'origin', 'account', 'kind', 'summary', 'digest', 'result', 'detail', 'status', 'mac'];
  const rows = entries.map((e) =>
    [
      e.id,
      new Date(e.at).toISOString(),
      e.origin,
      e.account,
      e.kind,
      e.summary,
      e.digest,
      e.result,
      e.detail,
      e.status,
      e.mac,
    ]
      .map(q)
      .join(','),
  );
  return ((o.header ?? true) ? [head.join(','), ...rows] : rows).join('\r\n');
}
