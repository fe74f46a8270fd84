/**
 * The background signing service: the one façade every caller signs through (page requests, popup
 * procedures, the dead-man's renewals, panic). Given a validated command and the account, it picks the
 * right key (proxy for trading, owner for transfer / withdraw / proxy issuance and deletion —
 * PROTOCOL.md §1.3), signs, submits to the configured gateway, classifies the answer, and appends an
 * audit entry (never a secret). Its parts, one concern each:
 *
 * - `./prepare.ts` builds the artifacts (perps envelope and domain, order-book batch, L2 request);
 * - `./gate.ts` the signing gate (`halt` / `resume`, panic's pass, the in-flight drain);
 * - `./sign.ts` signs one verified artifact with the key it names;
 * - `./submit.ts` sends it (perps REST or session, order-book L2 with its retries), the audit journal
 *   and entry, the client-side weight meter;
 * - `./clob-credentials.ts` the account's order-book API credentials (create or derive, store, rotate);
 * - `./classify.ts` the outcome classes (answered, refused, `OutcomeUnknownError`).
 *
 * The venue reads (books, portfolio, open orders, tick sizes) are not here: `lib/reads/venue-reads.ts`.
 * They draw on the same weight meter (`lib/ratelimit/meter.ts`, one per background), and the account's
 * own order-book reads come back through `clobRead` (an L2 request: gated like every other).
 *
 * Timeouts: every gateway request has a deadline (`requestTimeoutMs`, default
 * `DEFAULT_REQUEST_TIMEOUT_MS` = 15 s, covering headers and body); past it the call fails as "no answer"
 * (`Http.NetworkError`; `OutcomeUnknownError` for a perps command). The order-book retry loop is bounded
 * too (at most 4 attempts), so no call of this service waits forever.
 *
 * The authority epoch (`lib/authority/epoch.ts`): every signing call carries the ticket its request
 * captured at its start (`Held`, required), checked with the gate right before each signature and again
 * right before each send (`signingCheck`, lib/authority/guard.ts) — REST, the perps session, every
 * order-book attempt, ClobAuth (`ownerKey`) — so nothing started before a lock, panic, revoke, switch or
 * venue change leaves after it.
 */
import * as v from 'valibot';
import type { Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BaseError } from '../errors/base';
import { gatewayTransport, type GatewayTransport } from '../http/gateway';
import { WeightMeter } from '../ratelimit/meter';
import { createProxy, deleteProxy as deleteProxyCommand, type PerpsCommand } from '../perps/commands';
import type { PerpsEnvelope } from '../perps/envelope';
import type { L2Headers } from '../clob/auth';
import type { ClobOrderRequest } from '../clob/request';
import type { ClobInfo } from '../vault/vault';
import { parseClobAnswer } from '../clob/client';
import { clobCancelAnswerSchema, clobHeartbeatAnswerSchema, type ClobCancelAnswer } from '../clob/wire';
import { ClobCancelLog } from '../clob/cancels';
import type { BatchOrderResult } from '../clob/errors';
import { assertVenueUsable } from '../settings/confirmation';
import { assertSecureSettings, BUILD_TRANSPORT_RULE, type TransportRule } from '../settings/transport';
import { VenueReads } from '../reads/venue-reads';
import type { AuditEntry } from '../vault/db';
import { appendAudit, auditLog, type AuditLog } from '../audit';
import { PERSON_SCOPES, type Authority, type AuthorityTicket } from '../authority/epoch';
import { guardedOwner, signingCheck, type Held } from '../authority/guard';
import type { ClobArtifact, L2Artifact, PerpsArtifact, SigningArtifact } from './artifact';
import { ArtifactPreparer, type PerpsDomains } from './prepare';
import { SigningGate, type GateOptions } from './gate';
import { Submitter } from './submit';
import { ClobCredentials } from './clob-credentials';
import type { ExecuteOptions, SigningServiceOptions } from './options';

export { OutcomeUnknownError } from './classify';
export { HALT_DRAIN_MS, HaltedError, PANIC_PASS, type GateOptions } from './gate';
export { MAX_CLOB_RETRY_WAIT_MS } from './submit';
export type { ExecuteOptions, GatewaySettings, SigningServiceOptions } from './options';
export { CLIENT_WEIGHT_BUDGETS, WeightBudgetError } from '../ratelimit/meter';
export type { ClobOrderRequest };

/**
 * The part of the gateway's answer to `CreateProxy` this service reads: the proxy's secret (a credential, stored in the
 * vault only).
 */
const proxySecretSchema = v.object({ secret: v.pipe(v.string(), v.minLength(1)) });

/** Signs and submits perps commands and order-book orders for the vault's accounts (see the module docstring). */
export class SigningService {
  /** The authority epoch every signature and send of this service checks (`lib/authority/epoch.ts`). */
  readonly authority: Authority;
  /**
   * The venue reads this service builds orders with: the background's (`SigningServiceOptions.reads`), or
   * its own, on the same weight meter, when none was given.
   */
  readonly reads: VenueReads;
  /** The order-book cancels this service sent or signed for a page (`ClobCancelLog`, read by the notifications). */
  readonly clobCancels: ClobCancelLog;
  /** Which transports this service's requests may use (`lib/settings/transport.ts`): its option, or this build's. */
  readonly transportRule: TransportRule;
  private readonly now: () => number;
  /** The gateway transport (header-set renaming, and a deadline on every request). */
  private readonly transport: GatewayTransport;
  private readonly gate: SigningGate;
  private readonly prepare: ArtifactPreparer;
  private readonly submit: Submitter;
  /** The account's order-book API credentials (`./clob-credentials.ts`). */
  private readonly credentials: ClobCredentials;
  /** The audit log, keyed by the vault's audit key. */
  private readonly auditLog: AuditLog;

  constructor(private readonly o: SigningServiceOptions) {
    this.authority = o.authority;
    this.transportRule = o.transportRule ?? BUILD_TRANSPORT_RULE;
    this.now = o.now ?? Date.now;
    this.clobCancels = new ClobCancelLog(() => this.now());
    this.transport = gatewayTransport(
      o.fetchFn,
      async () => (await o.settings()).headerSet ?? 'seed',
      o.requestTimeoutMs,
      this.transportRule,
    );
    const meter = o.meter ?? new WeightMeter(this.now);
    this.reads =
      o.reads ??
      new VenueReads({
        settings: o.settings,
        vault: o.vault,
        meter,
        clobRead: (account, path) => this.clobRead(account, path),
        ...(o.fetchFn ? { fetchFn: o.fetchFn } : {}),
        ...(o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: o.requestTimeoutMs }),
        ...(o.transportRule ? { transportRule: o.transportRule } : {}),
      });
    this.gate = new SigningGate(o.authority, o.settings, this.transportRule);
    this.prepare = new ArtifactPreparer({
      settings: o.settings,
      vault: o.vault,
      fetchFn: this.transport.fetchFn,
      now: this.now,
      market: (tokenId) => this.reads.clobMarket(tokenId),
    });
    this.auditLog = auditLog(o.db, () => o.vault.auditKey(), { now: this.now });
    this.submit = new Submitter({
      o,
      gate: this.gate,
      meter,
      transport: this.transport,
      now: this.now,
      sleep: o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
      // Looked up at each write: every audit entry of this service goes through `audit`.
      audit: (entry, afterSends) => this.audit(entry, afterSends),
      clobCancels: this.clobCancels,
    });
    this.credentials = new ClobCredentials({
      vault: o.vault,
      settings: o.settings,
      fetchFn: this.transport.fetchFn,
      now: this.now,
      ownerKey: (account, ticket) => this.ownerKey(account, ticket),
      l2: (account, method, requestPath, body, opts) => this.submit.l2(account, method, requestPath, body, opts),
    });
  }

  /**
   * Appends `entry` (now); `afterSends`: queued now, written from `SEND_GRACE_MS` on, once no journal record a send
   * waits for is being stored (`appendAudit`).
   */
  private async audit(
    entry: Pick<AuditEntry, 'origin' | 'account' | 'kind' | 'summary' | 'result'> & {
      digest?: string | undefined;
      detail?: string | undefined;
    },
    afterSends = false,
  ): Promise<void> {
    await appendAudit(this.auditLog, { at: this.now(), ...entry }, { afterSends });
  }

  // ------------------------------------------------------------------------------------------
  // The signing gate (`./gate.ts`)

  /**
   * Closes the signing gate at once; resolves when the submissions in flight settled or after `drainMs`
   * (`SigningGate.halt`).
   */
  halt(reason: string, drainMs?: number): Promise<{ unsettled: number }> {
    return this.gate.halt(reason, drainMs);
  }

  /** Opens the signing gate again (the next successful unlock calls it). */
  resume(): void {
    this.gate.resume();
  }

  /** Whether the gate is closed (`halt` was called and `resume` not yet). */
  get halted(): boolean {
    return this.gate.halted;
  }

  // ------------------------------------------------------------------------------------------
  // Prepare (`./prepare.ts`): nothing is signed

  /** The perps gateway's command and withdraw domains, checked against the pin (`ArtifactPreparer.perpsDomains`). */
  perpsDomains(): Promise<PerpsDomains> {
    return this.prepare.perpsDomains();
  }

  /**
   * The perps artifact of `command` (`ArtifactPreparer.preparePerps`). Every prepare first checks the
   * stored service URLs against the transport rule (`InsecureTransportError` naming the setting): its
   * reads would go where its signature goes.
   */
  async preparePerps(
    account: string,
    command: PerpsCommand,
    opts: { submit: boolean; exp?: number },
  ): Promise<PerpsArtifact> {
    assertSecureSettings(await this.o.settings(), this.transportRule);
    return this.prepare.preparePerps(account, command, opts);
  }

  /**
   * The order-book artifact of 1-15 order requests (`ArtifactPreparer.prepareClob`; the transport rule first, as
   * `preparePerps`).
   */
  async prepareClob(account: string, orders: readonly ClobOrderRequest[]): Promise<ClobArtifact> {
    assertSecureSettings(await this.o.settings(), this.transportRule);
    return this.prepare.prepareClob(account, orders);
  }

  /**
   * The L2 artifact of a request the caller sends itself (`ArtifactPreparer.prepareL2`; the transport rule first, as
   * `preparePerps`).
   */
  async prepareL2(account: string, req: { method: string; requestPath: string; body?: string }): Promise<L2Artifact> {
    assertSecureSettings(await this.o.settings(), this.transportRule);
    return this.prepare.prepareL2(account, req);
  }

  /**
   * The service's transport (header-set renaming and the default deadline), for the deposit-wallet procedures' relayer,
   * RPC and order-book calls.
   */
  gatewayFetch(): typeof fetch {
    return this.transport.fetchFn;
  }

  // ------------------------------------------------------------------------------------------
  // Sign and submit (`./gate.ts` around `./submit.ts`)

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
  executePerps(
    artifact: PerpsArtifact,
    approvedDigest: Hex,
    opts: ExecuteOptions,
  ): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    return this.gate.guard(artifact, opts, (recheck) => this.submit.runPerps(artifact, approvedDigest, opts, recheck));
  }

  /** `execute` for an order-book artifact: one result per order. */
  executeClob(artifact: ClobArtifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<BatchOrderResult[]> {
    return this.gate.guard(artifact, opts, (recheck) => this.submit.runClob(artifact, approvedDigest, opts, recheck));
  }

  /** `execute` for an L2 artifact: the five headers, named for the configured header set. */
  executeL2(artifact: L2Artifact, approvedDigest: Hex, opts: ExecuteOptions): Promise<Record<string, string>> {
    return this.gate.guard(artifact, opts, (recheck) => this.submit.runL2(artifact, approvedDigest, opts, recheck));
  }

  /**
   * Signs `command` for `account` with the right key, holding `opts.authority`; returns the envelope (nothing sent).
   */
  async perpsSign(
    account: string,
    command: PerpsCommand,
    opts: { exp?: number; origin?: string } & Held,
  ): Promise<PerpsEnvelope> {
    const a = await this.preparePerps(account, command, {
      submit: false,
      ...(opts.exp === undefined ? {} : { exp: opts.exp }),
    });
    return (
      await this.executePerps(a, a.digest, {
        origin: opts.origin ?? 'extension',
        summary: command.type,
        authority: opts.authority,
      })
    ).envelope;
  }

  /**
   * Signs and submits `command` for `account` (the popup path: the click is the consent); returns the
   * gateway's success body. Throws the gateway's typed error, `WeightBudgetError`, or (no answer)
   * `OutcomeUnknownError`. `audit: false` writes no per-signature audit entry: only the dead-man's
   * renewals use it, and it logs one entry per armed period instead.
   */
  async perpsSend(
    account: string,
    command: PerpsCommand,
    opts: { origin: string; exp?: number; summary?: string; audit?: boolean } & GateOptions & Held,
  ): Promise<unknown> {
    const { authority } = opts; // held from the caller's start, whatever it awaits
    const a = await this.preparePerps(account, command, {
      submit: true,
      ...(opts.exp === undefined ? {} : { exp: opts.exp }),
    });
    return this.execute(a, a.digest, {
      origin: opts.origin,
      summary: opts.summary ?? command.type,
      authority,
      ...(opts.pass ? { pass: opts.pass } : {}),
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      ...(opts.audit === false ? { audit: false } : {}),
    });
  }

  /**
   * Issues a new proxy key: generates it here, has the owner sign `CreateProxy`, sends it, and stores
   * the key with the secret the gateway returns. `expiry` Unix ms. Returns non-secret info only.
   */
  async issueProxy(account: string, opts: { expiry: number; label?: string; origin?: string } & Held) {
    const privateKey = generatePrivateKey();
    const proxy = privateKeyToAccount(privateKey).address;
    const command = createProxy({
      owner: account,
      proxy,
      expiry: opts.expiry,
      ...(opts.label ? { label: opts.label } : {}),
    });
    const res = v.safeParse(
      proxySecretSchema,
      await this.perpsSend(account, command, {
        origin: opts.origin ?? 'extension',
        summary: `issue proxy ${proxy}`,
        authority: opts.authority,
      }),
    );
    if (!res.success) throw new BaseError('The gateway did not return a proxy secret.');
    return this.o.vault.putProxy({
      account,
      privateKey,
      secret: res.output.secret,
      proxy,
      expiry: opts.expiry,
      ...(opts.label ? { label: opts.label } : {}),
    });
  }

  /**
   * Deletes a proxy: owner-signed deleteProxy at the gateway first (holding `opts.authority`), then the local record.
   */
  async deleteProxy(account: string, proxy: string, opts: { origin?: string } & Held): Promise<void> {
    await this.perpsSend(account, deleteProxyCommand({ proxy }), {
      origin: opts.origin ?? 'extension',
      summary: `delete proxy ${proxy}`,
      authority: opts.authority,
    });
    await this.o.vault.deleteProxy(proxy);
  }

  /**
   * The check (`signingCheck`: the gate, no panic pass, and `ticket`) of a signature or send outside a venue command.
   */
  ownerCheck(ticket: AuthorityTicket): () => void {
    return signingCheck(() => this.gate.check(undefined, () => false), this.authority, ticket);
  }

  /**
   * `account`'s owner key for a signature outside a venue command — ClobAuth, a deposit-wallet batch —
   * guarded: every signature it makes runs `check` (`ownerCheck(ticket)`) right before; `check` is for the
   * caller to run again right before it sends. Checked at the call, and the venue must be usable
   * (`assertVenueUsable`: chosen, on encrypted transports, and a real-money venue confirmed). Throws
   * `HaltedError`, the ticket's ended error (`endedError`), `VenueNotChosenError`,
   * `InsecureTransportError`, `VenueNotConfirmedError`, the vault's errors.
   */
  async ownerKey(account: string, ticket: AuthorityTicket): Promise<{ owner: LocalAccount; check: () => void }> {
    const check = this.ownerCheck(ticket);
    check();
    assertVenueUsable(await this.o.settings(), this.transportRule);
    const owner = await this.o.vault.ownerAccount(account);
    return { owner: guardedOwner(owner, check), check };
  }

  // ------------------------------------------------------------------------------------------
  // Order book

  /**
   * Creates (or, when the nonce is used, derives) CLOB credentials for `account` and stores them
   * (`ClobCredentials.createOrDerive`: ClobAuth signed with the guarded owner key, holding `opts.authority`).
   */
  clobCreateOrDerive(account: string, opts: { nonce?: number } & Held): Promise<{ info: ClobInfo; derived: boolean }> {
    return this.credentials.createOrDerive(account, opts);
  }

  /**
   * Replaces `account`'s CLOB credentials: the old key deleted at the exchange, new ones under the next unused nonce
   * (`ClobCredentials.rotate`; `oldDeleted` false: the exchange refused the delete).
   */
  clobRotateCredentials(account: string, opts: Held): Promise<{ info: ClobInfo; oldDeleted: boolean }> {
    return this.credentials.rotate(account, opts);
  }

  /**
   * Signs and posts 1-15 orders for `account` (the popup path); one result per order (per-order
   * exchange errors inside a 200 are results, not throws). `opts.authority`: the ticket the click captured.
   */
  async clobPostOrders(
    account: string,
    orders: readonly ClobOrderRequest[],
    opts: { origin: string } & Held,
  ): Promise<BatchOrderResult[]> {
    const a = await this.prepareClob(account, orders);
    return this.executeClob(a, a.digest, {
      origin: opts.origin,
      summary: `${orders.length} order(s)`,
      authority: opts.authority,
    });
  }

  /**
   * Cancels every order-book order of `account` (`DELETE /cancel-all`): `{ canceled, not_canceled }`.
   * `opts.pass` lets the panic switch through a halted gate; `opts.timeoutMs` is the request deadline (ms).
   */
  async clobCancelAll(account: string, opts: GateOptions & Held): Promise<ClobCancelAnswer> {
    return parseClobAnswer(
      clobCancelAnswerSchema,
      await this.submit.l2(account, 'DELETE', '/cancel-all', undefined, opts),
      'the cancel',
    );
  }

  /** Posts an order-book heartbeat (`POST /v1/heartbeats`); returns the session id to send next time. */
  async clobHeartbeat(account: string, heartbeatId: string, opts: Held): Promise<string> {
    return parseClobAnswer(
      clobHeartbeatAnswerSchema,
      await this.submit.l2(account, 'POST', '/v1/heartbeats', { heartbeat_id: heartbeatId }, opts),
      'the heartbeat',
    ).heartbeat_id;
  }

  /** Cancels order-book orders by id (`DELETE /orders`): the venue's `{ canceled, not_canceled }` (validated). */
  async clobCancel(account: string, orderIds: string[], opts: Held): Promise<ClobCancelAnswer> {
    return parseClobAnswer(
      clobCancelAnswerSchema,
      await this.submit.l2(account, 'DELETE', '/orders', orderIds, opts),
      'the cancel',
    );
  }

  /**
   * One of the person's order-book reads of `account` (`GET requestPath`, L2-signed; the venue reads'
   * `clobRead`): gated like every L2 request, holding a ticket of `PERSON_SCOPES` taken at this call (a
   * read awaits nothing before it, and moves nothing). Returns the 2xx body, unvalidated (the reads
   * validate it). Throws `HaltedError`, the exchange's `ClobError`, `Http.NetworkError`.
   */
  clobRead(account: string, requestPath: string): Promise<unknown> {
    return this.submit.l2(account, 'GET', requestPath, undefined, { authority: this.authority.capture(PERSON_SCOPES) });
  }

  /**
   * The five L2 headers for a request the caller sends itself, named for the profile's header set
   * (`SVC_*` by default, `POLY_*` for `venue`); the API secret stays here.
   */
  async clobSignRequest(
    account: string,
    req: { method: string; requestPath: string; body?: string },
    opts: Held,
  ): Promise<Record<keyof L2Headers, string> | Record<string, string>> {
    const a = await this.prepareL2(account, req);
    return this.executeL2(a, a.digest, {
      origin: 'extension',
      summary: `${req.method} ${req.requestPath}`,
      authority: opts.authority,
    });
  }
}
