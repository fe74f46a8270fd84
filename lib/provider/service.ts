/**
 * Page requests (issue #6; issues #13, #14): the origin comes from the browser's sender (the content
 * script's tab URL), never from the message. Every request is checked against the method policy
 * (connected origin, unlocked vault), validated and decoded into one canonical request. For anything
 * that signs, the signing service builds the complete artifact first (`lib/signer/artifact.ts`); the
 * approval window shows that artifact decoded in plain words with its binding digest; on approval the
 * service signs exactly that artifact and sends exactly its body. Nothing is rebuilt after consent.
 *
 * One rule for every page-reachable signing path: a page names *what* it wants (a perps command, order
 * requests, an L2 route), never bytes to sign. `eth_signTypedData_v4` therefore signs nothing: each
 * venue struct is refused with the method that shows it decoded (4200), and so is anything else.
 *
 * Accounts (issue #14 §3): a connection records the account it was granted; a site acts only while
 * that account is the active one (otherwise 4100 and `eth_accounts` is empty).
 *
 * Standing grants (issue #11, issue #17): a `perps_sendCommand` or `clob_postOrders` that the origin's
 * live grant for that venue covers is signed without a window (the same artifact pipeline, counted
 * against the grant and marked in the audit log) — and only while the venue's kill switch is armed for
 * the account (`killSwitchArmed`); one outside the grant opens the window, which says which limit it
 * exceeds. What a grant can ever cover is listed in `lib/grants/requests.ts`; everything else asks.
 */
import * as v from 'valibot';
import { keccak256, numberToHex, toHex, type Address } from 'viem';
import { commandFromBody, type PerpsCommand } from '../perps/commands';
import type { ClobArtifact } from '../signer/artifact';
import { InvalidFieldError, isVenueDecimal, parseOrThrow } from '../validation';
import type { ApprovalKind, ApprovalRefresh, ApprovalRegistry, ApprovalView } from '../approvals/registry';
import { OutcomeUnknownError, type ExecuteOptions, type SigningService } from '../signer/service';
import { BaseError } from '../errors/base';
import { instrumentLabel, instrumentSymbols, shortToken } from '../validation/venue-text';
import { borneOut } from '../grants/reference';
import { clobRoundingFlags } from '../approvals/rounding-flags';
import { describeArtifact, perpsArtifactCommand, type SigningArtifact } from '../signer/artifact';
import type { OwnerInfo, Vault } from '../vault/vault';
import type { Connection, VaultDb } from '../vault/db';
import { TamperedRecordError } from '../vault/errors';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import type { GrantService } from '../grants/service';
import type { GrantRequest, OwnedOrder, RefPrice } from '../grants/evaluate';
import { canOfferGrant, clobGrantRequest, perpsGrantRequest, requestMarkets } from '../grants/requests';
import { groupDecimal, shortAddress } from '../format';
import { disconnected, fromRpcError, invalidParams, resourceUnavailable, toRpcError, unauthorized, unsupported, userRejected } from './errors';
import type { OutcomeStore, StoredOutcome } from './outcomes';
import { accountsPermission, grantPermissionsAnswer, parseGrantPermissions, parseRequestPermissions, type AccountsPermission } from './permissions';
import { grantOffer, serviceOfferReads, type GrantOffer, type OfferReads } from '../grants/offer';
import { describeGrant, type GrantLimits } from '../grants/evaluate';
import { appendAudit, auditLog } from '../audit';
import { toUnits } from '../decimal';
import { nextTask } from '../tasks';
import { approvedPageScopes, endedError, narrowTicket, pageScopes, type Authority, type AuthorityTicket } from '../authority/epoch';
import { checkL2Route, clobOrdersParamsSchema, clobSignParamsSchema, isPageMethod, METHOD_POLICY, perpsParamsSchema, typedDataRefusal, unwrapParams } from './methods';

/** Approval time-to-live of trading requests (orders, cancels, leverage, L2 headers), in ms: 60 s. */
export const TTL_TRADING_MS = 60_000;
/** Approval time-to-live of withdrawals, transfers and connections, in ms: 300 s. */
export const TTL_FUNDS_MS = 300_000;

/** `https:` origins, or `http:` on localhost / 127.0.0.1 / [::1]. */
export function isAllowedOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    if (u.protocol === 'https:') return true;
    return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

/** What the provider works with (built before it in `lib/background/compose.ts`). */
export type ProviderDeps = {
  /** Standing grants; absent: every signature asks. */
  grants?: GrantService;
  /**
   * Whether `venue`'s kill switch (perps auto-cancel, order-book heartbeat) is armed for `account`;
   * asked before a covered request is signed (issue #17). `false` or a throw: the request asks
   * instead. Absent: treated as armed (the lead wires the dead-man's answer here).
   */
  killSwitchArmed?: (venue: 'perps' | 'clob', account: string) => Promise<boolean>;
  /**
   * Called before `wallet_revokePermissions` revokes the origin's grants: the dead-man then ends their
   * switches by letting them fire (`DeadMan.lapse`), never by unsetting them — a site must not be able to
   * switch the auto-cancel off under its own open orders by disconnecting.
   */
  beforeSiteRevoke?: (origin: string) => Promise<void>;
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  registry: ApprovalRegistry;
  /** Shows the approval window (one at a time). */
  showApprovals: () => Promise<void>;
  /** Where unknown outcomes of keyed submissions are kept across worker restarts (`lib/provider/outcomes.ts`); absent: in memory only. */
  outcomes?: OutcomeStore;
  /** Sends an event to every page of `origin` (or of every origin when `origin` is undefined). */
  emit: (origin: string | undefined, event: 'accountsChanged' | 'connect' | 'disconnect', data: unknown) => void;
};

/** The window's flag while the stored grants fail their integrity check (they cover nothing). */
const TAMPERED_FLAG = 'Your standing permissions failed their integrity check and are ignored: revoke them all (Permissions) or restore from your backup.';
const DESTINATIONS_KEY = 'usedDestinations';

// What the provider reads from a command's JSON args (validated when the command was built, by
// `commandFromBody`) and from the gateway's answers (only the fields the window's flags use). A read of
// another shape throws where a failed read did, and its flag is skipped.
const fundsArgs = v.looseObject({ account: v.string(), to: v.string() });
const leverageArgs = v.looseObject({ iid: v.number(), lev: v.number() });
const orderArgs = v.array(v.looseObject({ iid: v.number(), buy: v.boolean(), qty: v.string(), p: v.optional(v.string()), ro: v.optional(v.boolean()), c: v.optional(v.string()) }));
const instrumentsAnswer = v.array(v.looseObject({ instrument_id: v.number(), symbol: v.unknown() }));
const tickersAnswer = v.array(v.looseObject({ instrument_id: v.optional(v.unknown()), mark_price: v.optional(v.unknown()), mid_price: v.optional(v.unknown()) }));
const portfolioAnswer = v.looseObject({ positions: v.optional(v.array(v.looseObject({ instrument_id: v.number(), size: v.string() }))) });
const bookAnswer = v.looseObject({ bids: v.array(v.tuple([v.string(), v.string()])), asks: v.array(v.tuple([v.string(), v.string()])) });
const configAnswer = v.array(v.looseObject({ leverage: v.number() }));
const destinationsRecord = v.array(v.string());

/** How long a keyed submission with an unknown outcome answers repeats with that outcome (ms): 10 min. */
const UNKNOWN_OUTCOME_MS = 10 * 60_000;
/** Unknown outcomes kept per origin, one per key (the oldest go first); also the cap of keys in flight per origin. */
const MAX_UNKNOWN_PER_ORIGIN = 200;
/** Origins whose connection `ProviderService` holds in memory (past it, all are dropped and read again). */
const MAX_HELD_CONNECTIONS = 1_000;
/** The client order ids (`c`) of a createOrders' orders, read from the raw params (validated later, before anything is signed). */
const coidsOfOrders = v.object({ op: v.object({ type: v.literal('createOrders'), args: v.array(v.looseObject({ c: v.optional(v.string()) })) }) });
/** A submission that names its `idempotencyKey` (validated by the method's schema before anything is signed). */
const keyOfRequest = v.object({ idempotencyKey: v.pipe(v.string(), v.maxLength(64)) });
/** The reason of an unknown outcome read from an in-flight record a stopped worker left behind. */
const STOPPED_IN_FLIGHT = 'Countersign stopped while this was being sent';

/**
 * A keyed submission: its keys (`origin|account|venue-kind|id`, one per client order id and one for the
 * page's `idempotencyKey`, each checked and recorded on its own) and the page's own `idempotencyKey`.
 */
type SubmissionKeys = { keys: string[]; pageKey?: string };

/** Called right before a keyed submission's artifact is signed (writes its in-flight record); a throw signs nothing. */
type BeforeSign = (artifact: SigningArtifact) => Promise<void>;

/**
 * The keys of a `perps_sendCommand`: `origin|account|perps-key|key` when the page named an
 * `idempotencyKey` (any command), and `origin|account|perps-coid|c` for each client order id of a
 * createOrders (orders without `c` add none). Undefined when it has neither (an unkeyed submission).
 */
/**
 * What `grantCheck` found: covered (the grant and use to record orders on, `still` to run right before
 * the signature, `counted` — true once the grant store's checks of the use passed, false when the store
 * failed its integrity check; nothing may leave before it is true —, and `use`, the use's reservation
 * for the signer, `ExecuteOptions.grantUse`: nothing leaves before it is durable), or not (with the
 * window's flag, if any).
 */
type GrantCheck =
  | { covered: true; grantId: string; seq: number; still: () => void; counted: Promise<boolean>; use: NonNullable<ExecuteOptions['grantUse']>; authority: AuthorityTicket }
  | { covered: false; flag?: string };

/** `counted` of a covered decision: true once the store's checks passed, false when it failed its integrity check (the request then asks); other errors throw. */
function countedOrTampered(stored: Promise<void> | undefined): Promise<boolean> {
  return (stored ?? Promise.resolve()).then(
    () => true,
    (err: unknown) => {
      if (err instanceof TamperedRecordError) return false;
      throw err;
    },
  );
}

function perpsSubmissionKeys(origin: string, account: string, params: unknown): SubmissionKeys | undefined {
  const prefix = `${origin}|${account.toLowerCase()}`;
  const raw = unwrapParams(params);
  const named = v.safeParse(keyOfRequest, raw);
  const ids = v.safeParse(coidsOfOrders, raw);
  const coids = ids.success ? [...new Set(ids.output.op.args.flatMap((o) => (o.c === undefined ? [] : [o.c])))] : [];
  const keys = [...(named.success ? [`${prefix}|perps-key|${named.output.idempotencyKey}`] : []), ...coids.map((c) => `${prefix}|perps-coid|${c}`)];
  if (!keys.length) return undefined;
  return named.success ? { keys, pageKey: named.output.idempotencyKey } : { keys };
}

/** The key of a `clob_postOrders` (`origin|account|clob|idempotencyKey`), when the page named one. */
function clobSubmissionKeys(origin: string, account: string, params: unknown): SubmissionKeys | undefined {
  const k = v.safeParse(keyOfRequest, unwrapParams(params));
  return k.success ? { keys: [`${origin}|${account.toLowerCase()}|clob|${k.output.idempotencyKey}`], pageKey: k.output.idempotencyKey } : undefined;
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

/** Page methods a trading session serves (only what a live grant covers; the rest is 4900). */
const SESSION_METHODS: ReadonlySet<string> = new Set(['perps_sendCommand', 'clob_postOrders', 'eth_accounts']);

/**
 * Serves page requests (see the module docstring): `request(origin, method, params)` resolves with the
 * method's result or throws a `ProviderRpcError` subclass (or another `BaseError`, mapped by class with
 * `toRpcError`).
 */
export class ProviderService {
  private symbols: Map<number, string> | undefined;
  /** Keyed submissions still running (approval pending or in flight), by each of their keys: the request (JSON) and its outcome. */
  private readonly running = new Map<string, { request: string; run: Promise<unknown> }>();
  /** Keyed submissions whose outcome is unknown (no answer), by key, for `UNKNOWN_OUTCOME_MS`; kept in `ProviderDeps.outcomes` too. */
  private readonly unknownOutcomes = new Map<string, StoredOutcome>();
  /** Keyed submissions of this worker being signed and sent (no answer yet), by key; stored with `pending` so a restarted worker knows them. */
  private readonly inFlight = new Map<string, StoredOutcome>();
  /** The stored unknown outcomes, read once per worker (again after a failed read). */
  private loadingOutcomes: Promise<void> | undefined;
  /** The last write of `ProviderDeps.outcomes` (writes run one after another, each with the records as they are then). */
  private saving: Promise<void> = Promise.resolve();

  /**
   * Idempotent submissions (issue #20, "keyed, never guessed"): a `perps_sendCommand` is keyed by each
   * client order id (`c`) of its createOrders and by its `idempotencyKey`, a `clob_postOrders` by its
   * `idempotencyKey` (`perpsSubmissionKeys`, `clobSubmissionKeys`; every key also names the origin and
   * the account). Each key counts on its own: adding a key, or batching a client order id with new
   * ones, never makes a request new. While a submission holding any of its keys is pending or in
   * flight, the very same request joins it (same result, no second window, nothing sent twice) and any
   * other is refused (-32602), never answered with the other's outcome. After an outcome was unknown
   * (no answer, or none in time), any request with one of its keys within `UNKNOWN_OUTCOME_MS` gets that
   * same error (-32002) instead of a submission (the venue may hold the ids already). A keyed submission
   * is stored as in flight before it is signed, so a worker that stops meanwhile leaves that unknown
   * outcome to the next one. A request without a key is a new submission every time (a trader may want
   * two identical orders) and writes nothing.
   */
  /**
   * Reads the stored unknown outcomes once (a restarted worker must know them before it submits
   * anything keyed); an in-flight record left by a stopped worker is read as an unknown outcome. A
   * failed read throws -32002 and sends nothing; the next keyed request reads again.
   */
  private loadOutcomes(): Promise<void> {
    const store = this.d.outcomes;
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
    const store = this.d.outcomes;
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

  private async keyed(sk: SubmissionKeys | undefined, params: unknown, submit: (beforeSign?: BeforeSign) => Promise<unknown>): Promise<unknown> {
    if (sk === undefined) return submit();
    const { keys, pageKey } = sk;
    const request = JSON.stringify(params ?? null);
    const joined = new Set(keys.flatMap((k) => this.running.get(k) ?? []));
    if (joined.size) {
      const [other] = joined;
      if (joined.size === 1 && other?.request === request) return other.run;
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
    const entry = { request, run };
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
   * Starts reading the stored outcomes at once (a worker that starts must know what a stopped one left
   * in flight before anything else can change the store); a failed read is retried by the next keyed request.
   */
  constructor(private readonly d: ProviderDeps) {
    void this.loadOutcomes().catch(() => undefined);
    // The signer's epoch: the one of the background, which the grants share (a second one would let
    // revokes and the signing checks count apart).
    const authority = (this.authority = d.service.authority);
    if (d.grants && d.grants.authority !== authority) throw new BaseError('The grants and the signing service must share one authority epoch.');
    // A window whose request's authority ended (disconnect, venue change …) closes at once, with why (`endedError`'s code).
    authority.onEnd(() => {
      for (const [id, ticket] of this.windowAuthority) {
        const reason = authority.endedBy(ticket);
        if (reason === undefined) continue;
        this.windowAuthority.delete(id);
        d.registry.reject(id, fromRpcError(toRpcError(endedError(reason, { granted: false }))));
      }
    });
  }

  /** The authority epoch every page request captures at its start (`lib/authority/epoch.ts`). */
  private readonly authority: Authority;

  /** The authority of each pending window's request (approval id → ticket), closed when it ends. */
  private readonly windowAuthority = new Map<string, AuthorityTicket>();

  /**
   * Shows the approval window and waits for the person's answer on request `id`, its authority `ticket`
   * watched meanwhile: an end of it rejects the request at once (the constructor's listener).
   */
  private async awaitWindow(id: string, approved: Promise<ApprovalView>, ticket: AuthorityTicket): Promise<ApprovalView> {
    this.windowAuthority.set(id, ticket);
    try {
      await this.d.showApprovals();
      return await approved;
    } finally {
      this.windowAuthority.delete(id);
    }
  }

  /** The lowercase addresses funds were sent to from pages before (at most 500; none when unreadable). */
  private async usedDestinations(): Promise<string[]> {
    const used = await this.d.db.get('settings', DESTINATIONS_KEY);
    return v.is(destinationsRecord, used) ? used : [];
  }

  /** Adds `to` (lowercased) to the destinations funds were sent to (the newest 500). */
  private async rememberDestination(to: string): Promise<void> {
    const used = await this.usedDestinations();
    if (!used.includes(to.toLowerCase())) await this.d.db.put('settings', [...used, to.toLowerCase()].slice(-500), DESTINATIONS_KEY);
  }

  /**
   * Each origin's connection as last read or written here (issue #20, page path: every page request
   * reads its origin's, and the read cost an IndexedDB round trip). This service is the store's only
   * writer: `connect` sets the entry once written, a revoke empties it before and after the delete, and a
   * read that a write overtook keeps the write's value. At most `MAX_HELD_CONNECTIONS` origins are held.
   */
  private readonly heldConnections = new Map<string, Connection | undefined>();

  private async connection(origin: string): Promise<Connection | undefined> {
    if (this.heldConnections.has(origin)) return this.heldConnections.get(origin);
    const read = await this.d.db.get('connections', origin);
    if (this.heldConnections.has(origin)) return this.heldConnections.get(origin);
    this.holdConnection(origin, read);
    return read;
  }

  private holdConnection(origin: string, c: Connection | undefined): void {
    if (this.heldConnections.size >= MAX_HELD_CONNECTIONS && !this.heldConnections.has(origin)) this.heldConnections.clear();
    this.heldConnections.set(origin, c);
  }

  private async symbol(): Promise<(iid: number) => string> {
    if (!this.symbols) {
      try {
        this.symbols = instrumentSymbols(v.parse(instrumentsAnswer, await this.d.service.perpsRead(undefined, 'instruments', undefined, { draw: 'site' })));
      } catch {
        return (iid) => instrumentLabel(iid, undefined);
      }
    }
    // The venue's symbol (validated) beside the id the signature commits to: `BTC-PERP (#1)`.
    const m = this.symbols;
    return (iid) => instrumentLabel(iid, m.get(iid));
  }

  /** Handles one page request from `origin`. Throws `ProviderRpcError` (or errors mapped by `toRpcError`). */
  async request(origin: string, method: string, params: unknown): Promise<unknown> {
    // The request's authority, from its start: checked before its window, its signature and its send (`lib/authority/epoch.ts`).
    const ticket = this.authority.capture(pageScopes(origin));
    if (!isAllowedOrigin(origin)) throw unauthorized('Countersign only serves https sites (and localhost).');
    if (!isPageMethod(method)) throw unsupported(`Countersign does not support ${method.slice(0, 64)}.`);
    const policy = METHOD_POLICY[method];
    if (policy.approval === 'refused') throw unsupported(typedDataRefusal(params));
    // Needs no connection, account or unlocked vault (METHOD_POLICY): answered without reading them (issue #20, page path).
    if (method === 'eth_chainId') return numberToHex((await readSettings(this.d.db)).clobChainId);
    // Two independent reads, side by side.
    const [conn, active] = await Promise.all([this.connection(origin), activeAccount(this.d.db, this.d.vault)]);
    const granted = conn && active && conn.accounts[0]?.toLowerCase() === active.address.toLowerCase() ? active : undefined;
    if (policy.connected && !conn) throw unauthorized();
    if (policy.connected && !granted) throw unauthorized('This site is connected to another account than the active one. Switch back in Countersign, or connect again.');
    // A trading session (auto-lock with a live grant, issue #17) serves only requests its grants cover.
    if (policy.unlocked && !this.d.vault.unlocked && !(this.d.vault.sessionLive && SESSION_METHODS.has(method))) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    // While the panic switch runs (the signing gate is closed) nothing asks the person: it is refused at once.
    if (policy.approval === 'sign' && this.d.service.halted) throw disconnected('Countersign is stopping everything (panic switch); nothing is signed until it is unlocked again.');
    switch (method) {
      case 'eth_accounts':
        return granted && (await this.servesAccount(origin)) ? [granted.address] : [];
      case 'eth_requestAccounts':
      case 'wallet_connect':
        return this.connect(origin, active, false);
      case 'wallet_requestPermissions': {
        parseRequestPermissions(params);
        await this.connect(origin, active, true);
        return this.permissions(origin);
      }
      case 'wallet_getPermissions':
        // EIP-2255, agreeing with eth_accounts: the connection while its account is active and the vault serves it.
        return granted && (await this.servesAccount(origin)) ? this.permissions(origin) : [];
      case 'wallet_grantPermissions':
        if (!granted) throw unauthorized();
        return this.grantPermissions(origin, granted, params, ticket);
      case 'wallet_revokePermissions':
        // Every request of the site started before this ends here, whatever it waits for.
        this.authority.end(`origin:${origin}`, 'disconnect');
        // The site's own disconnect never unsets a kill switch while its orders may be open (issue #17 finding 4).
        await this.d.beforeSiteRevoke?.(origin);
        this.holdConnection(origin, undefined); // no request is served under it from here on
        await this.d.db.delete('connections', origin);
        this.holdConnection(origin, undefined);
        await this.d.grants?.revokeOrigin(origin);
        // EIP-1193: the provider still serves the chain — no `disconnect`, the site just has no account.
        this.d.emit(origin, 'accountsChanged', []);
        return null;
      case 'perps_sendCommand':
      case 'perps_signCommand':
      case 'clob_postOrders':
      case 'clob_signRequest':
        // Connected methods (METHOD_POLICY): refused above unless the connection's account is active.
        if (!granted) throw unauthorized();
        if (method === 'clob_postOrders') return this.keyed(clobSubmissionKeys(origin, granted.address, params), params, (beforeSign) => this.clobPost(origin, granted, params, ticket, beforeSign));
        if (method === 'clob_signRequest') return this.clobSign(origin, granted, params, ticket);
        if (method === 'perps_sendCommand') return this.keyed(perpsSubmissionKeys(origin, granted.address, params), params, (beforeSign) => this.perps(origin, granted, true, params, ticket, beforeSign));
        return this.perps(origin, granted, false, params, ticket);
      case 'eth_signTypedData_v4':
        throw unsupported(typedDataRefusal(params));
    }
  }

  /**
   * Builds the artifact, shows it decoded, waits for the person, and returns the approved view (its
   * artifact and digest exactly as approved). The artifact is rebuilt only while pending, when it
   * would go stale (`validUntil`); the window then shows the new digest and re-arms.
   */
  private readonly refs = new Map<string, { at: number; ref: Promise<RefPrice | undefined> }>();

  /**
   * Reference price of a perps instrument for grant checks (issue #17): the ticker's `mark_price`, or
   * its `mid_price` when the ticker carries no mark (the source is named in the window's words).
   * Reused for 1 s. Undefined when the ticker has neither.
   */
  private async perpsRef(market: string): Promise<RefPrice | undefined> {
    const hit = this.refs.get(market);
    if (hit && Date.now() - hit.at < 1_000) return hit.ref;
    const ok = (x: unknown): x is string => isVenueDecimal(x) && !/^0(\.0*)?$/.test(x);
    const iid = Number(market);
    // Named through the symbol table already read (no read of its own here: the grant check's reads stay as they were).
    const label = instrumentLabel(iid, this.symbols?.get(iid));
    const ref = Promise.all([this.d.service.perpsRead(undefined, 'tickers', { instrument_id: iid }, { draw: 'site' }), this.d.service.perpsBook(iid)]).then(([t, book]): RefPrice | undefined => {
      const row = v.parse(tickersAnswer, t).find((x) => x.instrument_id === undefined || String(x.instrument_id) === market);
      const read: RefPrice | undefined = ok(row?.mark_price) ? { price: row.mark_price, source: 'mark' } : ok(row?.mid_price) ? { price: row.mid_price, source: 'mid' } : undefined;
      // Borne out by the order book the window prices orders with (lib/grants/reference.ts).
      return borneOut(read, { bid: book.bids[0]?.[0], ask: book.asks[0]?.[0] }, label);
    });
    if (this.refs.size >= 256) this.refs.clear();
    this.refs.set(market, { at: Date.now(), ref });
    ref.catch(() => this.refs.delete(market));
    return ref;
  }

  /** The order-book midpoint of a token as a reference price. */
  private async clobRef(tokenId: string): Promise<RefPrice | undefined> {
    const [mid, top] = await Promise.all([this.d.service.clobMid(tokenId), this.d.service.clobTop(tokenId)]);
    // Borne out by the token's order book (lib/grants/reference.ts).
    return borneOut(mid === undefined ? undefined : { price: mid, source: 'midpoint' }, top, `token ${shortToken(tokenId)}`);
  }

  /**
   * Asks the origin's grant about `req`: `covered` (with the grant use to record orders on) when it may
   * be signed without a window; otherwise the flag for the window (`undefined` when there is no grant).
   * The venue's kill switch must be armed for a covered request (`ProviderDeps.killSwitchArmed`).
   */
  private async grantCheck(origin: string, account: OwnerInfo, req: GrantRequest, ref: (m: string) => Promise<RefPrice | undefined>, ticket: AuthorityTicket): Promise<GrantCheck> {
    // Orders a covered request placed are recorded before any later request is checked (a granted cancel of them is covered).
    await this.recording;
    const armed = this.d.killSwitchArmed;
    const venue = req.kind === 'never' ? undefined : req.venue;
    const grants = this.d.grants;
    let decision;
    try {
      decision = await grants?.decide(origin, account.address, req, ref, armed && venue ? () => armed(venue, account.address) : undefined, ticket);
    } catch (err) {
      // A grant store that fails its integrity check covers nothing; the request still asks (deny by default).
      if (err instanceof TamperedRecordError) return { covered: false, flag: TAMPERED_FLAG };
      throw err;
    }
    if (!decision || !grants) return grants?.integrityFailed ? { covered: false, flag: TAMPERED_FLAG } : { covered: false };
    if (!decision.ok) return { covered: false, flag: `Outside your standing permission for this site: ${decision.limit}.` };
    const { ticket: covering, reservation } = decision;
    const counted = countedOrTampered(reservation.counted);
    counted.catch(() => undefined); // awaited before anything leaves; this only keeps an unawaited failure quiet
    // `still` runs right before the signature: a revoke answered since this decision stops it (issue #20).
    return { covered: true, grantId: decision.grantId, seq: decision.seq, still: () => grants.assertCovering(covering), counted, use: reservation, authority: covering.authority };
  }

  /** The owned-order records still being written, chained in answer order (each settles; a failure is dropped). */
  private recording: Promise<void> = Promise.resolve();

  /**
   * Records the orders a covered createOrders placed (`GrantService.recordOrders`) after the page has its
   * answer (issue #20, page path), chained so every later grant check sees them (`grantCheck` waits for
   * `recording`). Best effort, as before: an order it fails to record can only be cancelled with a window.
   */
  private recordOrdersAfter(grantId: string, seq: number, orders: readonly OwnedOrder[]): void {
    const grants = this.d.grants;
    if (!grants || !orders.length) return;
    // From the next task on: the answer this request returns goes back to the page first.
    this.recording = this.recording
      .then(nextTask)
      .then(() => grants.recordOrders(grantId, seq, orders))
      .catch(() => undefined);
  }

  /** The grant request of an artifact, when a window for it may offer a grant (perps: submitted orders and leverage; order-book orders). */
  private static offerable(a: SigningArtifact | undefined): GrantRequest | undefined {
    if (a?.kind === 'clob') return clobGrantRequest(a);
    if (a?.kind === 'perps' && a.submit) {
      const req = perpsGrantRequest(perpsArtifactCommand(a));
      return canOfferGrant(req) ? req : undefined;
    }
    return undefined;
  }

  private async approveArtifact(
    origin: string,
    kind: ApprovalKind,
    account: OwnerInfo,
    build: () => Promise<SigningArtifact>,
    flagsFor: (a: SigningArtifact) => Promise<string[]>,
    ttlMs: number,
    ticket: AuthorityTicket,
  ): Promise<ApprovalView & { artifact: SigningArtifact; authority: AuthorityTicket }> {
    // A window-approved request holds the person's authority: a trading session, lock, switch or disconnect ends it.
    const authority = narrowTicket(ticket, approvedPageScopes(origin));
    const mustBeUnlocked = () => {
      this.authority.assert(authority);
      if (!this.d.vault.unlocked) throw disconnected("Countersign is in a trading session: only requests within this site's standing permission are signed. Unlock Countersign to approve this one.");
    };
    mustBeUnlocked();
    this.d.registry.checkCapacity(origin);
    const symbol = await this.symbol();
    const make = async () => {
      const artifact = await build();
      const { title, lines, signer } = describeArtifact(artifact, symbol);
      const refresh: ApprovalRefresh = { artifact, digest: artifact.digest, lines, flags: await flagsFor(artifact), refreshAt: artifact.validUntil };
      return { title, signer, refresh };
    };
    const first = await make();
    // Auto-lock may have entered a trading session while the window was being built (its `rejectAll` ran
    // before this request was pending): nothing outside the grants may become approvable in a session.
    mustBeUnlocked();
    const offer = this.d.grants && (kind === 'clob' || kind === 'perps') ? ProviderService.offerable(first.refresh.artifact) : undefined;
    const { id, approved } = this.d.registry.add(
      { origin, kind, title: first.title, signer: first.signer, account: { address: account.address, label: account.label }, grantable: !!offer, markets: offer ? requestMarkets(offer) : [], ...first.refresh },
      ttlMs,
      async () => (await make()).refresh,
    );
    const view = await this.awaitWindow(id, approved, authority);
    mustBeUnlocked();
    if (!view.artifact) throw disconnected('The approved request carried nothing to sign.');
    return { ...view, artifact: view.artifact, authority };
  }

  /**
   * Connection requests (`eth_requestAccounts`, `wallet_connect`, `wallet_requestPermissions`) of one
   * origin for one account share one pending approval: a page calling it 5 times at once (or 500) opens
   * one window and every call gets its answer (issue #20 §5). `force` (EIP-2255 `wallet_requestPermissions`)
   * asks even when the site is already connected to this account.
   */
  private readonly connecting = new Map<string, Promise<string[]>>();

  private async connect(origin: string, active: OwnerInfo | undefined, force: boolean): Promise<string[]> {
    if (!active) throw unauthorized('Countersign has no account yet. Finish setup in the extension first.');
    if (!force && this.d.vault.unlocked) {
      const existing = await this.connection(origin);
      if (existing?.accounts[0]?.toLowerCase() === active.address.toLowerCase()) return existing.accounts;
    }
    // The check of `connecting` and its `set` run in one turn: calls that arrive together share one approval.
    const key = `${origin}|${active.address.toLowerCase()}`;
    const pending = this.connecting.get(key);
    if (pending) return pending;
    const run = this.connectOnce(origin, active, force).finally(() => this.connecting.delete(key));
    this.connecting.set(key, run);
    return run;
  }

  /**
   * One connection approval. On a locked vault (not a trading session, which serves only its grants) the
   * approval window shows the unlock form first, then this approval; it resolves only once the vault is
   * unlocked and the person approved (4001 when the window is closed, 4900 if it is still locked).
   */
  private async connectOnce(origin: string, active: OwnerInfo, force: boolean): Promise<string[]> {
    const existing = await this.connection(origin);
    const same = !!existing && existing.accounts[0]?.toLowerCase() === active.address.toLowerCase();
    if (existing && same && !force && this.d.vault.unlocked) return existing.accounts;
    if (this.d.vault.sessionLive) throw disconnected("Countersign is in a trading session: only requests within a site's standing permission are served. Unlock Countersign first.");
    const locked = !this.d.vault.unlocked;
    this.d.registry.checkCapacity(origin);
    const { approved } = this.d.registry.add(
      {
        origin,
        kind: 'connect',
        title: same ? 'Reconnect this site' : 'Connect this site',
        lines: [`Let ${origin} see your address ${shortAddress(active.address)}${active.label ? ` (“${active.label}”)` : ''} and ask you to sign trades.`, 'Every signature still needs your approval.'],
        flags: [
          ...(existing && !same ? ['This site was connected to another of your accounts; it will now act for this one.'] : []),
          ...(locked ? ['Countersign was locked when this site asked: unlock first.'] : []),
        ],
        signer: null,
        account: { address: active.address, label: active.label },
        digest: keccak256(toHex(`connect:${origin}:${active.address}`)),
      },
      TTL_FUNDS_MS,
    );
    await this.d.showApprovals();
    await approved;
    // Fails closed: an approval that reached a still-locked vault connects nothing.
    if (!this.d.vault.unlocked) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    const connection: Connection = { origin, accounts: [active.address], connectedAt: Date.now() };
    await this.d.db.put('connections', connection);
    this.holdConnection(origin, connection);
    this.d.emit(origin, 'connect', { chainId: numberToHex((await readSettings(this.d.db)).clobChainId) });
    this.d.emit(origin, 'accountsChanged', [active.address]);
    return [active.address];
  }

  /** Whether the vault shows `origin` its account now: unlocked, or a trading session in which the origin holds a grant. */
  private async servesAccount(origin: string): Promise<boolean> {
    if (this.d.vault.unlocked) return true;
    return this.d.vault.sessionLive && !!(await this.d.grants?.list())?.some((g) => g.origin === origin);
  }

  /** Pending `wallet_grantPermissions` windows (approval id → origin and venue), refreshed when a grant they would replace is created. */
  private readonly grantRequests = new Map<string, { origin: string; venue: GrantLimits['venue'] }>();

  /** The origin's EIP-2255 permissions: its connection as `eth_accounts` (none when it has no connection). */
  private async permissions(origin: string): Promise<AccountsPermission[]> {
    const conn = await this.connection(origin);
    return conn ? [accountsPermission(origin, conn.accounts, conn.connectedAt)] : [];
  }

  /**
   * ERC-7715 `wallet_grantPermissions` (issue #20 §5): a standing grant a site asks for in a standard
   * shape. The limits are validated (`parseGrantPermissions`: unknown fields refused, the field named),
   * the window shows them in the same words as every grant (`describeGrant`, names from the grant offer's
   * reads) with flags when the caps exceed what Countersign would propose from the account's equity, and
   * the approval is bound to a digest of exactly those limits and that expiry. On approval the grant is
   * created with those limits — never wider than shown — and revocable like any other (popup,
   * `wallet_revokePermissions`, lock, panic, expiry).
   */
  private async grantPermissions(origin: string, account: OwnerInfo, params: unknown, ticket: AuthorityTicket) {
    // A grant is the person's authority given to the site: a disconnect, switch, venue change or lock meanwhile creates none.
    const authority = narrowTicket(ticket, approvedPageScopes(origin));
    const grants = this.d.grants;
    if (!grants) throw unsupported('Standing permissions are not available.');
    const chainId = (await readSettings(this.d.db)).clobChainId;
    const { limits, expiresAt } = parseGrantPermissions(params, { account: account.address, chainId, now: Date.now() });
    if (!this.d.vault.unlocked) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    this.d.registry.checkCapacity(origin);
    const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
    const offer = await grantOffer(limits.venue, scope, account.address, this.offerReads());
    const names = Object.fromEntries(offer.markets.map((m) => [m.id, m.name]));
    const replacesNow = async () => (await grants.list()).some((g) => g.origin === origin && g.account.toLowerCase() === account.address.toLowerCase() && g.venue === limits.venue);
    const replacing = `This replaces the site's current ${limits.venue === 'perps' ? 'perps' : 'order-book'} permission.`;
    // The window's flags and the digest it binds; rebuilt when another grant of this site is created while this one is pending.
    const lines = describeGrant({ ...limits, names, expiresAt });
    const shown = (replaces: boolean) => ({
      lines,
      flags: [...grantFlags(limits, offer), ...(replaces ? [replacing] : [])],
      digest: keccak256(toHex(JSON.stringify({ grant: origin, account: account.address.toLowerCase(), limits, expiresAt, replaces }))),
    });
    const first = shown(await replacesNow());
    const { id, approved } = this.d.registry.add(
      {
        origin,
        kind: 'grant',
        title: 'Allow this site to trade within limits',
        ...first,
        signer: null,
        account: { address: account.address, label: account.label },
      },
      TTL_FUNDS_MS,
      async () => shown(await replacesNow()),
    );
    this.grantRequests.set(id, { origin, venue: limits.venue });
    let view: ApprovalView;
    try {
      view = await this.awaitWindow(id, approved, authority);
    } finally {
      this.grantRequests.delete(id);
    }
    this.authority.assert(authority);
    if (!this.d.vault.unlocked) throw disconnected('Countersign is locked. Open the extension and unlock it.');
    // Never replace a permission the approved window did not say it replaces (one approved meanwhile, issue #20).
    if (!view.flags.includes(replacing) && (await replacesNow())) throw userRejected('Another permission of this site for this venue was approved meanwhile; ask again to see what this one replaces.');
    const durationMs = expiresAt - Date.now();
    if (durationMs < 60_000) throw userRejected('The permission would have ended within a minute of being approved; ask again.');
    const grant = await grants.create({ origin, account: account.address, limits, durationMs, notAfter: expiresAt, names, authority });
    // Other pending requests of this site for this venue now replace this grant: their windows are
    // rebuilt with the flag (their old digest can no longer be approved).
    for (const [pending, r] of this.grantRequests) if (r.origin === origin && r.venue === limits.venue) await this.d.registry.refresh(pending);
    await appendAudit(auditLog(this.d.db, () => this.d.vault.auditKey()), {
      at: Date.now(),
      origin,
      account: account.address.toLowerCase(),
      kind: 'grant.create',
      summary: `Standing permission (wallet_grantPermissions) for ${origin} until ${new Date(grant.expiresAt).toISOString()}: ${describeGrant(grant).slice(0, 2).join(' ')}`.slice(0, 500),
      result: 'ok',
    });
    return grantPermissionsAnswer(grant);
  }

  /** The grant offer's reads (equity, names) over the signing service. */
  private offerReads(): OfferReads {
    const { service, db } = this.d;
    return serviceOfferReads({
      perpsRead: (account, name) => service.perpsRead(account, name, undefined, { draw: 'site' }),
      clobCollateral: (account) => service.clobCollateral(account),
      clobUrl: async () => (await readSettings(db)).clobUrl,
    });
  }

  private async perpsFlags(account: Address, cmd: PerpsCommand): Promise<string[]> {
    const flags: string[] = [];
    if (cmd.type === 'withdraw' || cmd.type === 'internalTransfer') {
      const { to } = v.parse(fundsArgs, cmd.body.args);
      if (!(await this.usedDestinations()).includes(to.toLowerCase())) flags.push('A new address: you have never sent funds here.');
    }
    if (cmd.type === 'createOrders') {
      const orders = v.parse(orderArgs, cmd.body.args);
      if (orders.length > 1) flags.push(`A batch of ${orders.length} orders.`);
      let positions: { instrument_id: number; size: string }[] = [];
      try {
        positions = v.parse(portfolioAnswer, await this.d.service.perpsRead(account, 'portfolio', undefined, { draw: 'site' })).positions ?? [];
      } catch {
        /* no portfolio read: skip the flip check */
      }
      for (const o of orders) {
        if (o.p) {
          try {
            const book = v.parse(bookAnswer, await this.d.service.perpsBook(o.iid));
            const best = Number(o.buy ? book.asks[0]?.[0] : book.bids[0]?.[0]);
            const p = Number(o.p);
            if (best > 0 && (o.buy ? p > best * 1.05 : p < best * 0.95)) flags.push(`The price ${groupDecimal(o.p)} is more than 5% through the book (best ${o.buy ? 'ask' : 'bid'} ${best}).`);
          } catch {
            /* no book: no flag */
          }
        }
        const pos = Number(positions.find((x) => x.instrument_id === o.iid)?.size ?? '0');
        if (!o.ro && pos !== 0 && (o.buy ? pos < 0 : pos > 0) && Number(o.qty) > Math.abs(pos)) flags.push('Reduce-only is off and this order flips your position.');
      }
    }
    if (cmd.type === 'updateLeverage') {
      try {
        const { iid, lev } = v.parse(leverageArgs, cmd.body.args);
        const cfg = v.parse(configAnswer, await this.d.service.perpsRead(account, 'config', { instrument_id: iid }, { draw: 'site' }));
        if (cfg[0] && lev > cfg[0].leverage) flags.push(`Leverage raised from ${cfg[0].leverage}× to ${lev}×.`);
      } catch {
        /* unknown current leverage */
      }
    }
    return flags;
  }

  private async perps(origin: string, account: OwnerInfo, submit: boolean, params: unknown, ticket: AuthorityTicket, beforeSign?: BeforeSign): Promise<unknown> {
    const p = parseOrThrow(perpsParamsSchema, unwrapParams(params), 'params');
    if (!submit && p.idempotencyKey !== undefined) throw new InvalidFieldError({ field: 'params.idempotencyKey', reason: 'is for perps_sendCommand only (perps_signCommand submits nothing)' });
    const cmd = commandFromBody(p.op, p.label);
    if (cmd.type === 'createProxy') throw unsupported('Sites cannot issue proxy keys; use the extension.');
    const funds = cmd.type === 'withdraw' || cmd.type === 'internalTransfer';
    const fundsTo = funds ? v.parse(fundsArgs, cmd.body.args) : undefined;
    if (fundsTo && fundsTo.account.toLowerCase() !== account.address.toLowerCase()) {
      throw new InvalidFieldError({ field: 'op.args.account', reason: 'must be the connected account' });
    }
    /** The client order ids this command sends (createOrders): no grant but the one placing them owns them after. */
    const sentCoids = cmd.type === 'createOrders' ? v.parse(orderArgs, cmd.body.args).flatMap((o) => (o.c ? [o.c] : [])) : [];
    const prepare = () => this.d.service.preparePerps(account.address, cmd, { submit, ...(p.exp === undefined ? {} : { exp: p.exp }) });
    // perps_signCommand is never covered: the site would hold a signed command to submit at any time.
    let grant: GrantCheck = submit ? await this.grantCheck(origin, account, perpsGrantRequest(cmd), (m) => this.perpsRef(m), ticket) : { covered: false as const };
    if (grant.covered) {
      // The use is checked and written while the artifact is built, the key read and the command signed;
      // nothing leaves before its checks passed (`beforeSend`) and it is durable (the journal record that
      // carries it, or its vault write: `grantUse`), issue #20. A store that fails its integrity check
      // then covers nothing: the signature is dropped and the request asks (below).
      const { counted } = grant;
      let tampered = false;
      const beforeSend = async () => {
        if (await counted) return;
        tampered = true;
        throw new TamperedRecordError();
      };
      const artifact = await prepare();
      const { lines } = describeArtifact(artifact, await this.symbol());
      // Client order ids sent under this grant are no other grant's to cancel (outside attack 29: another
      // site's grant still owned one, and its granted cancel reached this order).
      if (sentCoids.length) await this.d.grants?.forgetCoids(origin, account.address, sentCoids, { except: grant.grantId });
      await beforeSign?.(artifact);
      try {
        const result = await this.d.service.execute(artifact, artifact.digest, { origin, summary: `${lines[0] ?? cmd.type} (standing permission)`, still: grant.still, beforeSend, grantUse: grant.use, authority: grant.authority });
        // Recorded after the answer (best effort), before the next grant check (`recordOrdersAfter`).
        if (cmd.type === 'createOrders') this.recordOrdersAfter(grant.grantId, grant.seq, ackedOrders(result));
        return result;
      } catch (err) {
        if (!tampered) throw err;
      }
      grant = { covered: false, flag: TAMPERED_FLAG };
    }
    // A client order id the site sends outside its grant is no longer the grant's to cancel (issue #17 finding 5).
    if (sentCoids.length) {
      await this.recording;
      await this.d.grants?.forgetCoids(origin, account.address, sentCoids);
    }
    const view = await this.approveArtifact(
      origin,
      'perps',
      account,
      prepare,
      async (a) => [...(!grant.covered && grant.flag ? [grant.flag] : []), ...(a.kind === 'perps' ? await this.perpsFlags(account.address, perpsArtifactCommand(a)) : [])],
      funds ? TTL_FUNDS_MS : TTL_TRADING_MS,
      ticket,
    );
    await beforeSign?.(view.artifact);
    const result = await this.d.service.execute(view.artifact, view.digest, { origin, summary: view.lines[0] ?? cmd.type, authority: view.authority });
    // Best effort: the funds were sent and answered; a failed write must not turn the answer into an error a client retries (issue #20).
    if (fundsTo && submit) await this.rememberDestination(fundsTo.to).catch(() => undefined);
    return result;
  }

  private async clobPost(origin: string, account: OwnerInfo, params: unknown, ticket: AuthorityTicket, beforeSign?: BeforeSign): Promise<unknown> {
    const p = parseOrThrow(clobOrdersParamsSchema, unwrapParams(params), 'params');
    const { orders } = p;
    // Judged on what will be signed: the built orders' amounts (tick-rounded price, shares, USDC). An order
    // rounding changed (a price off the tick the exchange reports, a size past 2 decimals) is no grant's to cover.
    const built: ClobArtifact | undefined = this.d.grants ? await this.d.service.prepareClob(account.address, orders) : undefined;
    const rounded = built !== undefined && clobRoundingFlags(orders, built).length > 0;
    let grant: GrantCheck = rounded ? { covered: false } : built ? await this.grantCheck(origin, account, clobGrantRequest(built), (m) => this.clobRef(m), ticket) : { covered: false as const };
    if (grant.covered && !(await grant.counted)) grant = { covered: false, flag: TAMPERED_FLAG };
    let results: Awaited<ReturnType<SigningService['clobPostOrders']>>;
    if (grant.covered && built) {
      const artifact = built;
      const { lines } = describeArtifact(artifact, await this.symbol());
      await beforeSign?.(artifact);
      results = (await this.d.service.execute(artifact, artifact.digest, { origin, summary: `${lines[0] ?? 'orders'} (standing permission)`, still: grant.still, grantUse: grant.use, authority: grant.authority })) as typeof results;
    } else {
      const view = await this.approveArtifact(
        origin,
        'clob',
        account,
        () => this.d.service.prepareClob(account.address, orders),
        async (a) => [
          ...(!grant.covered && grant.flag ? [grant.flag] : []),
          ...(a.kind === 'clob' && a.orders.length > 1 ? [`A batch of ${a.orders.length} orders.`] : []),
          ...(a.kind === 'clob' ? clobRoundingFlags(orders, a) : []),
        ],
        TTL_TRADING_MS,
        ticket,
      );
      await beforeSign?.(view.artifact);
      results = (await this.d.service.execute(view.artifact, view.digest, { origin, summary: view.lines[0] ?? 'orders', authority: view.authority })) as typeof results;
    }
    return results.map((r) => (r.ok ? { success: true, orderID: r.orderID, status: r.status, errorMsg: '' } : { success: false, orderID: r.orderID, errorMsg: r.error.exchangeMessage }));
  }

  private async clobSign(origin: string, account: OwnerInfo, params: unknown, ticket: AuthorityTicket): Promise<unknown> {
    const p = parseOrThrow(clobSignParamsSchema, unwrapParams(params), 'params');
    checkL2Route(p.method, p.requestPath);
    const req = { method: p.method, requestPath: p.requestPath, ...(p.body === undefined ? {} : { body: p.body }) };
    const view = await this.approveArtifact(origin, 'l2', account, () => this.d.service.prepareL2(account.address, req), async () => [], TTL_TRADING_MS, ticket);
    return this.d.service.execute(view.artifact, view.digest, { origin, summary: `${p.method} ${p.requestPath.slice(0, 100)}`, authority: view.authority });
  }
}

/** The orders a perps createOrders answer accepted (`status: ok` with an integer `oid`), with their client order ids. */
function ackedOrders(result: unknown): OwnedOrder[] {
  if (!Array.isArray(result)) return [];
  return result.flatMap((a) => {
    if (typeof a !== 'object' || a === null || !('status' in a) || a.status !== 'ok' || !('oid' in a)) return [];
    const { oid } = a;
    if (typeof oid !== 'number' || !Number.isSafeInteger(oid) || oid < 0) return [];
    return [{ oid, ...('coid' in a && typeof a.coid === 'string' && /^[0-9a-f]{32}$/.test(a.coid) ? { coid: a.coid } : {}) }];
  });
}

/** Window flags of a requested grant: caps above what Countersign proposes from the account's equity (`lib/grants/offer.ts`), or no equity read. */
function grantFlags(limits: GrantLimits, offer: GrantOffer): string[] {
  const over = (asked: string, proposed: string | undefined) => proposed !== undefined && (toUnits(asked, 18) ?? 0n) > (toUnits(proposed, 18) ?? 0n);
  const flags: string[] = [];
  if (offer.equity === null) flags.push('Countersign could not read your account value: check the caps yourself.');
  if (over(limits.maxNotional, offer.proposal.maxNotional)) flags.push(`The site asks for ${limits.maxNotional} USDC per order: more than the ${offer.proposal.maxNotional} (10% of your account value) Countersign would propose.`);
  if (over(limits.dailyNotional, offer.proposal.dailyNotional)) flags.push(`The site asks for ${limits.dailyNotional} USDC per 24 h: more than your account value (${offer.proposal.dailyNotional}).`);
  return flags;
}
