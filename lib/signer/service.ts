/**
 * The background signing service (issue #4 §5): given a validated command and the account, picks the
 * right key (proxy for trading, owner for transfer / withdraw / proxy issuance and deletion —
 * PROTOCOL.md §1.3), signs, submits to the configured gateway, classifies the answer, and appends an
 * audit entry (what, for which origin, when, result — never a secret). An answered submission's entry is
 * queued on the log as the answer arrives and written after the answer goes back (issue #20: the append no
 * longer sits in front of the page's answer); every read of the log waits for queued entries
 * (`auditWritten`), and a failed write is reported through `onUnrecorded`, never as an error a client retries.
 *
 * Retries (PROTOCOL.md §2.4): fund-moving commands (withdraw, internal transfer) are **never** retried;
 * a missing answer throws `OutcomeUnknownError` and must be reconciled through the history reads.
 * Order-book orders are resent unchanged (same signature) on 425 (exponential backoff with jitter),
 * 429 (honouring a `Retry-After` of at most `MAX_CLOB_RETRY_WAIT_MS`; a longer one is the caller's answer) and 500 "order timed out"; never on 503.
 * A client-side weight meter per gateway refuses a perps command before the gateway would answer 429;
 * sites get at most half of it, and the person's closes and cancels draw on a reserve (lib/ratelimit/reserve.ts).
 *
 * Timeouts (issue #17 finding 7): every gateway request has a deadline (`requestTimeoutMs`, default
 * `DEFAULT_REQUEST_TIMEOUT_MS` = 15 s, covering headers and body); past it the call fails as "no answer"
 * (`Http.NetworkError`; `OutcomeUnknownError` for a perps command). The order-book retry loop above is
 * bounded too (at most 4 attempts), so no call of this service waits forever.
 *
 * The signing gate (issue #17, "Panic is total and bounded"): `halt(reason)` refuses every new signature
 * — `execute` (every perps / order-book / L2 artifact, page or popup), the order-book L2 requests
 * (cancels, heartbeats, reads), API-key creation — with `Signer.HaltedError` before anything is signed,
 * and resolves once the submissions already in flight have settled (at most `HALT_DRAIN_MS`). The only
 * exemption is the panic switch's own cancel and close commands, passed with `PANIC_PASS`: perps
 * `cancelAll` / `cancelOrders`, perps reduce-only IOC orders without trigger, order-book `DELETE /cancel-all`.
 * `resume()` lifts the gate (called by the next successful unlock).
 *
 * The authority epoch (`lib/authority/epoch.ts`): every signing call carries the ticket its request
 * captured at its start (`Held`, required: page requests, popup procedures, dead-man renewals and panic
 * each capture their own), checked with the gate right before each signature and again right before each
 * send (`signingCheck`, lib/authority/guard.ts) — REST, the perps session, every order-book attempt,
 * ClobAuth (`ownerKey`) — so nothing started before a lock, panic, revoke, switch or venue change leaves
 * after it. `halt` ends the epoch too; panic's own commands, started after it, hold the new one.
 */
import * as v from 'valibot';
import { getAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BaseError } from '../errors/base';
import { NetworkError } from '../http/json';
import { DEFAULT_REQUEST_TIMEOUT_MS, fetchWithTimeout, RequestTimeoutError } from '../http/timeout';
import { drawerOfCommand, ReserveBudget, type Drawer } from '../ratelimit/reserve';
import { createProxy, deleteProxy as deleteProxyCommand, type PerpsCommand } from '../perps/commands';
import { assertExp, commandTs, randomSalt, type PerpsEnvelope } from '../perps/envelope';
import { fetchPerpsDomains, perpsRead } from '../perps/client';
import { submitPerpsCommand, type PerpsSessionTransport } from '../perps/transport';
import { InvalidCommandAnswerError, parsePerpsAnswer, type Book, type PerpsReadAnswer } from '../perps/wire';
import type { PerpsReadName } from '../perps/reads';
import { PERPS_READS } from '../perps/reads';
import type { PerpsCommandDomain, PerpsWithdrawDomain } from '../perps/signing';
import { buildL2Headers, type L2Headers } from '../clob/auth';
import { orderRequestAmounts } from '../clob/amounts';
import type { ClobOrderRequest } from '../clob/request';
import { clobL2Request, createOrDeriveApiKey, parseClobAnswer } from '../clob/client';
import { clobBalanceSchema, clobCancelAnswerSchema, clobHeartbeatAnswerSchema, clobNegRiskSchema, clobTickSizeSchema, clobOrdersPageSchema, type ClobCancelAnswer, type ClobOpenOrder } from '../clob/wire';
import { ClobCancelLog } from '../clob/cancels';
import { ClobError, ClobMalformedAnswerError, ClobServerError, parseBatchResults, type BatchOrderResult } from '../clob/errors';
import { PerpsGatewayError } from '../perps/errors';
import { buildClobOrder, CLOB_MAX_BATCH, exchangeAddress, signDepositWalletOrder, toPostOrderBody, toPostOrdersBody, type PostOrderBody } from '../clob/order';
import { DepositWalletNotDeployedError, relayerClient } from '../relayer/client';
import { walletHasCode } from '../relayer/chain';
import { DEFAULT_SETTINGS } from '../settings';
import { assertPinnedPerpsDomain } from '../settings/domain';
import { assertVenueConfirmed, type ConfirmationSettings } from '../settings/confirmation';
import {
  ArtifactMismatchError,
  clobArtifact,
  l2Artifact,
  orderStructOf,
  perpsArtifact,
  perpsArtifactCommand,
  verifyArtifact,
  type ClobArtifact,
  type L2Artifact,
  type PerpsArtifact,
  type SigningArtifact,
} from './artifact';
import { requestJson } from '../http/json';
import { readClobMid, readClobTop } from '../clob/reads';
import { applyHeaderSet, fetchWithHeaderSet, type HeaderSet } from '../http/headers';
import type { AuditEntry, VaultDb } from '../vault/db';
import { appendAudit, auditLog, type AuditLog } from '../audit';
import type { AuditJournal, JournalRecord } from '../audit/journal';
import type { UseReservation } from '../grants/ledger';
import { fromUnits } from '../decimal';
import type { Vault } from '../vault/vault';
import { isEndedError, PERSON_SCOPES, type Authority, type AuthorityTicket } from '../authority/epoch';
import { guardedOwner, lastCheck, signingCheck, type Held } from '../authority/guard';

/**
 * Gateway settings (issue #4 §1: settings store). URLs are service roots; `headerSet` names the auth
 * headers (default `seed`); `perpsDomain` the pinned perps domain's name and version (issue #22; its
 * chain is `clobChainId`; absent: the default pin — never "whatever the gateway says"); the preset and
 * its real-money confirmations (`ConfirmationSettings`, issue #22).
 */
export type GatewaySettings = { perpsUrl: string; clobUrl: string; clobChainId: number; headerSet?: HeaderSet; relayerUrl?: string; rpcUrl?: string; perpsDomain?: { name: string; version: string } } & ConfirmationSettings;

/**
 * Thrown when a signed command got no answer (the connection failed or the deadline passed): it may or
 * may not have happened. `data` names the command (`command`) and, for orders, their client order ids
 * (`coids`, comma-separated) so the page can look them up; it is never resent by itself.
 */
export class OutcomeUnknownError extends BaseError {
  override name = 'Signer.OutcomeUnknownError';
  /** The page gets `data` (`command`, `coids`) to look the order up. */
  static override readonly pageData = true;
  /** EIP-1474 -32002 "resource unavailable": the venue did not answer. Never -32603, which dapp libraries retry (a second submission). */
  static override readonly code: number | undefined = -32002;
  /**
   * `what` names the command in the message (`order`, `withdrawal` …); `data` what the page looks it up
   * by (`command`, `coids`, `orderHashes`, `salt`, `ts`, `digest`); `reason` replaces the opening
   * sentence (default: no answer from the gateway).
   */
  constructor(
    readonly what: string,
    cause: unknown,
    data?: Record<string, string | number | boolean>,
    readonly reason = 'No answer from the gateway',
  ) {
    super(`${reason}: the ${what} may or may not have happened. Check the history before trying again.`, { cause, ...(data ? { data } : {}) });
  }

  /** The same error (message, cause) with `extra` added to its `data` (e.g. the page's `idempotencyKey`). */
  withData(extra: Record<string, string | number | boolean>): OutcomeUnknownError {
    return new OutcomeUnknownError(this.what, this.cause, { ...this.data, ...extra }, this.reason);
  }
}

/**
 * Whether `err`, thrown by a submission, is the venue's own refusal (a classified answer: nothing was
 * accepted) rather than a missing, unreadable or unrecorded answer. Anything else thrown once a signed
 * submission left — a network error, a timeout, a malformed answer, a storage or library error — means
 * the venue may hold it: `OutcomeUnknownError`, never a code a client retries (issue #20).
 */
function isKnownRefusal(err: unknown): err is BaseError {
  if (err instanceof ClobMalformedAnswerError || err instanceof InvalidCommandAnswerError) return false;
  if (!(err instanceof PerpsGatewayError || err instanceof ClobError)) return false;
  // A 5xx after the POST left says nothing about the order (a proxy's 502 / 504, an internal error after
  // matching): unknown (outside attack 2a/2b). Known: 503 (the venue's announced modes) and the
  // exchange's own "order timed out — safe to resubmit".
  if (err.status >= 500 && err.status !== 503) return err instanceof ClobServerError && err.retryable;
  return true;
}

/** Thrown when a command would exceed the gateway's weight budget (refused before sending). */
export class WeightBudgetError extends BaseError {
  override name = 'Signer.WeightBudgetError';
  /** EIP-1474 -32002 "resource unavailable" (nothing was sent; not -32005, which dapp libraries retry at once). */
  static override readonly code: number | undefined = -32002;
  readonly retryAfterMs: number;
  /** `site`: the refused request was a site's, over the sites' share (`SITE_SHARE`). */
  constructor(retryAfterMs: number, site = false) {
    super(`Slow down: this would exceed ${site ? "the share of the gateway's rate budget sites may use" : "the gateway's rate budget"}. Try again in ${Math.ceil(retryAfterMs / 1000)} s.`, { data: { retryAfterMs } });
    this.retryAfterMs = retryAfterMs;
  }
}

export type { ClobOrderRequest };

/** How long `halt` waits for submissions already in flight to settle (ms): 5 s. */
export const HALT_DRAIN_MS = 5_000;

/**
 * The panic switch's pass through the signing gate. Only `lib/background/panic.ts` passes it, and only
 * with its cancel and close commands; with anything else (or without it) a halted service refuses.
 */
export const PANIC_PASS: unique symbol = Symbol('countersign.panic');

/** Thrown by every signing path while the service is halted (panic running, until the next unlock). Nothing was signed. */
export class HaltedError extends BaseError {
  override name = 'Signer.HaltedError';
  static override readonly code = 4900;
  constructor(reason: string) {
    super(`Countersign signs nothing right now: ${reason}. Unlock it again to continue.`, { data: { reason } });
  }
}

/**
 * Options of `execute`: the audit's origin and summary, `audit: false` (the dead-man's renewals only),
 * `grantUse` (a submission covered by a grant: the use's reservation, `lib/grants/ledger.ts`), and the
 * gate's. A submission with a `grantUse` leaves only once `grantUse.durable`: its audit journal record
 * is opened through `grantUse.carry` and carries the use (the vault write runs beside the network round
 * trip); with no journal, the durable note is the use's vault write.
 */
export type ExecuteOptions = {
  origin: string;
  summary?: string;
  audit?: boolean;
  grantUse?: UseReservation;
} & GateOptions &
  Held;

/**
 * Per-call options of the gate and the deadline: `pass` (panic only), `timeoutMs` (this call's request
 * deadline, ms), `still` (the caller's own synchronous check, run with the gate right before each
 * signature — a grant-covered request passes `GrantService.assertCovering`; it throws to stop the signature).
 */
export type GateOptions = {
  pass?: typeof PANIC_PASS;
  timeoutMs?: number;
  still?: () => void;
  /**
   * The caller's last condition before a signed perps command leaves this service (sent, or returned
   * unsent): awaited after the signature, then the gate and `still` are checked again. A granted order
   * passes its use's write (issue #20: the write runs beside the key read and the signature); when it
   * throws, the signature is dropped and nothing is sent.
   */
  beforeSend?: () => Promise<void>;
};

/** The part of the gateway's answer to `CreateProxy` this service reads: the proxy's secret (a credential, stored in the vault only). */
const proxySecretSchema = v.object({ secret: v.pipe(v.string(), v.minLength(1)) });

/** Signs exactly `digest` (a 32-byte EIP-712 digest) with a local key. */
async function signExact(account: LocalAccount, digest: Hex): Promise<Hex> {
  if (!account.sign) throw new BaseError('This key cannot sign a digest.');
  return account.sign({ hash: digest });
}

/** Longest a panic command waits for its audit journal record before it is sent anyway (ms). */
const PANIC_JOURNAL_WAIT_MS = 500;

/**
 * The longest `Retry-After` (ms) an order-book request waits before it is sent again (the longest backoff
 * too): a venue asking for more — ten minutes of a spent budget, a day, a date, a number past any timer —
 * gets its `ClobError` back to the caller at once, so the person's cancel never hangs on it.
 */
export const MAX_CLOB_RETRY_WAIT_MS = 8_000;

/** Budgets the client meter keeps per gateway (the sandbox's defaults; the real ones are unshown). */
export const CLIENT_WEIGHT_BUDGETS = {
  request: { limit: 1_200, windowMs: 60_000 },
  action: { limit: 600, windowMs: 60_000 },
};

/**
 * What the signing service needs: the vault (keys), its database (audit log), the gateway settings (read
 * per call), and test seams — `fetchFn` (transport), `now` (Unix ms), `sleep` (retry back-off, ms).
 */
export type SigningServiceOptions = {
  vault: Vault;
  db: VaultDb;
  settings: () => Promise<GatewaySettings>;
  fetchFn?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Deadline of each gateway request (ms); default `DEFAULT_REQUEST_TIMEOUT_MS` (15 s). */
  requestTimeoutMs?: number;
  /**
   * The account's live perps session for the perps URL `perpsUrl`, when the background holds one
   * (issue #22): submitted commands it can carry go over it, the rest and the fallback over REST
   * (`lib/perps/transport.ts`). None: REST only.
   */
  session?: (account: string, perpsUrl: string) => PerpsSessionTransport | undefined;
  /**
   * Called when the audit entry of a submission the venue answered could not be written (`what` the kind
   * of submission, `err` the store's error): the answer already went back, so the person is told (the
   * background raises a notification). Default: nothing.
   */
  onUnrecorded?: (what: string, err: unknown) => void;
  /**
   * The audit journal (`lib/audit/journal.ts`): a record of each submission, stored before it is sent
   * and closed once its audit entry is written, so a worker that stops in between leaves a trace the next
   * one records. None (tests, Node): no journal.
   */
  journal?: AuditJournal;
  /** The background's one authority epoch (`lib/authority/epoch.ts`), shared with the grants and the provider. */
  authority: Authority;
};

/** Signs and submits perps commands and order-book orders for the vault's accounts (see the module docstring for retries, timeouts and the signing gate). */
export class SigningService {
  private readonly domains = new Map<string, Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }>>();
  private readonly requestMeter = new ReserveBudget(CLIENT_WEIGHT_BUDGETS.request);
  private readonly actionMeter = new ReserveBudget(CLIENT_WEIGHT_BUDGETS.action);
  private readonly marketInfo = new Map<string, Promise<{ tickSize: string; negRisk: boolean }>>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  /** The transport without a deadline: the configured fetch, with auth headers renamed for the profile's header set. */
  private readonly transport: typeof fetch;
  /** The transport with the default deadline (every request of this service goes through a deadline). */
  private readonly fetchFn: typeof fetch;
  private readonly requestTimeoutMs: number;
  /** Why the gate is closed (`halt`), or undefined while it is open. */
  private haltReason: string | undefined;
  /** Submissions that passed the gate, can open exposure and have not settled yet (what `halt` waits for). */
  private readonly inflight = new Set<Promise<unknown>>();
  /** The audit log, keyed by the vault's audit key (issue #17 §8). */
  private readonly auditLog: AuditLog;
  /** The authority epoch every signature and send of this service checks (`lib/authority/epoch.ts`). */
  readonly authority: Authority;

  constructor(private readonly o: SigningServiceOptions) {
    this.authority = o.authority;
    this.transport = fetchWithHeaderSet(o.fetchFn ?? ((input, init) => fetch(input, init)), async () => (await o.settings()).headerSet ?? 'seed');
    this.requestTimeoutMs = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.fetchFn = fetchWithTimeout(this.transport, this.requestTimeoutMs);
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.auditLog = auditLog(o.db, () => o.vault.auditKey(), { now: this.now });
  }

  /** The transport with a deadline of `timeoutMs` (ms; the default when undefined). */
  private fetchFor(timeoutMs: number | undefined): typeof fetch {
    return timeoutMs === undefined || timeoutMs === this.requestTimeoutMs ? this.fetchFn : fetchWithTimeout(this.transport, timeoutMs);
  }

  // ------------------------------------------------------------------------------------------
  // The signing gate

  /**
   * Closes the signing gate at once (synchronously, before the returned promise settles): from this
   * call on, every sign / execute / send path throws `HaltedError` before signing, except the panic
   * switch's own cancel and close commands passed with `PANIC_PASS`. Resolves when the submissions
   * already in flight that can open exposure (orders, leverage, transfers — not cancels, kill-switch
   * renewals, heartbeats or reads) have settled, or after `drainMs` (default `HALT_DRAIN_MS`, 5 s) —
   * `unsettled` counts those still without an answer then. Idempotent.
   */
  halt(reason: string, drainMs = HALT_DRAIN_MS): Promise<{ unsettled: number }> {
    // Everything started before ends here; panic's own commands start after. A halt while halted ends
    // nothing more: the gate already refuses all but panic's commands, which a second press must not drop.
    if (!this.halted) this.authority.end('all', 'panic');
    this.haltReason = reason;
    const pending = [...this.inflight];
    if (pending.length === 0) return Promise.resolve({ unsettled: 0 });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, drainMs)));
    return Promise.race([Promise.allSettled(pending), timeout]).then(() => {
      clearTimeout(timer);
      return { unsettled: pending.filter((p) => this.inflight.has(p)).length };
    });
  }

  /** Opens the signing gate again (the next successful unlock calls it). */
  resume(): void {
    this.haltReason = undefined;
  }

  /** Whether the gate is closed (`halt` was called and `resume` not yet). */
  get halted(): boolean {
    return this.haltReason !== undefined;
  }

  /**
   * Throws `HaltedError` while halted, unless `pass` is `PANIC_PASS` and `exempt` (the request is one of
   * panic's own cancel / close commands).
   */
  private gate(pass: GateOptions['pass'], exempt: () => boolean): void {
    if (this.haltReason === undefined) return;
    if (pass === PANIC_PASS && exempt()) return;
    throw new HaltedError(this.haltReason);
  }

  /** Counts `p` as in flight until it settles (only submissions that can open exposure: see `opensExposure`). */
  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = () => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  /** Appends `entry` (now); `afterThisTask`: queued now, written from the next task on (`appendAudit`). */
  private async audit(entry: Pick<AuditEntry, 'origin' | 'account' | 'kind' | 'summary' | 'result'> & { digest?: string | undefined; detail?: string | undefined }, afterThisTask = false): Promise<void> {
    await appendAudit(this.auditLog, { at: this.now(), ...entry }, { afterThisTask });
  }

  /**
   * The audit entry of an answered submission (issue #20, page path): `append` is already queued on the
   * log (entries stay in call order, and every read of the log waits for it — `auditWritten`), and the
   * answer goes back without waiting for the write (which starts in the next task: `afterThisTask`, so
   * its sealing does not hold the answer's way back to the page either). A failed write cannot turn an accepted order into an
   * error a client would retry (a second order); the person is told instead (`onUnrecorded`, with what was
   * sent: "order", "withdrawal", a command type).
   */
  private afterAnswer(append: Promise<void>, what: string, journalId?: string): void {
    const close = (): void => {
      if (journalId !== undefined) void this.o.journal?.close(journalId).catch(() => undefined);
    };
    append.then(close, (err: unknown) => {
      this.o.onUnrecorded?.(what, err);
      close(); // the person was told
    });
  }

  /**
   * Cached command and withdraw domains of the configured perps gateway (PROTOCOL.md §1.1), checked
   * against the pinned domain on every call: throws `PerpsDomainMismatchError` (issue #22) when they differ.
   */
  async perpsDomains(): Promise<{ domain: PerpsCommandDomain; withdrawDomain: PerpsWithdrawDomain }> {
    const { perpsUrl, perpsDomain = DEFAULT_SETTINGS.perpsDomain, clobChainId } = await this.o.settings();
    let d = this.domains.get(perpsUrl);
    if (!d) {
      d = fetchPerpsDomains(perpsUrl, this.fetchFn);
      d.catch(() => this.domains.delete(perpsUrl));
      this.domains.set(perpsUrl, d);
    }
    const domains = await d;
    assertPinnedPerpsDomain({ ...perpsDomain, chainId: clobChainId }, domains.domain);
    return domains;
  }

  /** Takes `request` and `action` weight of `gateway`'s client budgets for `who`; `WeightBudgetError` when it does not fit. */
  private meter(gateway: string, request: number, action: number, who: Drawer): void {
    const t = this.now();
    const wait = Math.max(this.requestMeter.check(gateway, request, who, t), this.actionMeter.check(gateway, action, who, t));
    if (wait > 0) throw new WeightBudgetError(wait, who === 'site');
    this.requestMeter.record(gateway, request, who, t);
    this.actionMeter.record(gateway, action, who, t);
  }

  /**
   * Builds the perps artifact for `command` (issue #14 §1): fresh salt, `ts` now (ms; seconds for
   * withdraw), optional `exp` (Unix ms, checked against now), the domain and the key that will sign.
   * Nothing is signed. Throws `InvalidFieldError` (`exp`), `KeyNotFoundError` (no unexpired proxy).
   */
  async preparePerps(account: string, command: PerpsCommand, opts: { submit: boolean; exp?: number }): Promise<PerpsArtifact> {
    const now = this.now();
    if (opts.exp !== undefined) assertExp(opts.exp, now);
    const { domain, withdrawDomain } = await this.perpsDomains();
    const signerAddress = command.signer === 'owner' ? getAddress(account) : (await this.o.vault.proxyFor(account)).info.proxy;
    return perpsArtifact({
      account: getAddress(account),
      key: command.signer,
      signerAddress,
      domain: command.struct === 'Withdraw' ? withdrawDomain : domain,
      endpoint: command.endpoint,
      envelope: {
        op: command.body,
        salt: randomSalt(),
        ts: commandTs(command, now),
        ...(opts.exp === undefined ? {} : { exp: opts.exp }),
        ...(command.label === undefined ? {} : { label: command.label }),
      },
      submit: opts.submit,
      builtAt: now,
    });
  }

  /**
   * Builds the order-book artifact for 1-15 order requests: amounts at each token's tick size, the
   * order structs (salt, timestamp ms, maker/signer by signature type), the exchange contract by the
   * market's negative-risk flag, and the unsigned `POST /order` bodies. Nothing is signed.
   */
  async prepareClob(account: string, orders: readonly ClobOrderRequest[]): Promise<ClobArtifact> {
    if (orders.length < 1 || orders.length > CLOB_MAX_BATCH) toPostOrdersBody(new Array(orders.length));
    const { clobChainId } = await this.o.settings();
    const creds = await this.o.vault.clobCredentials(account);
    if (creds.info.signatureType === 3 && creds.info.funder) await this.requireDeployed(creds.info.funder);
    const signer = getAddress(account);
    const now = this.now();
    const out: ClobArtifact['orders'][number][] = [];
    for (const req of orders) {
      const m = await this.market(req.tokenId);
      const amounts = orderRequestAmounts({ ...req, tickSize: m.tickSize });
      const order = buildClobOrder({
        signer,
        signatureType: creds.info.signatureType,
        ...(creds.info.funder ? { funder: creds.info.funder } : {}),
        tokenId: req.tokenId,
        side: req.side,
        makerAmount: amounts.makerAmount,
        takerAmount: amounts.takerAmount,
        timestampMs: now,
      });
      const full = toPostOrderBody({
        order,
        signature: '0x',
        owner: creds.apiKey,
        orderType: req.orderType,
        postOnly: req.postOnly ?? false,
        ...(req.expiration === undefined ? {} : { expiration: req.expiration }),
        nowMs: now,
      });
      const { signature: _placeholder, ...unsigned } = full.order;
      out.push({ verifyingContract: exchangeAddress({ negRisk: m.negRisk }), negRisk: m.negRisk, tickSize: m.tickSize, body: { ...full, order: unsigned } });
    }
    return clobArtifact({ account: signer, signerAddress: signer, chainId: clobChainId, orders: out, builtAt: now });
  }

  /**
   * A type-3 order waits until its deposit wallet is deployed (relayer `GET /deployed`, setting
   * `relayerUrl`; PROTOCOL.md §4.7: otherwise the venue answers "the order signer address has to be the
   * address of the API KEY"). Throws `DepositWalletNotDeployedError` before anything is built or signed.
   */
  private async requireDeployed(wallet: Address): Promise<void> {
    const { relayerUrl = DEFAULT_SETTINGS.relayerUrl, rpcUrl = DEFAULT_SETTINGS.rpcUrl, clobChainId } = await this.o.settings();
    // The relayer and the chain must agree (code at the address): never the relayer's word alone (issue #21 attack D1).
    const deployed = (await relayerClient(relayerUrl, this.fetchFn).deployed(wallet)) && (await walletHasCode(rpcUrl, wallet, clobChainId, this.fetchFn));
    if (!deployed) throw new DepositWalletNotDeployedError(wallet);
  }

  /** The service's transport (header-set renaming and the default deadline), for the deposit-wallet procedures' relayer, RPC and order-book calls. */
  gatewayFetch(): typeof fetch {
    return this.fetchFn;
  }

  /** Builds the L2 artifact of a request the caller sends itself (`timestamp` now, Unix s). */
  async prepareL2(account: string, req: { method: string; requestPath: string; body?: string }): Promise<L2Artifact> {
    await this.o.vault.clobCredentials(account); // fails early when there are none
    const now = this.now();
    return l2Artifact({ account: getAddress(account), ...req, timestamp: Math.floor(now / 1000), builtAt: now });
  }

  /**
   * Signs exactly `artifact` — after `verifyArtifact` recomputed every digest from its content and
   * matched the binding digest against `approvedDigest` — and, when it says so, sends exactly its body.
   * Returns: perps, the gateway's success body (submit) or the signed envelope; clob, one result per
   * order; l2, the five headers. Throws `ArtifactMismatchError` (nothing signed) when the artifact, the
   * key or the API key changed since it was built, and the gateway's typed errors otherwise.
   */
  execute(artifact: SigningArtifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<unknown> {
    switch (artifact.kind) {
      case 'perps':
        return this.executePerps(artifact, approvedDigest, opts).then((r) => (artifact.submit ? r.body : r.envelope));
      case 'clob':
        return this.executeClob(artifact, approvedDigest, opts);
      case 'l2':
        return this.executeL2(artifact, approvedDigest, opts);
    }
  }

  /** `execute` for a perps artifact: the signed envelope, and the gateway's success body when it was submitted. */
  executePerps(artifact: PerpsArtifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    return this.guarded(artifact, opts, (recheck) => this.runPerps(artifact, approvedDigest, opts, recheck));
  }

  /** `execute` for an order-book artifact: one result per order. */
  executeClob(artifact: ClobArtifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<BatchOrderResult[]> {
    return this.guarded(artifact, opts, (recheck) => this.runClob(artifact, approvedDigest, opts, recheck));
  }

  /** `execute` for an L2 artifact: the five headers, named for the configured header set. */
  executeL2(artifact: L2Artifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<Record<string, string>> {
    return this.guarded(artifact, opts, (recheck) => this.runL2(artifact, approvedDigest, opts, recheck));
  }

  /**
   * The signing gate around one artifact: throws `HaltedError` now unless it may pass, rejects with
   * `VenueNotConfirmedError` while a live preset is unconfirmed (not for panic's pass), runs `body` with a
   * `recheck` to call right before each signature (a halt may come meanwhile), and counts the run as in
   * flight when it can open exposure.
   */
  private guarded<T>(artifact: SigningArtifact, opts: GateOptions & Held, body: (recheck: () => void) => Promise<T>): Promise<T> {
    const exempt = () => panicExempt(artifact);
    const recheck = signingCheck(() => this.gate(opts.pass, exempt), this.authority, opts.authority, opts.still);
    recheck();
    // A live venue preset the person has not confirmed signs nothing (issue #22); panic's own commands pass.
    const confirmed = opts.pass === PANIC_PASS && exempt() ? Promise.resolve() : this.o.settings().then(assertVenueConfirmed);
    const running = confirmed.then(async () => {
      const out = await body(recheck);
      // Handing a signature back (L2 headers, a sign-only perps envelope) is its send: an end while it was recorded withholds it.
      if (handedBack(artifact)) recheck();
      return out;
    });
    return opensExposure(artifact) ? this.track(running) : running;
  }

  /** The audit fields every entry of `artifact` shares. */
  private auditBase(artifact: SigningArtifact, opts: ExecuteOptions) {
    return { origin: opts.origin, account: artifact.account.toLowerCase(), summary: opts.summary ?? artifact.kind, digest: artifact.digest };
  }

  /** Signs a perps artifact past the gate (and submits it when it says so); `recheck` runs right before the signature. */
  private async runPerps(artifact: PerpsArtifact, approvedDigest: Hex, opts: ExecuteOptions, recheck: () => void): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    // `audit: false` (the dead-man's renewals only) skips the per-signature perps entry; the caller logs instead.
    const audit = opts.audit === false ? async () => undefined : (entry: Omit<AuditEntry, 'at'>, afterThisTask?: boolean) => this.audit(entry, afterThisTask);
    const base = this.auditBase(artifact, opts);
    const { op, salt, ts, exp, label } = artifact.envelope;
    const kind = `perps.${op.type}`;
    // A submission's journal record is opened first, stored beside the digest check, the key read and the
    // signature, and awaited before the send (its entry is written after the answer goes back:
    // `lib/audit/journal.ts`). A record of an artifact that fails its check is closed (nothing sent).
    const journal = artifact.submit && opts.audit !== false ? this.openJournal({ at: this.now(), ...base, kind }, opts) : undefined;
    let sent = false;
    try {
      const digests = verifyArtifact(artifact, approvedDigest);
      const signer = artifact.key === 'owner' ? await this.o.vault.ownerAccount(artifact.account) : (await this.o.vault.proxyFor(artifact.account)).signer;
      if (signer.address.toLowerCase() !== artifact.signerAddress.toLowerCase()) throw new ArtifactMismatchError('the signing key changed');
      recheck();
      const envelope: PerpsEnvelope = { op, sig: await signExact(signer, digests[0]!), salt, ts, ...(exp === undefined ? {} : { exp }), ...(label === undefined ? {} : { label }) };
      const durable = opts.grantUse?.durable; // the journal record carrying the use, or (none) its vault write
      if (opts.beforeSend || journal || durable) {
        await Promise.all([opts.beforeSend?.(), journal && this.noted(journal.stored, opts), durable]);
        recheck(); // a halt, revoke or lock while it waited: the signature is dropped
      }
      if (!artifact.submit) {
        await audit({ ...base, kind: `${kind}.sign`, result: 'ok' });
        return { envelope };
      }
      sent = true;
      return await this.sendPerps(artifact, envelope, digests, opts, audit, base, journal?.id, recheck);
    } finally {
      // Nothing left: no record to keep, nor its use (the use of an unsent command need not survive a stop).
      if (journal && !sent) void this.o.journal?.discard(journal.id).catch(() => undefined);
    }
  }

  /**
   * Opens the audit journal record of a submission (undefined without a journal). With `opts.grantUse`
   * the reservation opens it, carrying the use until the use is in the vault (`UseReservation.carry`).
   */
  private openJournal(record: JournalRecord, opts: ExecuteOptions): { id: string; stored: Promise<void> } | undefined {
    const journal = this.o.journal;
    if (!journal) return undefined;
    return opts.grantUse ? opts.grantUse.carry(journal, record) : journal.open(record);
  }

  /**
   * A journal record's `stored`: its refusal stops the send (`JournalError`, nothing sent), except for
   * the panic switch's own commands — panic finishes whatever the storage does: they wait for the record
   * at most `PANIC_JOURNAL_WAIT_MS`, and go whether it was stored or refused.
   */
  private noted(stored: Promise<void>, opts: ExecuteOptions): Promise<void> {
    if (opts.pass !== PANIC_PASS) return stored;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, PANIC_JOURNAL_WAIT_MS)));
    return Promise.race([stored.catch(() => undefined), late]).finally(() => clearTimeout(timer));
  }

  /** `runPerps` from the meter on: sends the signed envelope and classifies the answer; `journalId` is closed once its entry is written. */
  private async sendPerps(
    artifact: PerpsArtifact,
    envelope: PerpsEnvelope,
    digests: readonly Hex[],
    opts: ExecuteOptions,
    audit: (entry: Omit<AuditEntry, 'at'>, afterThisTask?: boolean) => Promise<void>,
    base: ReturnType<SigningService['auditBase']>,
    journalId: string | undefined,
    recheck: () => void,
  ): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    const { op, salt, ts } = envelope;
    const kind = `perps.${op.type}`;
    const close = (): void => {
      if (journalId !== undefined) void this.o.journal?.close(journalId).catch(() => undefined);
    };
    const { perpsUrl } = await this.o.settings();
    const { weight } = perpsArtifactCommand(artifact);
    // Panic's cancels and closes skip the client-side meter: a site that spent the budget must not block them (the gateway decides).
    try {
      recheck(); // the settings read above: an end that came meanwhile drops the signature here
      if (opts.pass !== PANIC_PASS) this.meter(perpsUrl, weight.request, weight.action, drawerOfCommand(opts.origin, op, opts.grantUse !== undefined));
    } catch (err) {
      if (journalId !== undefined) void this.o.journal?.discard(journalId).catch(() => undefined); // refused before the send
      throw err;
    }
    // What the page can look the command up by when no answer came: its client order ids (orders), and
    // always the signed envelope's salt and ts and the EIP-712 digest signed (issue #20).
    const coids = op.type === 'createOrders' ? op.args.flatMap((o) => (o.c === undefined ? [] : [o.c])) : [];
    const lookup = { command: op.type, ...(coids.length ? { coids: coids.join(',') } : {}), salt, ts, digest: digests.join(',') }; // one digest for a perps command
    const what = op.type === 'withdraw' ? 'withdrawal' : op.type === 'internalTransfer' ? 'transfer' : op.type;
    let result: unknown;
    const { beforeSend, refused } = lastCheck(recheck);
    try {
      // The one send point, two transports (issue #22): the session when live for this account and proxy, else REST.
      result = await submitPerpsCommand({ perpsUrl, command: artifact, envelope, signerAddress: artifact.signerAddress, fetchFn: this.fetchFor(opts.timeoutMs), timeoutMs: opts.timeoutMs ?? this.requestTimeoutMs, session: this.o.session?.(artifact.account, perpsUrl), beforeSend });
    } catch (err) {
      if (refused(err)) {
        if (journalId !== undefined) void this.o.journal?.discard(journalId).catch(() => undefined);
        throw err;
      }
      if (!isKnownRefusal(err)) {
        await audit({ ...base, kind, result: 'unknown' }).then(close, () => undefined);
        throw new OutcomeUnknownError(what, err, lookup);
      }
      // The venue refused: that is the answer, even when recording it fails.
      await audit({ ...base, kind, result: 'error', detail: err.shortMessage }).then(close, () => undefined);
      throw err;
    }
    // Sent and answered: the answer goes back now, its entry queued right behind it (`afterAnswer`).
    this.afterAnswer(audit({ ...base, kind, result: 'ok' }, true), what, journalId);
    return { envelope, body: result };
  }

  /** Signs an order-book artifact's orders past the gate and posts them; `recheck` runs right before the signatures. */
  private async runClob(artifact: ClobArtifact, approvedDigest: Hex, opts: ExecuteOptions, recheck: () => void): Promise<BatchOrderResult[]> {
    const digests = verifyArtifact(artifact, approvedDigest);
    const base = this.auditBase(artifact, opts);
    const audit = { ...base, kind: 'clob.postOrders' };
    // The journal record, stored beside the signatures and awaited before the post (`lib/audit/journal.ts`).
    const journal = this.openJournal({ at: this.now(), ...audit }, opts);
    const close = (): void => {
      if (journal !== undefined) void this.o.journal?.close(journal.id).catch(() => undefined);
    };
    const bodies: PostOrderBody[] = [];
    try {
      const owner = await this.o.vault.ownerAccount(artifact.account);
      if (owner.address.toLowerCase() !== artifact.signerAddress.toLowerCase()) throw new ArtifactMismatchError('the signing key changed');
      const creds = await this.o.vault.clobCredentials(artifact.account);
      if (artifact.orders.some((o) => o.body.owner !== creds.apiKey)) throw new ArtifactMismatchError('the API key changed');
      const wallet = await this.o.vault.depositWallet(artifact.account);
      const beacon = wallet?.kind === 'beacon' ? { beacon: wallet.beacon } : {};
      recheck(); // nothing awaits between the gate and the first signature
      for (const [i, o] of artifact.orders.entries()) {
        // Type 3: the ERC-7739 wrap of the same order hash (PROTOCOL.md §4.5), signed by the owner key for its deposit wallet.
        const signature =
          o.body.order.signatureType === 3
            ? await signDepositWalletOrder(owner, { chainId: artifact.chainId, verifyingContract: o.verifyingContract, order: orderStructOf(o.body), ...beacon })
            : await signExact(owner, digests[i]!);
        bodies.push({ ...o.body, order: { ...o.body.order, signature } });
      }
      const durable = opts.grantUse?.durable; // the journal record carrying the use, or (none) its vault write
      if (journal || durable) await Promise.all([journal && this.noted(journal.stored, opts), durable]);
      recheck(); // a halt or an end while it waited: the signatures are dropped
    } catch (err) {
      if (journal !== undefined) void this.o.journal?.discard(journal.id).catch(() => undefined); // nothing was posted
      throw err;
    }
    const lookup = { command: 'postOrders', orderHashes: digests.join(',') };
    let results: BatchOrderResult[];
    try {
      results =
        artifact.path === '/order'
          ? parseBatchResults([await this.l2(artifact.account, 'POST', '/order', bodies[0], { authority: opts.authority })], 1)
          : parseBatchResults(await this.l2(artifact.account, 'POST', '/orders', bodies, { authority: opts.authority }), bodies.length);
    } catch (err) {
      // Refused by the gate or the authority check right before an attempt: that attempt was not sent.
      if (err instanceof HaltedError || isEndedError(err)) {
        if (journal !== undefined) void this.o.journal?.discard(journal.id).catch(() => undefined);
        throw err;
      }
      // Signed and posted, no (readable) answer: the orders may rest at the exchange (never resent by the page path).
      if (!isKnownRefusal(err)) {
        await this.audit({ ...audit, result: 'unknown', detail: err instanceof BaseError ? err.shortMessage : 'error' }).then(close, () => undefined);
        throw new OutcomeUnknownError('order', err, lookup);
      }
      await this.audit({ ...audit, result: 'error', detail: err.shortMessage }).then(close, () => undefined);
      throw err;
    }
    // Posted and answered: the answer goes back now, its entry queued right behind it (`afterAnswer`).
    this.afterAnswer(this.audit({ ...audit, result: 'ok' }, true), 'order', journal?.id);
    return results;
  }

  /** Builds an L2 artifact's headers past the gate; `recheck` runs right before the HMAC. */
  private async runL2(artifact: L2Artifact, approvedDigest: Hex, opts: ExecuteOptions, recheck: () => void): Promise<Record<string, string>> {
    verifyArtifact(artifact, approvedDigest);
    const base = this.auditBase(artifact, opts);
    const creds = await this.o.vault.clobCredentials(artifact.account);
    recheck();
    const headers = buildL2Headers({
      address: creds.info.account,
      credentials: creds,
      timestamp: artifact.timestamp,
      method: artifact.method,
      requestPath: artifact.requestPath,
      ...(artifact.body === undefined ? {} : { body: artifact.body }),
    });
    await this.audit({ ...base, kind: 'clob.l2', result: 'ok' });
    this.clobCancels.record(artifact.method, artifact.requestPath, artifact.body);
    // The caller sends these itself: name them as the configured gateway expects.
    return applyHeaderSet(headers, (await this.o.settings()).headerSet ?? 'seed');
  }

  /** Signs `command` for `account` with the right key, holding `opts.authority`; returns the envelope (nothing sent). */
  async perpsSign(account: string, command: PerpsCommand, opts: { exp?: number; origin?: string } & Held): Promise<PerpsEnvelope> {
    const a = await this.preparePerps(account, command, { submit: false, ...(opts.exp === undefined ? {} : { exp: opts.exp }) });
    return (await this.executePerps(a, a.digest, { origin: opts.origin ?? 'extension', summary: command.type, authority: opts.authority })).envelope;
  }

  /**
   * Signs and submits `command` for `account` (the popup path: the click is the consent); returns the
   * gateway's success body. Throws the gateway's typed error, `WeightBudgetError`, or (no answer)
   * `OutcomeUnknownError`. `audit: false` writes no per-signature audit entry: only the dead-man's
   * renewals use it, and it logs one entry per armed period instead (issue #17 §6).
   */
  async perpsSend(account: string, command: PerpsCommand, opts: { origin: string; exp?: number; summary?: string; audit?: boolean } & GateOptions & Held): Promise<unknown> {
    const { authority } = opts; // held from the caller's start, whatever it awaits
    const a = await this.preparePerps(account, command, { submit: true, ...(opts.exp === undefined ? {} : { exp: opts.exp }) });
    return this.execute(a, a.digest, { origin: opts.origin, summary: opts.summary ?? command.type, authority, ...(opts.pass ? { pass: opts.pass } : {}), ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }), ...(opts.audit === false ? { audit: false } : {}) });
  }

  /**
   * Read `name` (PROTOCOL.md §3.2) — with `account`'s proxy headers when the read needs them
   * (PROTOCOL.md §1.4) — metered against the request budget for `opts.draw` (default `person`; `site` for
   * a read a page's request needs, `reserve` for panic's); the answer validated by
   * `PERPS_READ_ANSWERS[name]` (`Perps.InvalidAnswerError` otherwise). `opts.timeoutMs` this read's
   * deadline (ms). Not gated (nothing is signed). Throws `KeyNotFoundError` (no proxy), `WeightBudgetError`.
   */
  async perpsRead<N extends PerpsReadName>(account: string | undefined, name: N, query?: Record<string, string | number | undefined>, opts: { timeoutMs?: number; draw?: Drawer } = {}): Promise<PerpsReadAnswer<N>> {
    const { perpsUrl } = await this.o.settings();
    const r = PERPS_READS[name];
    let auth: { proxy: string; secret: string } | undefined;
    if (r.auth === 'proxy-headers') {
      const p = await this.o.vault.proxyFor(account ?? '');
      auth = { proxy: p.info.proxy, secret: p.secret };
    }
    this.meter(perpsUrl, r.weight, 0, opts.draw ?? 'person');
    return perpsRead(perpsUrl, name, { ...(auth ? { auth } : {}), ...(query ? { query } : {}), fetchFn: this.fetchFor(opts.timeoutMs) });
  }

  /**
   * The public book of a perps instrument (`GET /v1/info/book`, not metered): `[price, quantity]` levels,
   * best first, validated. Throws `BaseError` (no book: not 200) or `Perps.InvalidAnswerError`.
   */
  async perpsBook(iid: number): Promise<Book> {
    const { perpsUrl } = await this.o.settings();
    const res = await requestJson(`${perpsUrl}/v1/info/book?instrument_id=${iid}`, { method: 'GET' }, this.fetchFn);
    if (res.status !== 200) throw new BaseError('The gateway has no book for this instrument.');
    return parsePerpsAnswer('book', res.body);
  }

  /**
   * Issues a new proxy key: generates it here, has the owner sign `CreateProxy`, sends it, and stores
   * the key with the secret the gateway returns. `expiry` Unix ms. Returns non-secret info only.
   */
  async issueProxy(account: string, opts: { expiry: number; label?: string; origin?: string } & Held) {
    const privateKey = generatePrivateKey();
    const proxy = privateKeyToAccount(privateKey).address;
    const command = createProxy({ owner: account, proxy, expiry: opts.expiry, ...(opts.label ? { label: opts.label } : {}) });
    const res = v.safeParse(proxySecretSchema, await this.perpsSend(account, command, { origin: opts.origin ?? 'extension', summary: `issue proxy ${proxy}`, authority: opts.authority }));
    if (!res.success) throw new BaseError('The gateway did not return a proxy secret.');
    return this.o.vault.putProxy({ account, privateKey, secret: res.output.secret, proxy, expiry: opts.expiry, ...(opts.label ? { label: opts.label } : {}) });
  }

  /** Deletes a proxy: owner-signed deleteProxy at the gateway first (holding `opts.authority`), then the local record. */
  async deleteProxy(account: string, proxy: string, opts: { origin?: string } & Held): Promise<void> {
    await this.perpsSend(account, deleteProxyCommand({ proxy }), { origin: opts.origin ?? 'extension', summary: `delete proxy ${proxy}`, authority: opts.authority });
    await this.o.vault.deleteProxy(proxy);
  }

  /** The check (`signingCheck`: the gate, no panic pass, and `ticket`) of a signature or send outside a venue command. */
  ownerCheck(ticket: AuthorityTicket): () => void {
    return signingCheck(() => this.gate(undefined, () => false), this.authority, ticket);
  }

  /**
   * `account`'s owner key for a signature outside a venue command — ClobAuth, a deposit-wallet batch —
   * guarded: every signature it makes runs `check` (`ownerCheck(ticket)`) right before; `check` is for the
   * caller to run again right before it sends. Checked at the call, and the venue must be confirmed (an
   * owner-key signature on a real-money venue only once confirmed). Throws `HaltedError`, the ticket's
   * ended error (`endedError`), `VenueNotConfirmedError`, the vault's errors.
   */
  async ownerKey(account: string, ticket: AuthorityTicket): Promise<{ owner: LocalAccount; check: () => void }> {
    const check = this.ownerCheck(ticket);
    check();
    assertVenueConfirmed(await this.o.settings());
    const owner = await this.o.vault.ownerAccount(account);
    return { owner: guardedOwner(owner, check), check };
  }

  // ------------------------------------------------------------------------------------------
  // Order book

  /**
   * Creates (or, when the nonce is used, derives) CLOB credentials for `account` and stores them. Each
   * ClobAuth signature is made with the guarded owner key (`ownerKey`: the gate and `opts.authority` checked
   * right before it), and checked again right before its request. Throws `HaltedError`, the
   * ticket's ended error (`endedError`), `VenueNotConfirmedError`, the exchange's `ClobError`.
   */
  async clobCreateOrDerive(account: string, opts: { nonce?: number } & Held) {
    const { owner, check } = await this.ownerKey(account, opts.authority);
    const { clobUrl, clobChainId } = await this.o.settings();
    const { credentials, derived } = await createOrDeriveApiKey(
      clobUrl,
      owner,
      { chainId: clobChainId, timestamp: Math.floor(this.now() / 1000), nonce: opts.nonce ?? 0 },
      this.fetchFn,
      check, // before each ClobAuth signature and its request (the derive after a refused create too)
    );
    // The same owner derives the same key whatever the signature type: an account already set up keeps its
    // type and funder (a deposit-wallet account is never turned back into type 0 by re-deriving its key).
    const kept = (await this.o.vault.hasClobCredentials(account)) ? (await this.o.vault.clobCredentials(account)).info : undefined;
    const info = await this.o.vault.putClobCredentials({ account, ...credentials, nonce: opts.nonce ?? 0, ...(kept ? { signatureType: kept.signatureType, funder: kept.funder } : {}) });
    return { info, derived };
  }

  private async market(tokenId: string): Promise<{ tickSize: string; negRisk: boolean }> {
    const { clobUrl } = await this.o.settings();
    const key = `${clobUrl}|${tokenId}`;
    let m = this.marketInfo.get(key);
    if (!m) {
      m = (async () => {
        const q = `?token_id=${encodeURIComponent(tokenId)}`;
        const [tick, neg] = await Promise.all([
          requestJson(`${clobUrl}/tick-size${q}`, { method: 'GET' }, this.fetchFn),
          requestJson(`${clobUrl}/neg-risk${q}`, { method: 'GET' }, this.fetchFn),
        ]);
        const t = v.safeParse(clobTickSizeSchema, tick.body);
        const n = v.safeParse(clobNegRiskSchema, neg.body);
        if (tick.status !== 200 || !t.success || !n.success) throw new BaseError('The exchange has no order book for this token.');
        return { tickSize: String(t.output.minimum_tick_size), negRisk: n.output.neg_risk };
      })();
      m.catch(() => this.marketInfo.delete(key));
      this.marketInfo.set(key, m);
    }
    return m;
  }

  /**
   * Maker/taker amounts of order requests at each token's tick size (nothing signed): what an approval
   * shows before the orders are built and signed.
   */
  async clobQuote(orders: readonly ClobOrderRequest[]) {
    const out = [];
    for (const req of orders) {
      const m = await this.market(req.tokenId);
      out.push({ ...m, amounts: orderRequestAmounts({ ...req, tickSize: m.tickSize }) });
    }
    return out;
  }

  /**
   * The hold of one of the person's order-book reads, started by this call (`PERSON_SCOPES`, taken here:
   * a read awaits nothing before it, and moves nothing).
   */
  private readHold(): Held {
    return { authority: this.authority.capture(PERSON_SCOPES) };
  }

  /**
   * One L2-signed request (an HMAC with the API secret), retried on 425 / 429 / "order timed out" (at
   * most 4 attempts). Gated: each attempt is a new signature; only panic's `DELETE /cancel-all` passes.
   */
  private l2(account: string, method: string, requestPath: string, body: unknown, opts: GateOptions & Held): Promise<unknown> {
    const exempt = () => method === 'DELETE' && requestPath === '/cancel-all' && body === undefined;
    const recheck = signingCheck(() => this.gate(opts.pass, exempt), this.authority, opts.authority);
    recheck();
    return this.l2Run(account, method, requestPath, body, opts, recheck);
  }

  private async l2Run(account: string, method: string, requestPath: string, body: unknown, opts: GateOptions, recheck: () => void): Promise<unknown> {
    this.clobCancels.record(method, requestPath, body);
    const { clobUrl } = await this.o.settings();
    const creds = await this.o.vault.clobCredentials(account);
    const owner = creds.info.account;
    let attempt = 0;
    for (;;) {
      recheck();
      try {
        return await clobL2Request(
          clobUrl,
          { address: owner, credentials: creds, method, requestPath, ...(body === undefined ? {} : { body }), timestamp: Math.floor(this.now() / 1000) },
          this.fetchFor(opts.timeoutMs),
        );
      } catch (err) {
        attempt++;
        // Panic's own cancel is retried by panic, within its bound (lib/background/panic-requests.ts).
        // A wait the venue names past `MAX_CLOB_RETRY_WAIT_MS` is not waited: the caller hears "slow down" at once.
        if (!(err instanceof ClobError) || !err.retryable || attempt >= 4 || opts.pass === PANIC_PASS || !((err.retryAfterMs ?? 0) <= MAX_CLOB_RETRY_WAIT_MS)) throw err;
        const backoff = err.retryAfterMs ?? Math.min(8_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
        await this.sleep(backoff);
      }
    }
  }

  /**
   * Signs and posts 1-15 orders for `account` (the popup path); one result per order (per-order
   * exchange errors inside a 200 are results, not throws). `opts.authority`: the ticket the click captured.
   */
  async clobPostOrders(account: string, orders: readonly ClobOrderRequest[], opts: { origin: string } & Held): Promise<BatchOrderResult[]> {
    const a = await this.prepareClob(account, orders);
    return this.executeClob(a, a.digest, { origin: opts.origin, summary: `${orders.length} order(s)`, authority: opts.authority });
  }

  /**
   * Cancels every order-book order of `account` (`DELETE /cancel-all`): `{ canceled, not_canceled }`.
   * `opts.pass` lets the panic switch through a halted gate; `opts.timeoutMs` is the request deadline (ms).
   */
  async clobCancelAll(account: string, opts: GateOptions & Held): Promise<ClobCancelAnswer> {
    return parseClobAnswer(clobCancelAnswerSchema, await this.l2(account, 'DELETE', '/cancel-all', undefined, opts), 'the cancel');
  }

  /** The order-book cancels this service sent or signed for a page (`ClobCancelLog`, issue #22 notifications). */
  readonly clobCancels = new ClobCancelLog(() => this.now());

  /** Posts an order-book heartbeat (`POST /v1/heartbeats`); returns the session id to send next time. */
  async clobHeartbeat(account: string, heartbeatId: string, opts: Held): Promise<string> {
    return parseClobAnswer(clobHeartbeatAnswerSchema, await this.l2(account, 'POST', '/v1/heartbeats', { heartbeat_id: heartbeatId }, opts), 'the heartbeat').heartbeat_id;
  }

  /** Cancels order-book orders by id (`DELETE /orders`): the venue's `{ canceled, not_canceled }` (validated). */
  async clobCancel(account: string, orderIds: string[], opts: Held): Promise<ClobCancelAnswer> {
    return parseClobAnswer(clobCancelAnswerSchema, await this.l2(account, 'DELETE', '/orders', orderIds, opts), 'the cancel');
  }

  /** The midpoint of an order-book token at the settings' exchange URL (`readClobMid`, `lib/clob/reads.ts`). */
  async clobMid(tokenId: string): Promise<string | undefined> {
    return readClobMid((await this.o.settings()).clobUrl, tokenId, this.fetchFn);
  }

  /** The best bid and ask of a token's book at the settings' exchange URL (`readClobTop`, `lib/clob/reads.ts`). */
  async clobTop(tokenId: string): Promise<{ bid?: string; ask?: string }> {
    return readClobTop((await this.o.settings()).clobUrl, tokenId, this.fetchFn);
  }

  /**
   * The collateral (USDC) balance of `account` at the order-book exchange (`GET /balance-allowance`,
   * `asset_type=COLLATERAL`; PROTOCOL.md §3.1) as a decimal string; undefined when the answer is not a
   * base-unit integer. Used to propose a standing grant's caps (issue #17).
   */
  async clobCollateral(account: string): Promise<string | undefined> {
    const { info } = await this.o.vault.clobCredentials(account);
    const r = v.safeParse(clobBalanceSchema, await this.l2(account, 'GET', `/balance-allowance?asset_type=COLLATERAL&signature_type=${info.signatureType}`, undefined, this.readHold()));
    return r.success ? fromUnits(BigInt(r.output.balance), 6) : undefined;
  }

  /** The first page of `account`'s order-book trades (`GET /data/trades`, newest first). */
  async clobTrades(account: string): Promise<unknown> {
    return this.l2(account, 'GET', '/data/trades?next_cursor=MA%3D%3D', undefined, this.readHold());
  }

  /**
   * Open order-book orders of `account`: every page of `GET /data/orders` (cursor `MA==` first, `LTE=`
   * after the last page; PROTOCOL.md §3.1), at most 20 pages. Returns the venue's order objects, each
   * validated by `clobOpenOrderSchema` (a malformed page throws `ClobMalformedAnswerError`).
   */
  async clobOpenOrders(account: string): Promise<{ data: ClobOpenOrder[] }> {
    const data: ClobOpenOrder[] = [];
    let cursor = 'MA==';
    for (let i = 0; i < 20 && cursor !== 'LTE='; i++) {
      const page = parseClobAnswer(clobOrdersPageSchema, await this.l2(account, 'GET', `/data/orders?next_cursor=${encodeURIComponent(cursor)}`, undefined, this.readHold()), 'open orders');
      data.push(...page.data);
      cursor = page.next_cursor;
    }
    return { data };
  }

  /**
   * The five L2 headers for a request the caller sends itself, named for the profile's header set
   * (`SVC_*` by default, `POLY_*` for `venue`); the API secret stays here.
   */
  async clobSignRequest(account: string, req: { method: string; requestPath: string; body?: string }, opts: Held): Promise<Record<keyof L2Headers, string> | Record<string, string>> {
    const a = await this.prepareL2(account, req);
    return this.executeL2(a, a.digest, { origin: 'extension', summary: `${req.method} ${req.requestPath}`, authority: opts.authority });
  }
}

/**
 * Whether `artifact` is one of the panic switch's own commands — the only ones `PANIC_PASS` lets through
 * a halted gate: a submitted perps `cancelAll` / `cancelOrders`, or a submitted perps `createOrders`
 * whose every order is reduce-only and immediate-or-cancel with no trigger (closing positions).
 */
function panicExempt(artifact: SigningArtifact): boolean {
  if (artifact.kind !== 'perps' || !artifact.submit) return false;
  const { op } = artifact.envelope;
  if (op.type === 'cancelAll' || op.type === 'cancelOrders') return true;
  if (op.type !== 'createOrders' || !Array.isArray(op.args) || op.args.length === 0) return false;
  return op.args.every((o: unknown) => !!o && typeof o === 'object' && 'ro' in o && o.ro === true && 'tif' in o && o.tif === 'ioc' && !('tr' in o));
}

/**
 * Whether `artifact`'s signature goes back to the caller to send itself (L2 headers, a sign-only perps
 * envelope): the authority check runs again right before it is handed back.
 */
function handedBack(artifact: SigningArtifact): boolean {
  return artifact.kind === 'l2' || (artifact.kind === 'perps' && !artifact.submit);
}

/**
 * Whether a submission of `artifact` can open or move exposure, so that `halt` must wait for it: every
 * order-book order batch and every submitted perps command except cancels and the dead-man's
 * `autoCancel`. Sign-only perps envelopes and L2 headers are sent by the page itself (nothing to wait for).
 */
function opensExposure(artifact: SigningArtifact): boolean {
  if (artifact.kind === 'clob') return true;
  if (artifact.kind !== 'perps' || !artifact.submit) return false;
  return !['cancelAll', 'cancelOrders', 'cancelOrdersCOID', 'autoCancel'].includes(artifact.envelope.op.type);
}
