/**
 * Idempotent submissions, "keyed, never guessed": a `perps_sendCommand` is keyed by each client order id
 * (`c`) of its createOrders and by its `idempotencyKey`, a `clob_postOrders` by its `idempotencyKey`
 * (`perpsSubmissionKeys`, `clobSubmissionKeys`; every key also names the origin and the account). Each
 * key counts on its own: adding a key, or batching a client order id with new ones, never makes a
 * request new.
 *
 * - join: while a submission holding any of its keys is pending or in flight, the very same request
 *   joins it (same result, no second window, nothing sent twice) and any other is refused (-32602),
 *   never answered with the other's outcome;
 * - answered: once the venue answered, the very same request with one of its keys within
 *   `KEYED_RECORD_MS` gets that answer again (nothing signed or sent); another request under the same
 *   `idempotencyKey` is refused (-32602), while another order carrying an answered client order id goes
 *   on (the venue lets an id go once its order is filled or cancelled, and judges reuse itself). A
 *   venue's refusal frees the keys;
 * - unknown outcome: after an outcome was unknown (no answer, or none in time), any request with one of
 *   its keys within `KEYED_RECORD_MS` gets that same error (-32002) instead of a submission (the venue
 *   may hold the ids already);
 * - in flight: a keyed submission is stored as in flight before it is signed (`outcomes.ts`, IndexedDB),
 *   so a worker that stops — or a browser that is killed — meanwhile leaves that unknown outcome to the
 *   next start.
 *
 * A request without a key is a new submission every time (a trader may want two identical orders) and
 * writes nothing.
 */
import * as v from 'valibot';
import { resourceUnavailable, invalidParams } from '../errors/rpc';
import { OutcomeUnknownError } from '../signer/service';
import type { SigningArtifact } from '../signer/artifact';
import { MAX_ANSWER_CHARS, type OutcomeStore, type StoredOutcome } from './outcomes';
import type { ClobOrdersParams, PerpsParams } from './params';

/**
 * How long a keyed submission's record answers repeats (ms): 24 h — its answer, or its unknown outcome.
 * A page that lost its answer, or a browser that died and came back, retries well within it.
 */
export const KEYED_RECORD_MS = 24 * 3_600_000;
/** Records kept per origin, one per key (the oldest of that origin go first: one site never evicts another's). */
const MAX_KEYED_PER_ORIGIN = 2_000;
/** Keys one origin may have in flight (signed or about to be, no answer yet). */
const MAX_IN_FLIGHT_PER_ORIGIN = 200;
/** The reason of an unknown outcome read from an in-flight record a stopped worker (or a killed browser) left behind. */
const STOPPED_IN_FLIGHT = 'Countersign stopped while this was being sent';
/** The reason given to a repeat of a submission the venue answered with more than `MAX_ANSWER_CHARS` to keep. */
const ANSWER_NOT_KEPT = 'The venue answered this earlier; look it up';
/** The client order ids (`c`) of a createOrders op (the command's own checks run when it is built, before anything is signed). */
const coidsOfOp = v.object({ type: v.literal('createOrders'), args: v.array(v.looseObject({ c: v.optional(v.string()) })) });

/**
 * A keyed submission: its keys (`origin|account|venue-kind|id`, one per client order id and one for the
 * page's `idempotencyKey`, each checked and recorded on its own) and the page's own `idempotencyKey`.
 */
export type SubmissionKeys = { keys: string[]; pageKey?: string };

/** Called right before a keyed submission's artifact is signed (writes its in-flight record); a throw signs nothing. */
export type BeforeSign = (artifact: SigningArtifact) => Promise<void>;

/**
 * The keys of a `perps_sendCommand`: `origin|account|perps-key|key` when the page named an
 * `idempotencyKey` (any command), and `origin|account|perps-coid|c` for each client order id of a
 * createOrders (orders without `c` add none). Undefined when it has neither (an unkeyed submission).
 */
export function perpsSubmissionKeys(origin: string, account: string, p: PerpsParams): SubmissionKeys | undefined {
  const prefix = `${origin}|${account.toLowerCase()}`;
  const ids = v.safeParse(coidsOfOp, p.op);
  const coids = ids.success ? [...new Set(ids.output.args.flatMap((o) => (o.c === undefined ? [] : [o.c])))] : [];
  const keys = [...(p.idempotencyKey === undefined ? [] : [`${prefix}|perps-key|${p.idempotencyKey}`]), ...coids.map((c) => `${prefix}|perps-coid|${c}`)];
  if (!keys.length) return undefined;
  return p.idempotencyKey === undefined ? { keys } : { keys, pageKey: p.idempotencyKey };
}

/** The key of a `clob_postOrders` (`origin|account|clob|idempotencyKey`), when the page named one. */
export function clobSubmissionKeys(origin: string, account: string, p: ClobOrdersParams): SubmissionKeys | undefined {
  return p.idempotencyKey === undefined ? undefined : { keys: [`${origin}|${account.toLowerCase()}|clob|${p.idempotencyKey}`], pageKey: p.idempotencyKey };
}

/** The origin a submission key belongs to (its text up to the first `|`; origins hold none). */
const originOfKey = (key: string) => key.slice(0, key.indexOf('|'));
/** What a submission key names: `perps-key` / `clob` (the page's `idempotencyKey`) or `perps-coid` (a client order id). */
const kindOfKey = (key: string) => key.split('|', 3)[2];

/**
 * What the page could look `artifact` up by if its answer never came, and the words for the message
 * (the same `data` the signing service's `OutcomeUnknownError` carries): perps `command`, `coids`,
 * `salt`, `ts`, `digest`; order book `command: 'postOrders'` and `orderHashes` (the digests signed).
 */
function inFlightLookup(artifact: SigningArtifact): { what: string; data: Record<string, string | number | boolean> } {
  if (artifact.kind === 'perps') {
    const { op, salt, ts } = artifact.envelope;
    const coids = op.type === 'createOrders' ? op.args.flatMap((o) => (o.c === undefined ? [] : [o.c])) : [];
    const what = op.type === 'withdraw' ? 'withdrawal' : op.type === 'internalTransfer' ? 'transfer' : op.type;
    return { what, data: { command: op.type, ...(coids.length ? { coids: coids.join(',') } : {}), salt, ts, digest: artifact.signDigests.join(',') } };
  }
  if (artifact.kind === 'clob') return { what: 'order', data: { command: 'postOrders', orderHashes: artifact.signDigests.join(',') } };
  return { what: 'request', data: { command: artifact.kind } };
}

/** The keyed submissions of the page path (see the module docstring); one per `ProviderService`. */
export class Submissions {
  /** Keyed submissions still running (approval pending or in flight), by each of their keys: the request (JSON) and its outcome. */
  private readonly running = new Map<string, { request: string; run: Promise<unknown> }>();
  /** Every keyed record this worker knows (read once from the store, then kept in step with its writes), by key. */
  private readonly records = new Map<string, StoredOutcome>();
  /** The keys of `records` per origin, oldest first (a key written again moves last). */
  private readonly byOrigin = new Map<string, Set<string>>();
  /** Keys in flight in this worker (signed or about to be, no answer yet), per origin. */
  private readonly inFlight = new Map<string, number>();
  /** The stored records, read once per worker (again after a failed read). */
  private loading: Promise<void> | undefined;
  /** The last write of the `OutcomeStore` (writes run one after another, in call order). */
  private saving: Promise<void> = Promise.resolve();

  /**
   * Starts reading the stored records at once (a worker that starts must know what a stopped one left in
   * flight before anything else can change the store); a failed read is retried by the next keyed
   * request. `store` absent: records are kept in memory only. `now` Unix ms.
   */
  constructor(
    private readonly store: OutcomeStore | undefined,
    private readonly now: () => number = Date.now,
  ) {
    void this.load().catch(() => undefined);
  }

  /**
   * Runs `submit` as the submission keyed `sk` (`request`: the parsed params, the identity a repeat
   * must match): joins the same request pending under one of its keys, refuses another (-32602); within
   * `KEYED_RECORD_MS` of an earlier submission under one of its keys, gives the same request that
   * submission's answer, refuses another (-32602), or throws its unknown outcome (-32002) — nothing sent;
   * otherwise submits, recording the keys in flight right before the signature (`beforeSign`) and then
   * the answer. Unkeyed (`sk` undefined): `submit` runs as it is.
   */
  async keyed(sk: SubmissionKeys | undefined, request: unknown, submit: (beforeSign?: BeforeSign) => Promise<unknown>): Promise<unknown> {
    if (sk === undefined) return submit();
    const { keys, pageKey } = sk;
    const fingerprint = JSON.stringify(request ?? null);
    const joined = new Set(keys.flatMap((k) => this.running.get(k) ?? []));
    if (joined.size) {
      const [other] = joined;
      if (joined.size === 1 && other?.request === fingerprint) return other.run;
      throw invalidParams('Another request with these client order ids (or this idempotencyKey) is still pending; use new ids for a different order.');
    }
    let replayed = false;
    let mine: StoredOutcome | undefined;
    const beforeSign: BeforeSign = async (artifact) => {
      const { what, data } = inFlightLookup(artifact);
      const record: StoredOutcome = { at: this.now(), what, reason: STOPPED_IN_FLIGHT, data: pageKey === undefined ? data : { ...data, idempotencyKey: pageKey }, pending: true };
      await this.markInFlight(keys, record);
      mine = record;
    };
    const run = this.load().then(() => {
      const prior = this.prior(keys, fingerprint);
      if (prior === undefined) return submit(beforeSign);
      replayed = true;
      if (!prior.answered) throw new OutcomeUnknownError(prior.what, undefined, prior.data, prior.reason);
      if (prior.answered.fingerprint === fingerprint) return prior.answered.answer;
      throw invalidParams('This idempotencyKey belongs to an earlier request the venue answered; use a new key for a different request.');
    });
    const entry = { request: fingerprint, run };
    for (const k of keys) this.running.set(k, entry);
    try {
      const result = await run;
      if (mine) this.answered(keys, mine, fingerprint, result);
      return result;
    } catch (err) {
      // Only a signed submission without an answer: a read that failed before signing sent nothing.
      if (err instanceof OutcomeUnknownError) {
        const e = pageKey === undefined || replayed ? err : err.withData({ idempotencyKey: pageKey });
        if (!replayed) await this.rememberUnknown(keys, e, mine);
        throw e;
      }
      // Refused by the venue, or before anything was sent: the keys are free again.
      if (mine) await this.release(keys, mine);
      throw err;
    } finally {
      if (mine) this.inFlight.set(originOfKey(keys[0] ?? ''), Math.max(0, (this.inFlight.get(originOfKey(keys[0] ?? '')) ?? 0) - keys.length));
      for (const k of keys) if (this.running.get(k) === entry) this.running.delete(k);
    }
  }

  /**
   * The record that answers a request (`fingerprint`) carrying `keys`, within `KEYED_RECORD_MS`: an
   * unknown outcome (or one a stopped worker left in flight) first; then an answer to this very request;
   * then an answer to another request under the page's `idempotencyKey` (refused). An answered client
   * order id answers only its own request: a different order may carry an id the venue let go (filled
   * or cancelled; the venue judges it). Undefined when none.
   */
  private prior(keys: readonly string[], fingerprint: string): StoredOutcome | undefined {
    const since = this.now() - KEYED_RECORD_MS;
    const found = keys.flatMap((k) => {
      const r = this.records.get(k);
      return r && r.at >= since ? [{ k, r }] : [];
    });
    return (
      found.find(({ r }) => !r.answered)?.r ??
      found.find(({ r }) => r.answered?.fingerprint === fingerprint)?.r ??
      found.find(({ k }) => kindOfKey(k) !== 'perps-coid')?.r
    );
  }

  /**
   * Reads the stored records once (a restarted worker must know them before it submits anything keyed)
   * and drops the expired ones from the store. A failed read throws -32002 and sends nothing; the next
   * keyed request reads again.
   */
  private load(): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    this.loading ??= store.load(this.now() - KEYED_RECORD_MS).then(
      (saved) => {
        for (const [k, o] of Object.entries(saved).sort(([, a], [, b]) => a.at - b.at)) if (!this.records.has(k)) this.keep(k, o);
        void store.prune(this.now() - KEYED_RECORD_MS).catch(() => undefined);
      },
      () => {
        this.loading = undefined;
        throw resourceUnavailable('Countersign could not read its record of earlier submissions, so nothing was sent; try again.');
      },
    );
    return this.loading;
  }

  /** Holds `record` under `key` in memory (moved last in its origin); returns the keys its origin must now drop (over `MAX_KEYED_PER_ORIGIN`). */
  private keep(key: string, record: StoredOutcome): string[] {
    this.records.set(key, record);
    const origin = originOfKey(key);
    const mine = this.byOrigin.get(origin) ?? new Set<string>();
    mine.delete(key);
    mine.add(key);
    this.byOrigin.set(origin, mine);
    const evicted: string[] = [];
    for (const k of mine) {
      if (mine.size <= MAX_KEYED_PER_ORIGIN) break;
      if (this.running.has(k)) continue;
      mine.delete(k);
      this.records.delete(k);
      evicted.push(k);
    }
    return evicted;
  }

  /** Forgets `key` in memory. */
  private drop(key: string): void {
    this.records.delete(key);
    this.byOrigin.get(originOfKey(key))?.delete(key);
  }

  /** Runs `write` after every earlier write of this worker (in call order); its own failure is the caller's. */
  private write(write: (store: OutcomeStore) => Promise<void>): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    const run = this.saving.then(() => write(store));
    this.saving = run.catch(() => undefined);
    return run;
  }

  /**
   * Records `keys` as in flight (the record a later start reads as the unknown outcome `record`) and
   * stores it before anything is signed. Throws -32002 without `data.command` (nothing was sent) when
   * the origin already has `MAX_IN_FLIGHT_PER_ORIGIN` keys in flight or the write fails.
   */
  private async markInFlight(keys: string[], record: StoredOutcome): Promise<void> {
    const origin = originOfKey(keys[0] ?? '');
    const flying = this.inFlight.get(origin) ?? 0;
    if (flying + keys.length > MAX_IN_FLIGHT_PER_ORIGIN) throw resourceUnavailable('This site has too many keyed submissions waiting for an answer, so nothing was sent; try again when they are answered.');
    const before = keys.map((k) => this.records.get(k));
    const evicted = keys.flatMap((k) => this.keep(k, record));
    this.inFlight.set(origin, flying + keys.length);
    try {
      await this.write(async (s) => {
        await s.put(Object.fromEntries(keys.map((k) => [k, record])));
        if (evicted.length) await s.remove(evicted);
      });
    } catch {
      this.inFlight.set(origin, flying);
      keys.forEach((k, i) => {
        const was = before[i];
        if (this.records.get(k) !== record) return;
        if (was) this.keep(k, was);
        else this.drop(k);
      });
      throw resourceUnavailable('Countersign could not record this submission before signing it, so nothing was sent; try again.');
    }
  }

  /**
   * The venue answered the submission `mine` under `keys`: its record becomes the answer (`fingerprint`,
   * `answer`), stored behind the answer (best effort: a record left in flight only makes a repeat hear
   * "unknown — look it up"). An answer too long to keep is kept as an unknown outcome's lookup.
   */
  private answered(keys: string[], mine: StoredOutcome, fingerprint: string, answer: unknown): void {
    const { pending: _pending, ...rest } = mine;
    let size = Infinity;
    try {
      size = JSON.stringify(answer ?? null).length + fingerprint.length;
    } catch {
      /* not JSON: not kept */
    }
    const record: StoredOutcome = size <= MAX_ANSWER_CHARS ? { ...rest, at: this.now(), reason: '', answered: { fingerprint, answer } } : { ...rest, at: this.now(), reason: ANSWER_NOT_KEPT };
    const evicted = keys.flatMap((k) => (this.records.get(k) === mine ? this.keep(k, record) : []));
    void this.write(async (s) => {
      await s.put(Object.fromEntries(keys.map((k) => [k, record])));
      if (evicted.length) await s.remove(evicted);
    }).catch(() => undefined);
  }

  /** The venue refused the submission `mine` (or it was refused before the send): its keys are free again (stored best effort). */
  private async release(keys: string[], mine: StoredOutcome): Promise<void> {
    const mineKeys = keys.filter((k) => this.records.get(k) === mine);
    for (const k of mineKeys) this.drop(k);
    await this.write((s) => s.remove(mineKeys)).catch(() => undefined);
  }

  /**
   * Records an unknown outcome under each of `keys` (replacing their in-flight record) and stores the
   * records (best effort: the page gets the error either way); each origin keeps its newest
   * `MAX_KEYED_PER_ORIGIN` (one site never evicts another's).
   */
  private async rememberUnknown(keys: string[], error: OutcomeUnknownError, mine?: StoredOutcome): Promise<void> {
    const outcome: StoredOutcome = { at: mine?.at ?? this.now(), what: error.what, reason: error.reason, data: { ...error.data } };
    const evicted = keys.flatMap((k) => this.keep(k, outcome));
    await this.write(async (s) => {
      await s.put(Object.fromEntries(keys.map((k) => [k, outcome])));
      if (evicted.length) await s.remove(evicted);
    }).catch(() => undefined);
  }
}
