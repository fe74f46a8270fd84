/**
 * Where the page path keeps the unknown outcomes of keyed submissions ("keyed, never
 * guessed"): a submission that was signed and sent and got no (usable) answer answers every repeat with
 * the same key for `UNKNOWN_OUTCOME_MS` with that same error, and sends nothing. An MV3 service worker
 * stops after 30 s idle, so the records cannot live in memory only: they are kept in `storage.session`
 * (readable by extension contexts only — `TRUSTED_CONTEXTS`, set in `lib/background/compose.ts`; gone
 * when the browser closes, which outlives any 10-minute window a page could still be retrying in).
 * Nothing here is a secret: origins, client order ids, order hashes, a command's salt and timestamp.
 *
 * A keyed submission is also written here *before* it is signed, marked `pending` (in flight), and
 * removed when the venue answers (accepted or refused) or turned into its unknown outcome when no
 * answer came: a worker that stops while the submission is in flight leaves the record behind, and the
 * next worker reads it as an unknown outcome.
 */
import * as v from 'valibot';

/**
 * One stored outcome: when (Unix ms: the error, or for `pending` the moment before signing), the
 * command's words for the message (`order`, `withdrawal` …), the reason sentence, and the page's
 * `data` (`command`, `coids`, `orderHashes`, `salt`, `ts`, `digest`, `idempotencyKey`). `pending`: the
 * submission was about to be signed and had not been answered when the record was written (a worker
 * that loads it answers repeats with the unknown outcome).
 */
export type StoredOutcome = { at: number; what: string; reason: string; data: Record<string, string | number | boolean>; pending?: true };

/** Persistence of the unknown (and in-flight) outcomes, by submission key (`origin|account|…`: one per client order id, one per `idempotencyKey`). */
export type OutcomeStore = {
  /** Every stored record (an unreadable or malformed store reads as none of its bad entries). Throws when storage cannot be read. */
  load: () => Promise<Record<string, StoredOutcome>>;
  /** Replaces the stored records with `all`. */
  save: (all: Record<string, StoredOutcome>) => Promise<void>;
};

/** `storage.session` key of the unknown outcomes. */
export const OUTCOMES_KEY = 'providerUnknownOutcomes';

const storedOutcome = v.object({
  at: v.number(),
  what: v.pipe(v.string(), v.maxLength(64)),
  reason: v.pipe(v.string(), v.maxLength(200)),
  data: v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
  pending: v.optional(v.literal(true)),
});

/** The part of `browser.storage.session` the store uses. */
type SessionArea = { get: (key: string) => Promise<Record<string, unknown>>; set: (items: Record<string, unknown>) => Promise<void> };

/** An `OutcomeStore` on `storage.session` under `OUTCOMES_KEY`; entries of another shape are dropped on load. */
export function sessionOutcomeStore(area: SessionArea): OutcomeStore {
  return {
    load: async () => {
      const raw = (await area.get(OUTCOMES_KEY))[OUTCOMES_KEY];
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
      const out: Record<string, StoredOutcome> = {};
      for (const [k, x] of Object.entries(raw)) {
        const r = v.safeParse(storedOutcome, x);
        if (r.success) out[k] = r.output;
      }
      return out;
    },
    save: (all) => area.set({ [OUTCOMES_KEY]: all }),
  };
}

/**
 * `store` whose first `load` answers with a read started right now (call it first thing at worker
 * start): what a stopped worker left in flight is read before this worker can change the store. Later
 * `load`s, and the first one when that early read failed, read the store again; `save` is `store.save`.
 */
export function loadedAtStart(store: OutcomeStore): OutcomeStore {
  let early: Promise<Record<string, StoredOutcome>> | undefined = store.load();
  early.catch(() => undefined);
  return {
    load: () => {
      const first = early;
      early = undefined;
      return first ?? store.load();
    },
    save: (all) => store.save(all),
  };
}
