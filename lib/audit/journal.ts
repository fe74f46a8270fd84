/**
 * The audit journal (held by `lib/background/journal.restart.test.ts`): a submission's
 * audit entry is written after its answer goes back to the page, so a worker that stops between the
 * send and that write would leave a signature that left with no trace. Before anything is sent, the
 * signer opens a journal record (what the entry will say: origin, account, kind, summary, digest, and
 * the ids the venue can be asked about: client order ids, order hashes) in the vault database's
 * `journal` store — IndexedDB, so it outlives a worker stop *and* a killed browser (relaxed durability:
 * a power cut may lose the last records) — and closes it once the entry is written (or the person was
 * told it could not be). The first start with the vault unlocked after a stop or a crash asks the venue
 * about each record a stopped one left open and writes its audit entry (`./reconcile.ts`).
 *
 * A submission covered by a standing grant also carries the grant use it counted (`use`): the record is
 * what makes the use durable before the send, while the use's vault write runs beside the network round
 * trip. The grant use ledger (`lib/grants/ledger.ts`) owns that part: its reservation opens the record
 * with the use (`UseReservation.carry`), lets the use go once it is in the vault (`useStored`), and the
 * next worker's ledger merges a use a stopped worker left (`leftovers`), unless it is already in the
 * vault. A record is gone once both parts are done: its entry written (`close`) and its use stored.
 * Nothing here is a secret, so records are stored in clear and read back through `readRecord` (the
 * disk is not trusted to hold the shape written).
 */
import { BaseError } from '../errors/base';
import { RELAXED, type VaultDb } from '../vault/db';
import type { AuditInput } from './log';
import { pressingWrite } from '../tasks';

/**
 * A grant use as a journal record carries it: grant id `grant`, `at` Unix ms, `notional` USDC (decimal
 * string, as `GrantUse.notional`), `seq` the grant's use number.
 */
export type JournalUse = { grant: string; at: number; notional: string; seq: number };

/**
 * What the venue can be asked about a submission after a crash: perps orders by client order id (`c`,
 * 32 hex) with what they were (instrument id, side, quantity as a decimal string), so an order the venue
 * holds under a reused id is not taken for this one; or order-book order hashes (the EIP-712 digests
 * signed, which the exchange uses as order ids). At most `MAX_LOOKUP_IDS` (a perps batch's most orders).
 */
export type JournalLookup = { venue: 'perps'; orders: PerpsLookupOrder[] } | { venue: 'clob'; orderHashes: string[] };
/** One perps order as a journal record names it: client order id, instrument id, buy, quantity (decimal string). */
export type PerpsLookupOrder = { c: string; iid: number; buy: boolean; qty: string };

/**
 * What an open record says: the audit entry it stands for, without its result (`at` Unix ms, opened);
 * `lookup`, what the venue can be asked about it; `use`, the grant use the submission counted, until it
 * is stored; `audited`, its entry was written (the record stays for its use only).
 */
export type JournalRecord = Omit<AuditInput, 'result' | 'detail'> & {
  lookup?: JournalLookup;
  use?: JournalUse;
  audited?: true;
};

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
  /**
   * The records a stopped worker left open (read once at start; each stays stored until closed). Rejects
   * when the store cannot be read; the next call reads again.
   */
  leftovers: () => Promise<{ id: string; record: JournalRecord }[]>;
  /** Whether record `id` is stored and still carries its grant use (the use is durable through it). */
  carries: (id: string) => boolean;
};

/** The store refused the journal record: nothing was sent (EIP-1193 -32002 without `data.command`: try again later). */
export class JournalError extends BaseError {
  override name = 'Audit.JournalError';
  static override readonly code = -32002;
  constructor(cause: unknown) {
    super('Countersign could not note this submission before sending it, so nothing was sent; try again.', { cause });
  }
}

/**
 * Most ids a record's lookup keeps: a perps batch's most orders (`PERPS_MAX_BATCH`); an order-book batch is at most 15.
 */
export const MAX_LOOKUP_IDS = 100;
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
/**
 * Longest text kept per field (characters): the audit log's own limit on a summary is larger; a record keeps the start.
 */
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
  const lookup = readLookup(r.lookup);
  return {
    ...(use ? { use } : {}),
    ...(lookup ? { lookup } : {}),
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
    typeof u.grant === 'string' &&
    u.grant.length > 0 &&
    u.grant.length <= 64 &&
    typeof u.at === 'number' &&
    Number.isFinite(u.at) &&
    typeof u.notional === 'string' &&
    u.notional.length <= 40 &&
    /^\d+(\.\d+)?$/.test(u.notional) &&
    typeof u.seq === 'number' &&
    Number.isSafeInteger(u.seq) &&
    u.seq >= 0;
  return ok
    ? { grant: u.grant as string, at: u.at as number, notional: u.notional as string, seq: u.seq as number }
    : undefined;
}

/** A record's lookup, when it has exactly the shape `JournalLookup` (ids as the venues write them); else none. */
function readLookup(x: unknown): JournalLookup | undefined {
  if (typeof x !== 'object' || x === null) return undefined;
  const l = x as Record<string, unknown>;
  const ids = (y: unknown, re: RegExp): string[] | undefined =>
    Array.isArray(y) &&
    y.length > 0 &&
    y.length <= MAX_LOOKUP_IDS &&
    y.every((i) => typeof i === 'string' && re.test(i))
      ? (y as string[])
      : undefined;
  if (l.venue === 'perps') {
    const o = l.orders;
    const order = (x: unknown): x is PerpsLookupOrder => {
      if (typeof x !== 'object' || x === null) return false;
      const r = x as Record<string, unknown>;
      return (
        typeof r.c === 'string' &&
        /^[0-9a-f]{32}$/.test(r.c) &&
        Number.isSafeInteger(r.iid) &&
        typeof r.buy === 'boolean' &&
        typeof r.qty === 'string' &&
        /^\d{1,30}(\.\d{1,18})?$/.test(r.qty)
      );
    };
    return Array.isArray(o) && o.length > 0 && o.length <= MAX_LOOKUP_IDS && o.every(order)
      ? { venue: 'perps', orders: o.map(({ c, iid, buy, qty }) => ({ c, iid, buy, qty })) }
      : undefined;
  }
  if (l.venue === 'clob') {
    const orderHashes = ids(l.orderHashes, /^0x[0-9a-f]{64}$/);
    return orderHashes ? { venue: 'clob', orderHashes } : undefined;
  }
  return undefined;
}

/**
 * Where the journal's records are kept, one row per record: `load` every row (id → stored value, read
 * through `readRecord`), `put` one, `delete` one. Each throws when storage refuses. Calls take effect in
 * the order they are made, whenever each is answered (IndexedDB orders its transactions so).
 */
export type JournalStore = {
  load: () => Promise<Record<string, unknown>>;
  put: (id: string, record: JournalRecord) => Promise<void>;
  delete: (id: string) => Promise<void>;
};

/** A `JournalStore` on the vault database's `journal` store (relaxed durability: see the module docstring). */
export function idbJournalStore(db: VaultDb): JournalStore {
  return {
    async load() {
      const rows = await db.getAll('journal');
      return Object.fromEntries(rows.flatMap((r) => (typeof r.id === 'string' ? [[r.id, r.record]] : [])));
    },
    async put(id, record) {
      const tx = db.transaction('journal', 'readwrite', RELAXED);
      tx.store.put({ id, record }).catch(() => undefined); // its failure is the transaction's (`done`)
      tx.commit(); // at once: the send waits for this write
      await tx.done;
    },
    async delete(id) {
      const tx = db.transaction('journal', 'readwrite', RELAXED);
      tx.store.delete(id).catch(() => undefined);
      tx.commit();
      await tx.done;
    },
  };
}

/**
 * The journal on `store`. Create it first thing at start: it reads what a stopped worker (or a killed
 * browser) left before its own first write (the store runs its reads and writes in call order). Malformed
 * rows are dropped.
 */
export function durableAuditJournal(store: JournalStore, now: () => number = Date.now): AuditJournal {
  const open = new Map<string, JournalRecord>();
  /** Records stored with their use, until the use is stored elsewhere or the record goes. */
  const carrying = new Set<string>();
  let seq = 0;
  const load = () =>
    store.load().then((raw) => {
      const left: string[] = [];
      for (const [id, x] of Object.entries(raw)) {
        const r = readRecord(x, now());
        if (r && !open.has(id)) {
          open.set(id, r);
          left.push(id);
          if (r.use) carrying.add(id);
        }
      }
      return left;
    });
  let loaded = load();
  loaded.catch(() => undefined); // read again by `leftovers`
  /**
   * Rows the store may still hold though memory no longer does (a delete failed): deleted again with the next write.
   */
  const stale = new Set<string>();
  // Each write starts its IndexedDB transaction at once: the database runs read-write transactions on one
  // store in the order they were created (a record's put before its delete, the start's read before
  // both), so no write waits for the one before it to be answered — the send waits for its own only.
  const remove = (id: string): Promise<void> =>
    store.delete(id).catch((err: unknown) => {
      stale.add(id);
      throw err;
    });
  const write = (id: string): Promise<void> => {
    for (const s of [...stale]) {
      if (open.has(s)) continue;
      stale.delete(s);
      void remove(s).catch(() => undefined);
    }
    const r = open.get(id);
    return r ? store.put(id, r) : remove(id);
  };
  return {
    open(record) {
      const id = `${now()}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;
      if (open.size >= MAX_OPEN)
        return { id, stored: Promise.reject(new JournalError(new Error('too many submissions in flight'))) };
      if (record.use && [...open.values()].filter((r) => r.use).length >= MAX_OPEN_GRANTED) {
        return {
          id,
          stored: Promise.reject(
            new JournalError(new Error('too many submissions under standing permissions in flight')),
          ),
        };
      }
      const kept = readRecord(record, now()) ?? { ...record };
      open.set(id, kept);
      // The send waits for this write: bookkeeping that follows an answer lets it go first (`pressingWrite`).
      const stored = pressingWrite(write(id)).then(
        () => {
          if (open.get(id)?.use) carrying.add(id);
        },
        (err: unknown) => {
          open.delete(id);
          throw new JournalError(err);
        },
      );
      return { id, stored };
    },
    close(id) {
      const r = open.get(id);
      if (r?.use) {
        open.set(id, { ...r, audited: true }); // kept for its use, until `useStored`
        return write(id);
      }
      return open.delete(id) || stale.size ? write(id) : Promise.resolve();
    },
    discard(id) {
      carrying.delete(id);
      return open.delete(id) || stale.size ? write(id) : Promise.resolve();
    },
    carries: (id) => carrying.has(id),
    useStored(id) {
      carrying.delete(id);
      const r = open.get(id);
      if (!r?.use) return Promise.resolve();
      if (r.audited) {
        open.delete(id);
        return write(id);
      }
      const { use: _stored, ...rest } = r;
      open.set(id, rest); // stored with the next change (the store may keep the use meanwhile: merged only if missing)
      return Promise.resolve();
    },
    async leftovers() {
      const ids = await loaded.catch(() => (loaded = load()));
      return ids.flatMap((id) => {
        const record = open.get(id);
        return record ? [{ id, record }] : [];
      });
    },
  };
}
