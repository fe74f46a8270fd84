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
/**
 * Records one origin may hold within `KEYED_RECORD_MS`, one per key: past it a new keyed submission of
 * that origin is refused (-32002, nothing sent) until older records expire — a record is never evicted
 * early (its retry would be signed again), and one site never touches another's.
 */
const MAX_KEYED_PER_ORIGIN = 20_000;
/** Keys one origin may have in flight (signed or about to be, no answer yet). */
const MAX_IN_FLIGHT_PER_ORIGIN = 200;
/**
 * The reason of an unknown outcome read from an in-flight record a stopped worker (or a killed browser) left behind.
 */
const STOPPED_IN_FLIGHT = 'Countersign stopped while this was being sent';
/** The reason given to a repeat of a submission the venue answered with more than `MAX_ANSWER_CHARS` to keep. */
const ANSWER_NOT_KEPT = 'The venue answered this earlier; look it up';
/**
 * The client order ids (`c`) of a createOrders op (the command's own checks run when it is built, before anything is
 * signed).
 */
const coidsOfOp = v.object({
  type: v.literal('createOrders'),
  args: v.array(v.looseObject({ c: v.optional(v.string()) })),
});

/** JSON of `x` with every object's keys sorted: the same value whatever order a page wrote its fields in. */
export function stableJson(x: unknown): string {
  return JSON.stringify(x ?? null, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(
          Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : val,
  );
}

/**
 * A keyed submission: its keys (`origin|account|venue-kind|id`, one per client order id and one for the
 * page's `idempotencyKey`, each checked and recorded on its own), the page's own `idempotencyKey`, and for
 * each client order id's key the order carrying it (`stableJson` of the order as the page sent it).
 */
export type SubmissionKeys = { keys: string[]; pageKey?: string; orders?: Record<string, string> };

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
  const args = ids.success ? ids.output.args : [];
  const coids = [...new Set(args.flatMap((o) => (o.c === undefined ? [] : [o.c])))];
  const keys = [
    ...(p.idempotencyKey === undefined ? [] : [`${prefix}|perps-key|${p.idempotencyKey}`]),
    ...coids.map((c) => `${prefix}|perps-coid|${c}`),
  ];
  if (!keys.length) return undefined;
  const orders = Object.fromEntries(
    coids.map((c) => [`${prefix}|perps-coid|${c}`, stableJson(args.filter((o) => o.c === c))]),
  );
  return { keys, orders, ...(p.idempotencyKey === undefined ? {} : { pageKey: p.idempotencyKey }) };
}

/** The key of a `clob_postOrders` (`origin|account|clob|idempotencyKey`), when the page named one. */
export function clobSubmissionKeys(origin: string, account: string, p: ClobOrdersParams): SubmissionKeys | undefined {
  return p.idempotencyKey === undefined
    ? undefined
    : { keys: [`${origin}|${account.toLowerCase()}|clob|${p.idempotencyKey}`], pageKey: p.idempotencyKey };
}

/** The origin a submission key belongs to (its text up to the first `|`; origins hold none). */
const originOfKey = (key: string) => key.slice(0, key.indexOf('|'));
/**
 * What a submission key names: `perps-key` / `clob` (the page's `idempotencyKey`) or `perps-coid` (a client order id).
 */
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
    return {
      what,
      data: {
        command: op.type,
        ...(coids.length ? { coids: coids.join(',') } : {}),
        salt,
        ts,
        digest: artifact.signDigests.join(','),
      },
    };
  }
  if (artifact.kind === 'clob')
    return { what: 'order', data: { command: 'postOrders', orderHashes: artifact.signDigests.join(',') } };
  return { what: 'request', data: { command: artifact.kind } };
}

/** The keyed submissions of the page path (see the module docstring); one per `ProviderService`. */
export class Submissions {
  /**
   * Keyed submissions still running (approval pending or in flight), by each of their keys: the request (JSON) and its
   * outcome.
   */
  private readonly running = new Map<string, { request: string; run: Promise<unknown> }>();
  /** Every keyed record this worker knows (read once from the store, then kept in step with its writes), by key. */
  private readonly records = new Map<string, StoredOutcome>();
  /** The keys of `records` per origin, oldest first (a key written again moves last). */
  private readonly byOrigin = new Map<string, Set<string>>();
  /** Keys in flight in this worker (signed or about to be, no answer yet), per origin. */
  private readonly inFlight = new Map<string, number>();
  /** The stored records, read once per worker (again after a failed read). */
  private loading: Promise<void> | undefined;

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
  async keyed(
    sk: SubmissionKeys | undefined,
    request: unknown,
    submit: (beforeSign?: BeforeSign) => Promise<unknown>,
  ): Promise<unknown> {
    if (sk === undefined) return submit();
    const { keys, pageKey, orders } = sk;
    const fingerprint = stableJson(request);
    const joined = new Set(keys.flatMap((k) => this.running.get(k) ?? []));
    if (joined.size) {
      const [other] = joined;
      if (joined.size === 1 && other?.request === fingerprint) return other.run;
      throw invalidParams(
        'Another request with these client order ids (or this ' +
          'idempotencyKey) is still pending; use new ids for a different order.',
      );
    }
    let replayed = false;
    let mine: StoredOutcome | undefined;
    const beforeSign: BeforeSign = async (artifact) => {
      const { what, data } = inFlightLookup(artifact);
      const record: StoredOutcome = {
        at: this.now(),
        what,
        reason: STOPPED_IN_FLIGHT,
        data: pageKey === undefined ? data : { ...data, idempotencyKey: pageKey },
        pending: true,
      };
      await this.markInFlight(keys, record);
      mine = record;
    };
    const run = this.load().then(() => {
      const prior = this.prior(keys, fingerprint, orders);
      if (prior === undefined) return submit(beforeSign);
      replayed = true;
      if (!prior.answered) throw new OutcomeUnknownError(prior.what, undefined, prior.data, prior.reason);
      if (prior.answered.fingerprint === fingerprint) return prior.answered.answer;
      throw invalidParams(
        'These client order ids (or this idempotencyKey) belong to an earlier ' +
          'request the venue answered; use new ids for a different order.',
      );
    });
    const entry = { request: fingerprint, run };
    for (const k of keys) this.running.set(k, entry);
    try {
      const result = await run;
      if (mine) this.answered(keys, mine, fingerprint, result, orders);
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
      if (mine)
        this.inFlight.set(
          originOfKey(keys[0] ?? ''),
          Math.max(0, (this.inFlight.get(originOfKey(keys[0] ?? '')) ?? 0) - keys.length),
        );
      for (const k of keys) if (this.running.get(k) === entry) this.running.delete(k);
    }
  }

  /**
   * The record that answers a request (`fingerprint`, its `orders` by client order id key) carrying
   * `keys`, within `KEYED_RECORD_MS`: an unknown outcome (or one a stopped worker left in flight) first;
   * then an answer to this very request (replayed); then an answer under the page's `idempotencyKey`, or
   * an answer to the same order under one of its client order ids — a retry in another shape (a key
   * added, a batch around it, fields reordered or an expiry recomputed): refused, never signed again. A
   * *different* order may carry a client order id the venue let go (filled or cancelled; the venue judges
   * it): that is no match. Undefined when none.
   */
  private prior(
    keys: readonly string[],
    fingerprint: string,
    orders: Record<string, string> = {},
  ): StoredOutcome | undefined {
    const since = this.now() - KEYED_RECORD_MS;
    const found = keys.flatMap((k) => {
      const r = this.records.get(k);
      return r && r.at >= since ? [{ k, r }] : [];
    });
    const sameOrder = ({ k, r }: { k: string; r: StoredOutcome }) =>
      kindOfKey(k) !== 'perps-coid' || r.orders?.[k] === undefined || r.orders[k] === orders[k];
    return (
      found.find(({ r }) => !r.answered)?.r ??
      found.find(({ r }) => r.answered?.fingerprint === fingerprint)?.r ??
      found.find(sameOrder)?.r
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
        for (const [k, o] of Object.entries(saved).sort(([, a], [, b]) => a.at - b.at))
          if (!this.records.has(k)) this.keep(k, o);
        void store.prune(this.now() - KEYED_RECORD_MS).catch(() => undefined);
      },
      () => {
        this.loading = undefined;
        throw resourceUnavailable(
          'Countersign could not read its record of earlier submissions, so nothing was sent; try again.',
        );
      },
    );
    return this.loading;
  }

  /** Holds `record` under `key` in memory (moved last in its origin). */
  private keep(key: string, record: StoredOutcome): void {
    this.records.set(key, record);
    const origin = originOfKey(key);
    const mine = this.byOrigin.get(origin) ?? new Set<string>();
    mine.delete(key);
    mine.add(key);
    this.byOrigin.set(origin, mine);
  }

  /**
   * How many of `origin`'s records are within `KEYED_RECORD_MS` (expired ones are forgotten on the way, oldest first).
   */
  private held(origin: string): number {
    const mine = this.byOrigin.get(origin);
    if (!mine) return 0;
    const since = this.now() - KEYED_RECORD_MS;
    for (const k of mine) {
      const r = this.records.get(k);
      if (r && r.at >= since) break;
      if (this.running.has(k)) continue;
      mine.delete(k);
      this.records.delete(k);
    }
    return mine.size;
  }

  /** Forgets `key` in memory. */
  private drop(key: string): void {
    this.records.delete(key);
    this.byOrigin.get(originOfKey(key))?.delete(key);
  }

  /**
   * Runs `write` on the store now; its own failure is the caller's. Writes take effect in call order (the
   * store's transactions run in the order they were created), so none waits for the one before it.
   */
  private write(write: (store: OutcomeStore) => Promise<void>): Promise<void> {
    return this.store ? write(this.store) : Promise.resolve();
  }

  /**
   * Records `keys` as in flight (the record a later start reads as the unknown outcome `record`) and
   * stores it before anything is signed. Throws -32002 without `data.command` (nothing was sent) when
   * the origin already has `MAX_IN_FLIGHT_PER_ORIGIN` keys in flight or the write fails.
   */
  private async markInFlight(keys: string[], record: StoredOutcome): Promise<void> {
    const origin = originOfKey(keys[0] ?? '');
    const flying = this.inFlight.get(origin) ?? 0;
    if (flying + keys.length > MAX_IN_FLIGHT_PER_ORIGIN)
      throw resourceUnavailable(
        'This site has too many keyed submissions waiting for an ' +
          'answer, so nothing was sent; try again when they are answered.',
      );
    if (this.held(origin) + keys.length > MAX_KEYED_PER_ORIGIN)
      throw resourceUnavailable(
        'This site has used too many idempotency keys and client order ' +
          'ids in the last 24 hours, so nothing was sent; try again later.',
      );
    const before = keys.map((k) => this.records.get(k));
    for (const k of keys) this.keep(k, record);
    this.inFlight.set(origin, flying + keys.length);
    try {
      await this.write((s) => s.put(Object.fromEntries(keys.map((k) => [k, record]))));
    } catch {
      this.inFlight.set(origin, flying);
      keys.forEach((k, i) => {
        const was = before[i];
        if (this.records.get(k) !== record) return;
        if (was) this.keep(k, was);
        else this.drop(k);
      });
      throw resourceUnavailable(
        'Countersign could not record this submission before signing it, so nothing was sent; try again.',
      );
    }
  }

  /**
   * The venue answered the submission `mine` under `keys`: its record becomes the answer (`fingerprint`,
   * `answer`), stored behind the answer (best effort: a record left in flight only makes a repeat hear
   * "unknown — look it up"). An answer too long to keep is kept as an unknown outcome's lookup.
   */
  private answered(
    keys: string[],
    mine: StoredOutcome,
    fingerprint: string,
    answer: unknown,
    orders?: Record<string, string>,
  ): void {
    const { pending: _pending, ...rest } = mine;
    let size = Infinity;
    try {
      size = JSON.stringify(answer ?? null).length + fingerprint.length;
    } catch {
      /* not JSON: not kept */
    }
    const kept = orders && Object.keys(orders).length ? { orders } : {};
    const record: StoredOutcome =
      size <= MAX_ANSWER_CHARS
        ? { ...rest, ...kept, at: this.now(), reason: '', answered: { fingerprint, answer } }
        : { ...rest, at: this.now(), reason: ANSWER_NOT_KEPT };
    for (const k of keys) if (this.records.get(k) === mine) this.keep(k, record);
    void this.write((s) => s.put(Object.fromEntries(keys.map((k) => [k, record])))).catch(() => undefined);
  }

  /**
   * The venue refused the submission `mine` (or it was refused before the send): its keys are free again (stored best
   * effort).
   */
  private async release(keys: string[], mine: StoredOutcome): Promise<void> {
    const mineKeys = keys.filter((k) => this.records.get(k) === mine);
    for (const k of mineKeys) this.drop(k);
    await this.write((s) => s.remove(mineKeys)).catch(() => undefined);
  }

  /**
   * Records an unknown outcome under each of `keys` (replacing their in-flight record) and stores the
   * records (best effort: the page gets the error either way).
   */
  private async rememberUnknown(keys: string[], error: OutcomeUnknownError, mine?: StoredOutcome): Promise<void> {
    const outcome: StoredOutcome = {
      at: mine?.at ?? this.now(),
      what: error.what,
      reason: error.reason,
      data: { ...error.data },
    };
    for (const k of keys) this.keep(k, outcome);
    await this.write((s) => s.put(Object.fromEntries(keys.map((k) => [k, outcome])))).catch(() => undefined);
  }
}
