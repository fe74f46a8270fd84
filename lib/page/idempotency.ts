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
 * - unknown outcome: after an outcome was unknown (no answer, or none in time), any request with one of
 *   its keys within `UNKNOWN_OUTCOME_MS` gets that same error (-32002) instead of a submission (the venue
 *   may hold the ids already);
 * - in flight: a keyed submission is stored as in flight before it is signed (`outcomes.ts`), so a
 *   worker that stops meanwhile leaves that unknown outcome to the next one.
 *
 * A request without a key is a new submission every time (a trader may want two identical orders) and
 * writes nothing.
 */
import * as v from 'valibot';
import { resourceUnavailable, invalidParams } from '../errors/rpc';
import { OutcomeUnknownError } from '../signer/service';
import type { SigningArtifact } from '../signer/artifact';
import type { OutcomeStore, StoredOutcome } from './outcomes';
import type { ClobOrdersParams, PerpsParams } from './params';

/** How long a keyed submission with an unknown outcome answers repeats with that outcome (ms): 10 min. */
const UNKNOWN_OUTCOME_MS = 10 * 60_000;
/** Unknown outcomes kept per origin, one per key (the oldest go first); also the cap of keys in flight per origin. */
const MAX_UNKNOWN_PER_ORIGIN = 200;
/** The reason of an unknown outcome read from an in-flight record a stopped worker left behind. */
const STOPPED_IN_FLIGHT = 'Countersign stopped while this was being sent';
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
  /** Keyed submissions whose outcome is unknown (no answer), by key, for `UNKNOWN_OUTCOME_MS`; kept in the `OutcomeStore` too. */
  private readonly unknownOutcomes = new Map<string, StoredOutcome>();
  /** Keyed submissions of this worker being signed and sent (no answer yet), by key; stored with `pending` so a restarted worker knows them. */
  private readonly inFlight = new Map<string, StoredOutcome>();
  /** The stored unknown outcomes, read once per worker (again after a failed read). */
  private loadingOutcomes: Promise<void> | undefined;
  /** The last write of the `OutcomeStore` (writes run one after another, each with the records as they are then). */
  private saving: Promise<void> = Promise.resolve();

  /**
   * Starts reading the stored outcomes at once (a worker that starts must know what a stopped one left
   * in flight before anything else can change the store); a failed read is retried by the next keyed request.
   * `store` absent: outcomes are kept in memory only.
   */
  constructor(private readonly store: OutcomeStore | undefined) {
    void this.loadOutcomes().catch(() => undefined);
  }

  /**
   * Runs `submit` as the submission keyed `sk` (`request`: the parsed params, the identity a repeat
   * must match to join): joins the same request pending under one of its keys, refuses another
   * (-32602), answers a recent unknown outcome of one of its keys with that error (-32002, nothing
   * sent), and otherwise submits, recording the keys in flight right before the signature
   * (`beforeSign`). Unkeyed (`sk` undefined): `submit` runs as it is.
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
    let record: StoredOutcome | undefined;
    const beforeSign: BeforeSign = async (artifact) => {
      const { what, data } = inFlightLookup(artifact);
      const mine: StoredOutcome = { at: Date.now(), what, reason: STOPPED_IN_FLIGHT, data: pageKey === undefined ? data : { ...data, idempotencyKey: pageKey } };
      await this.markInFlight(keys, mine);
      record = mine;
    };
    const run = this.loadOutcomes().then(() => {
      const now = Date.now();
      const unknown = keys.map((k) => this.unknownOutcomes.get(k)).find((o) => o !== undefined && now - o.at < UNKNOWN_OUTCOME_MS);
      if (unknown) {
        replayed = true;
        throw new OutcomeUnknownError(unknown.what, undefined, unknown.data, unknown.reason);
      }
      return submit(beforeSign);
    });
    const entry = { request: fingerprint, run };
    for (const k of keys) this.running.set(k, entry);
    try {
      const result = await run;
      if (record) await this.settleInFlight(keys, record);
      return result;
    } catch (err) {
      // Only a signed submission without an answer: a read that failed before signing sent nothing.
      if (err instanceof OutcomeUnknownError) {
        const e = pageKey === undefined || replayed ? err : err.withData({ idempotencyKey: pageKey });
        if (!replayed) await this.rememberUnknown(keys, e, record);
        throw e;
      }
      // Answered (the venue's refusal), or refused before anything was sent.
      if (record) await this.settleInFlight(keys, record);
      throw err;
    } finally {
      for (const k of keys) if (this.running.get(k) === entry) this.running.delete(k);
    }
  }

  /**
   * Reads the stored unknown outcomes once (a restarted worker must know them before it submits
   * anything keyed); an in-flight record left by a stopped worker is read as an unknown outcome. A
   * failed read throws -32002 and sends nothing; the next keyed request reads again.
   */
  private loadOutcomes(): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    this.loadingOutcomes ??= store.load().then(
      (saved) => {
        for (const [k, o] of Object.entries(saved)) {
          if (this.unknownOutcomes.has(k) || this.inFlight.has(k) || Date.now() - o.at >= UNKNOWN_OUTCOME_MS) continue;
          this.unknownOutcomes.set(k, { at: o.at, what: o.what, reason: o.reason, data: o.data });
        }
      },
      () => {
        this.loadingOutcomes = undefined;
        throw resourceUnavailable('Countersign could not read its record of earlier submissions, so nothing was sent; try again.');
      },
    );
    return this.loadingOutcomes;
  }

  /** Writes the unknown outcomes and the in-flight records (marked `pending`) to the store, after any earlier write; throws when storage does. */
  private persist(): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    const run = this.saving.then(() => {
      const all: Record<string, StoredOutcome> = Object.fromEntries(this.unknownOutcomes);
      for (const [k, o] of this.inFlight) all[k] = { ...o, pending: true };
      return store.save(all);
    });
    this.saving = run.catch(() => undefined);
    return run;
  }

  /**
   * Records `keys` as in flight (the record a restarted worker reads as the unknown outcome `record`)
   * and stores it before anything is signed. Throws -32002 without `data.command` (nothing was sent)
   * when the origin already has `MAX_UNKNOWN_PER_ORIGIN` keys in flight or the write fails.
   */
  private async markInFlight(keys: string[], record: StoredOutcome): Promise<void> {
    const origin = originOfKey(keys[0] ?? '');
    const mine = [...this.inFlight.keys()].filter((k) => originOfKey(k) === origin).length;
    if (mine + keys.length > MAX_UNKNOWN_PER_ORIGIN) throw resourceUnavailable('This site has too many keyed submissions waiting for an answer, so nothing was sent; try again when they are answered.');
    for (const k of keys) this.inFlight.set(k, record);
    try {
      await this.persist();
    } catch {
      for (const k of keys) if (this.inFlight.get(k) === record) this.inFlight.delete(k);
      throw resourceUnavailable('Countersign could not record this submission before signing it, so nothing was sent; try again.');
    }
  }

  /** Drops the in-flight records of `keys` (the venue answered) and stores the rest (best effort: a leftover record only answers repeats with an unknown outcome). */
  private async settleInFlight(keys: string[], record: StoredOutcome): Promise<void> {
    for (const k of keys) if (this.inFlight.get(k) === record) this.inFlight.delete(k);
    await this.persist().catch(() => undefined);
  }

  /**
   * Records an unknown outcome under each of `keys` (replacing their in-flight record) and stores the
   * records (best effort: the page gets the error either way); expired ones are dropped and each origin
   * keeps its newest `MAX_UNKNOWN_PER_ORIGIN` (one site never evicts another's).
   */
  private async rememberUnknown(keys: string[], error: OutcomeUnknownError, record?: StoredOutcome): Promise<void> {
    const now = Date.now();
    for (const [k, o] of this.unknownOutcomes) if (now - o.at >= UNKNOWN_OUTCOME_MS) this.unknownOutcomes.delete(k);
    for (const k of keys) {
      this.unknownOutcomes.delete(k);
      if (record && this.inFlight.get(k) === record) this.inFlight.delete(k);
    }
    const origin = originOfKey(keys[0] ?? '');
    const mine = [...this.unknownOutcomes.keys()].filter((k) => originOfKey(k) === origin);
    for (const k of mine.slice(0, Math.max(0, mine.length + keys.length - MAX_UNKNOWN_PER_ORIGIN))) this.unknownOutcomes.delete(k);
    const outcome: StoredOutcome = { at: now, what: error.what, reason: error.reason, data: { ...error.data } };
    for (const k of keys) this.unknownOutcomes.set(k, outcome);
    await this.persist().catch(() => undefined);
  }
}
