/**
 * Where the page path keeps its keyed submissions' records ("keyed, never guessed", `./idempotency.ts`):
 * one record per submission key, written *before* the submission is signed (`pending`: in flight) and
 * replaced when it ends — by the venue's answer (`answered`, so a retry gets that answer back and nothing
 * is signed again), by its unknown outcome (no answer: a retry gets the same error), or removed when the
 * venue refused it (the key is free again). A record a stopped worker — or a killed browser — left
 * `pending` is read by the next start as an unknown outcome.
 *
 * The records live in the vault database's `keyed` store (`lib/vault/db.ts` v3): IndexedDB, so they
 * outlive a killed browser, unlike `storage.session`; written with relaxed durability (a power cut may
 * lose the last ones: README "Your orders when the browser dies"). Nothing here is a secret (origins,
 * accounts, client order ids, order hashes, a command's salt and timestamp, the venue's answer), so the
 * records are stored in clear; they are read back through `storedOutcome`'s schema (the disk is not
 * trusted to hold what was written).
 */
import * as v from 'valibot';
import { RELAXED, type VaultDb } from '../vault/db';

/**
 * One stored record: when (Unix ms: the answer, the error, or for `pending` the moment before signing),
 * the command's words for the message (`order`, `withdrawal` …), the reason sentence (unknown outcomes),
 * and the page's lookup `data` (`command`, `coids`, `orderHashes`, `salt`, `ts`, `digest`,
 * `idempotencyKey`). `pending`: about to be signed, not answered when written (read by a later start as
 * an unknown outcome). `answered`: the venue answered; `fingerprint` the request it answered (the parsed
 * params as `stableJson`), `answer` what the page was given (JSON).
 */
export type StoredOutcome = {
  at: number;
  what: string;
  reason: string;
  data: Record<string, string | number | boolean>;
  pending?: true;
  answered?: { fingerprint: string; answer: unknown };
  /**
   * For each client order id's key of the submission, the order that carried it (`stableJson`): a retry of that order
   * in another request shape is refused.
   */
  orders?: Record<string, string>;
};

/**
 * Persistence of the keyed records, by submission key (`origin|account|…`: one per client order id, one per
 * `idempotencyKey`).
 */
export type OutcomeStore = {
  /**
   * Every stored record written at or after `since` (Unix ms; malformed ones read as none). Throws when storage cannot
   * be read.
   */
  load: (since: number) => Promise<Record<string, StoredOutcome>>;
  /**
   * Writes `records` (each replaces its key's record) in one transaction; throws when storage refuses.
   * Writes and removals take effect in the order they are called.
   */
  put: (records: Record<string, StoredOutcome>) => Promise<void>;
  /** Removes the records of `keys` in one transaction; throws when storage refuses. */
  remove: (keys: readonly string[]) => Promise<void>;
  /** Removes every record written before `before` (Unix ms). */
  prune: (before: number) => Promise<void>;
};

/**
 * Longest answer kept with a record (characters of its JSON): a longer one is kept as an unknown outcome's lookup only.
 */
export const MAX_ANSWER_CHARS = 64_000;

const storedOutcome = v.object({
  at: v.pipe(v.number(), v.finite()),
  what: v.pipe(v.string(), v.maxLength(64)),
  reason: v.pipe(v.string(), v.maxLength(200)),
  data: v.record(
    v.pipe(v.string(), v.maxLength(64)),
    v.union([v.pipe(v.string(), v.maxLength(4_000)), v.number(), v.boolean()]),
  ),
  pending: v.optional(v.literal(true)),
  answered: v.optional(
    v.object({ fingerprint: v.pipe(v.string(), v.maxLength(MAX_ANSWER_CHARS)), answer: v.unknown() }),
  ),
  orders: v.optional(v.record(v.pipe(v.string(), v.maxLength(400)), v.pipe(v.string(), v.maxLength(4_000)))),
});

/** A row that holds no record of its own: the record is the one stored under `ref` (a batch's other keys). */
const refRow = v.object({ ref: v.pipe(v.string(), v.maxLength(400)) });

/** `x` as a stored record when it has the record's shape, else undefined. */
export function readOutcome(x: unknown): StoredOutcome | undefined {
  const r = v.safeParse(storedOutcome, x);
  if (!r.success) return undefined;
  const { pending, answered, orders, ...rest } = r.output;
  return { ...rest, ...(pending ? { pending } : {}), ...(answered ? { answered } : {}), ...(orders ? { orders } : {}) };
}

/**
 * The key prefix of a row holding a record several keys share (submission keys start with an origin, never with it).
 */
const SHARED = '#';
/** The reason of a key whose shared record could not be read back. */
const REF_LOST = 'Countersign cannot read what became of this submission; look it up';

/** An `OutcomeStore` on the vault database's `keyed` store (see the module docstring). */
export function idbOutcomeStore(db: VaultDb): OutcomeStore {
  return {
    async load(since) {
      const rows = await db.getAllFromIndex('keyed', 'byAt', IDBKeyRange.lowerBound(since));
      const out: Record<string, StoredOutcome> = {};
      const refs: [string, string][] = [];
      for (const row of rows) {
        if (typeof row.key !== 'string') continue;
        const ref = v.safeParse(refRow, row.value);
        if (ref.success) refs.push([row.key, ref.output.ref]);
        const r = readOutcome(row.value);
        if (r) out[row.key] = r;
      }
      // A key whose record is gone (damaged, or pruned apart) reads as an unknown outcome: never as none.
      for (const [key, ref] of refs)
        out[key] = out[ref] ?? { at: Date.now(), what: 'submission', reason: REF_LOST, data: {} };
      for (const key of Object.keys(out)) if (key.startsWith(SHARED)) delete out[key];
      return out;
    },
    async put(records) {
      const tx = db.transaction('keyed', 'readwrite', RELAXED);
      // One record shared by several keys (a batch's client order ids, its idempotencyKey) is stored once,
      // under a row of its own that no key can overwrite; each key refers to it.
      const sharing = new Map<StoredOutcome, number>();
      for (const value of Object.values(records)) sharing.set(value, (sharing.get(value) ?? 0) + 1);
      const rows = new Map<StoredOutcome, string>();
      for (const [value, n] of sharing) {
        if (n < 2) continue;
        const row = `${SHARED}${crypto.randomUUID()}`;
        rows.set(value, row);
        // its failure is the transaction's (`done`)
        tx.store.put({ key: row, at: value.at, value }).catch(() => undefined);
      }
      for (const [key, value] of Object.entries(records)) {
        const row = rows.get(value);
        tx.store.put({ key, at: value.at, value: row === undefined ? value : { ref: row } }).catch(() => undefined);
      }
      tx.commit(); // at once: the signature waits for this write
      await tx.done;
    },
    async remove(keys) {
      if (!keys.length) return;
      const tx = db.transaction('keyed', 'readwrite', RELAXED);
      for (const key of keys) tx.store.delete(key).catch(() => undefined);
      tx.commit();
      await tx.done;
    },
    async prune(before) {
      const tx = db.transaction('keyed', 'readwrite', RELAXED);
      for (
        let c = await tx.store.index('byAt').openCursor(IDBKeyRange.upperBound(before, true));
        c;
        c = await c.continue()
      )
        await c.delete();
      await tx.done;
    },
  };
}
