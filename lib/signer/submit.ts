/**
 * Sending what was signed, and what follows the answer (PROTOCOL.md §2.4). Each `run*` takes one artifact
 * already past the signing gate (`./gate.ts`): it opens the submission's audit journal record, verifies
 * the artifact against the approved digest, signs it (`./sign.ts`), waits for what must be durable
 * before the send, meters the weight (perps), sends exactly its body, classifies the answer
 * (`./classify.ts`) and writes the audit entry (what, for which origin, when, result — never a secret).
 * An answered submission's entry is queued on the log as the answer arrives and written after the answer
 * goes back; a failed write is reported through `onUnrecorded`, never as an error a client retries.
 *
 * Retries: fund-moving commands (withdraw, internal transfer) are never retried; a missing answer throws
 * `OutcomeUnknownError`. Order-book L2 requests (`l2`) are resent unchanged on 425 (exponential backoff
 * with jitter), 429 (honouring a `Retry-After` of at most `MAX_CLOB_RETRY_WAIT_MS`; a longer one is the
 * caller's answer) and 500 "order timed out", at most 4 attempts; never on 503. Every attempt and every
 * send runs `recheck` (the gate and the authority ticket) right before it leaves.
 */
import type { Hex } from 'viem';
import { BaseError } from '../errors/base';
import type { GatewayTransport } from '../http/gateway';
import { applyHeaderSet } from '../http/headers';
import { drawerOfCommand } from '../ratelimit/reserve';
import type { WeightMeter } from '../ratelimit/meter';
import type { PerpsEnvelope } from '../perps/envelope';
import { submitPerpsCommand } from '../perps/transport';
import { clobL2Request } from '../clob/client';
import type { ClobCancelLog } from '../clob/cancels';
import { ClobError, parseBatchResults, type BatchOrderResult } from '../clob/errors';
import type { PostOrderBody } from '../clob/order';
import type { AuditEntry } from '../vault/db';
import { MAX_LOOKUP_IDS, type JournalRecord } from '../audit/journal';
import { isEndedError } from '../authority/epoch';
import { lastCheck, signingCheck, type Held } from '../authority/guard';
import {
  ArtifactMismatchError,
  perpsArtifactCommand,
  verifyArtifact,
  type ClobArtifact,
  type L2Artifact,
  type PerpsArtifact,
  type SigningArtifact,
} from './artifact';
import { commandWord, isKnownRefusal, OutcomeUnknownError } from './classify';
import { HaltedError, PANIC_PASS, type GateOptions, type SigningGate } from './gate';
import type { ExecuteOptions, SigningServiceOptions } from './options';
import { signClobOrders, signL2Headers, signPerpsEnvelope } from './sign';

/** Longest a panic command waits for its audit journal record before it is sent anyway (ms). */
const PANIC_JOURNAL_WAIT_MS = 500;

/**
 * The longest `Retry-After` (ms) an order-book request waits before it is sent again (the longest backoff
 * too): a venue asking for more — ten minutes of a spent budget, a day, a date, a number past any timer —
 * gets its `ClobError` back to the caller at once, so the person's cancel never hangs on it.
 */
export const MAX_CLOB_RETRY_WAIT_MS = 8_000;

/** An audit entry as the submitter writes it (the time is added at the write). */
type Entry = Pick<AuditEntry, 'origin' | 'account' | 'kind' | 'summary' | 'result'> & {
  digest?: string | undefined;
  detail?: string | undefined;
};

/**
 * What the submitter needs: the service's options (`vault`, `settings`, `journal`, `session`,
 * `onUnrecorded`), the gate, the shared weight meter, the gateway transport, the clock `now` (Unix ms),
 * `sleep` (back-off, ms), `audit` (appends one entry; `afterSends`: queued now, written from `SEND_GRACE_MS` on, once
 * no journal record a send waits for is being stored — `appendAudit`) and the cancel log every L2 request is recorded
 * in.
 */
export type SubmitDeps = {
  o: SigningServiceOptions;
  gate: SigningGate;
  meter: WeightMeter;
  transport: GatewayTransport;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  audit: (entry: Entry, afterSends?: boolean) => Promise<void>;
  clobCancels: ClobCancelLog;
};

/**
 * Signs, sends and records the three artifact kinds, and sends the order-book L2 requests (see the module docstring).
 */
export class Submitter {
  constructor(private readonly d: SubmitDeps) {}

  /** The audit fields every entry of `artifact` shares. */
  private auditBase(artifact: SigningArtifact, opts: ExecuteOptions) {
    return {
      origin: opts.origin,
      account: artifact.account.toLowerCase(),
      summary: opts.summary ?? artifact.kind,
      digest: artifact.digest,
    };
  }

  /**
   * The audit entry of an answered submission: `append` is already queued on the log (entries stay in
   * call order, and every read of the log waits for it — `auditWritten`), and the answer goes back without
   * waiting for the write (which starts `SEND_GRACE_MS` later, once no journal record a send waits for is being stored,
   * `SEND_WAIT_MAX_MS` past the grace at the latest: `afterSends`, so neither its sealing nor its transaction holds the
   * answer's way back to the page or the next request's way to its send). A failed write cannot turn an accepted order
   * into an error a client would retry (a second order); the person is told instead (`onUnrecorded`, with what was
   * sent: "order", "withdrawal", a command type).
   */
  private afterAnswer(append: Promise<void>, what: string, journalId?: string): void {
    const close = (): void => {
      if (journalId !== undefined) void this.d.o.journal?.close(journalId).catch(() => undefined);
    };
    append.then(close, (err: unknown) => {
      this.d.o.onUnrecorded?.(what, err);
      close(); // the person was told
    });
  }

  /**
   * Signs a perps artifact past the gate (and submits it when it says so); `recheck` runs right before the signature.
   */
  async runPerps(
    artifact: PerpsArtifact,
    approvedDigest: Hex,
    opts: ExecuteOptions,
    recheck: () => void,
  ): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    // `audit: false` (the dead-man's renewals only) skips the per-signature perps entry; the caller logs instead.
    const audit =
      opts.audit === false
        ? async () => undefined
        : (entry: Entry, afterSends?: boolean) => this.d.audit(entry, afterSends);
    const base = this.auditBase(artifact, opts);
    const kind = `perps.${artifact.envelope.op.type}`;
    // A submission's journal record is opened first, stored beside the digest check, the key read and the
    // signature, and awaited before the send (its entry is written after the answer goes back:
    // `lib/audit/journal.ts`). A record of an artifact that fails its check is closed (nothing sent).
    const op = artifact.envelope.op;
    const named =
      op.type === 'createOrders'
        ? op.args.flatMap((o) => (o.c === undefined ? [] : [{ c: o.c, iid: o.iid, buy: o.buy, qty: o.qty }]))
        : [];
    // what the venue can be asked after a crash
    const lookup = named.length ? { lookup: { venue: 'perps' as const, orders: named.slice(0, MAX_LOOKUP_IDS) } } : {};
    const journal =
      artifact.submit && opts.audit !== false
        ? this.openJournal({ at: this.d.now(), ...base, kind, ...lookup }, opts)
        : undefined;
    let sent = false;
    try {
      const digests = verifyArtifact(artifact, approvedDigest);
      const [digest] = digests;
      if (digest === undefined) throw new ArtifactMismatchError('the command has no digest');
      const envelope = await signPerpsEnvelope(this.d.o.vault, artifact, digest, recheck);
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
      if (journal && !sent) void this.d.o.journal?.discard(journal.id).catch(() => undefined);
    }
  }

  /**
   * Opens the audit journal record of a submission (undefined without a journal). With `opts.grantUse`
   * the reservation opens it, carrying the use until the use is in the vault (`UseReservation.carry`).
   */
  private openJournal(record: JournalRecord, opts: ExecuteOptions): { id: string; stored: Promise<void> } | undefined {
    const journal = this.d.o.journal;
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

  /**
   * `runPerps` from the meter on: sends the signed envelope and classifies the answer; `journalId` is closed once its
   * entry is written.
   */
  private async sendPerps(
    artifact: PerpsArtifact,
    envelope: PerpsEnvelope,
    digests: readonly Hex[],
    opts: ExecuteOptions,
    audit: (entry: Entry, afterSends?: boolean) => Promise<void>,
    base: ReturnType<Submitter['auditBase']>,
    journalId: string | undefined,
    recheck: () => void,
  ): Promise<{ envelope: PerpsEnvelope; body?: unknown }> {
    const { op, salt, ts } = envelope;
    const kind = `perps.${op.type}`;
    const close = (): void => {
      if (journalId !== undefined) void this.d.o.journal?.close(journalId).catch(() => undefined);
    };
    const { perpsUrl } = await this.d.o.settings();
    const { weight } = perpsArtifactCommand(artifact);
    // Panic's cancels and closes skip the client-side meter: a site that spent the budget must not block them (the
    // gateway decides).
    try {
      recheck(); // the settings read above: an end that came meanwhile drops the signature here
      if (opts.pass !== PANIC_PASS)
        this.d.meter.take(
          perpsUrl,
          weight.request,
          weight.action,
          drawerOfCommand(opts.origin, op, opts.grantUse !== undefined),
        );
    } catch (err) {
      // refused before the send
      if (journalId !== undefined) void this.d.o.journal?.discard(journalId).catch(() => undefined);
      throw err;
    }
    // What the page can look the command up by when no answer came: its client order ids (orders), and
    // always the signed envelope's salt and ts and the EIP-712 digest signed.
    const coids = op.type === 'createOrders' ? op.args.flatMap((o) => (o.c === undefined ? [] : [o.c])) : [];
    const lookup = {
      command: op.type,
      ...(coids.length ? { coids: coids.join(',') } : {}),
      salt,
      ts,
      digest: digests.join(','),
    }; // one digest for a perps command
    const what = commandWord(op.type);
    let result: unknown;
    const { beforeSend, refused } = lastCheck(recheck);
    try {
      // The one send point, two transports: the session when live for this account and proxy, else REST.
      result = await submitPerpsCommand({
        perpsUrl,
        command: artifact,
        envelope,
        signerAddress: artifact.signerAddress,
        fetchFn: this.d.transport.fetchFor(opts.timeoutMs),
        timeoutMs: opts.timeoutMs ?? this.d.transport.timeoutMs,
        session: this.d.o.session?.(artifact.account, perpsUrl),
        beforeSend,
      });
    } catch (err) {
      if (refused(err)) {
        if (journalId !== undefined) void this.d.o.journal?.discard(journalId).catch(() => undefined);
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
  async runClob(
    artifact: ClobArtifact,
    approvedDigest: Hex,
    opts: ExecuteOptions,
    recheck: () => void,
  ): Promise<BatchOrderResult[]> {
    const digests = verifyArtifact(artifact, approvedDigest);
    const base = this.auditBase(artifact, opts);
    const audit = { ...base, kind: 'clob.postOrders' };
    // The journal record, stored beside the signatures and awaited before the post (`lib/audit/journal.ts`).
    const journal = this.openJournal(
      { at: this.d.now(), ...audit, lookup: { venue: 'clob', orderHashes: [...digests] } },
      opts,
    );
    const close = (): void => {
      if (journal !== undefined) void this.d.o.journal?.close(journal.id).catch(() => undefined);
    };
    let bodies: PostOrderBody[];
    try {
      bodies = await signClobOrders(this.d.o.vault, artifact, digests, recheck);
      const durable = opts.grantUse?.durable; // the journal record carrying the use, or (none) its vault write
      if (opts.beforeSend || journal || durable)
        await Promise.all([opts.beforeSend?.(), journal && this.noted(journal.stored, opts), durable]);
      recheck(); // a halt or an end while it waited: the signatures are dropped
    } catch (err) {
      // nothing was posted
      if (journal !== undefined) void this.d.o.journal?.discard(journal.id).catch(() => undefined);
      throw err;
    }
    const lookup = { command: 'postOrders', orderHashes: digests.join(',') };
    let results: BatchOrderResult[];
    try {
      results =
        artifact.path === '/order'
          ? parseBatchResults(
              [await this.l2(artifact.account, 'POST', '/order', bodies[0], { authority: opts.authority })],
              1,
            )
          : parseBatchResults(
              await this.l2(artifact.account, 'POST', '/orders', bodies, { authority: opts.authority }),
              bodies.length,
            );
    } catch (err) {
      // Refused by the gate or the authority check right before an attempt: that attempt was not sent.
      if (err instanceof HaltedError || isEndedError(err)) {
        if (journal !== undefined) void this.d.o.journal?.discard(journal.id).catch(() => undefined);
        throw err;
      }
      // Signed and posted, no (readable) answer: the orders may rest at the exchange (never resent by the page path).
      if (!isKnownRefusal(err)) {
        await this.d
          .audit({ ...audit, result: 'unknown', detail: err instanceof BaseError ? err.shortMessage : 'error' })
          .then(close, () => undefined);
        throw new OutcomeUnknownError('order', err, lookup);
      }
      await this.d.audit({ ...audit, result: 'error', detail: err.shortMessage }).then(close, () => undefined);
      throw err;
    }
    // Posted and answered: the answer goes back now, its entry queued right behind it (`afterAnswer`).
    this.afterAnswer(this.d.audit({ ...audit, result: 'ok' }, true), 'order', journal?.id);
    return results;
  }

  /**
   * Builds an L2 artifact's headers past the gate (named for the configured header set); `recheck` runs right before
   * the HMAC.
   */
  async runL2(
    artifact: L2Artifact,
    approvedDigest: Hex,
    opts: ExecuteOptions,
    recheck: () => void,
  ): Promise<Record<string, string>> {
    verifyArtifact(artifact, approvedDigest);
    const base = this.auditBase(artifact, opts);
    const headers = await signL2Headers(this.d.o.vault, artifact, recheck);
    await this.d.audit({ ...base, kind: 'clob.l2', result: 'ok' });
    this.d.clobCancels.record(artifact.method, artifact.requestPath, artifact.body);
    // The caller sends these itself: name them as the configured gateway expects.
    return applyHeaderSet(headers, (await this.d.o.settings()).headerSet ?? 'seed');
  }

  /**
   * One L2-signed request of `account` (an HMAC with its API secret), retried on 425 / 429 / "order timed
   * out" (at most 4 attempts); its validated 2xx body. Gated: each attempt is a new signature; only
   * panic's `DELETE /cancel-all` passes. Throws `HaltedError`, the ticket's ended error, the exchange's
   * `ClobError`, `Http.NetworkError` (no answer).
   */
  l2(account: string, method: string, requestPath: string, body: unknown, opts: GateOptions & Held): Promise<unknown> {
    const exempt = () => method === 'DELETE' && requestPath === '/cancel-all' && body === undefined;
    const recheck = signingCheck(() => this.d.gate.check(opts.pass, exempt), this.d.gate.authority, opts.authority);
    recheck();
    return this.l2Run(account, method, requestPath, body, opts, recheck);
  }

  private async l2Run(
    account: string,
    method: string,
    requestPath: string,
    body: unknown,
    opts: GateOptions,
    recheck: () => void,
  ): Promise<unknown> {
    this.d.clobCancels.record(method, requestPath, body);
    const { clobUrl } = await this.d.o.settings();
    const creds = await this.d.o.vault.clobCredentials(account);
    const owner = creds.info.account;
    let attempt = 0;
    for (;;) {
      recheck();
      try {
        return await clobL2Request(
          clobUrl,
          {
            address: owner,
            credentials: creds,
            method,
            requestPath,
            ...(body === undefined ? {} : { body }),
            timestamp: Math.floor(this.d.now() / 1000),
          },
          this.d.transport.fetchFor(opts.timeoutMs),
        );
      } catch (err) {
        attempt++;
        // Panic's own cancel is retried by panic, within its bound (lib/background/panic-requests.ts).
        // A wait the venue names past `MAX_CLOB_RETRY_WAIT_MS` is not waited: the caller hears "slow down" at once.
        if (
          !(err instanceof ClobError) ||
          !err.retryable ||
          attempt >= 4 ||
          opts.pass === PANIC_PASS ||
          !((err.retryAfterMs ?? 0) <= MAX_CLOB_RETRY_WAIT_MS)
        )
          throw err;
        const backoff = err.retryAfterMs ?? Math.min(8_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
        await this.d.sleep(backoff);
      }
    }
  }
}
