/**
 * The signing gate. `halt(reason)` refuses every new signature — every perps / order-book / L2 artifact,
 * page or popup, the order-book L2 requests (cancels, heartbeats, reads), API-key creation — with
 * `Signer.HaltedError` before anything is signed, and resolves once the submissions already in flight
 * that can open exposure have settled (at most `HALT_DRAIN_MS`). The only exemption is the panic switch's
 * own cancel and close commands, passed with `PANIC_PASS`: perps `cancelAll` / `cancelOrders`, perps
 * reduce-only IOC orders without trigger, order-book `DELETE /cancel-all`. `resume()` lifts the gate
 * (called by the next successful unlock). `halt` ends the authority epoch too
 * (`lib/authority/epoch.ts`); panic's own commands, started after it, hold the new one.
 */
import { BaseError } from '../errors/base';
import { assertVenueUsable, type ConfirmationSettings } from '../settings/confirmation';
import type { TransportRule } from '../settings/transport';
import type { Authority } from '../authority/epoch';
import { signingCheck, type Held } from '../authority/guard';
import type { SigningArtifact } from './artifact';

/** How long `halt` waits for submissions already in flight to settle (ms): 5 s. */
export const HALT_DRAIN_MS = 5_000;

/**
 * The panic switch's pass through the signing gate. Only `lib/background/panic.ts` passes it, and only
 * with its cancel and close commands; with anything else (or without it) a halted service refuses.
 */
export const PANIC_PASS: unique symbol = Symbol('countersign.panic');

/**
 * Thrown by every signing path while the service is halted (panic running, until the next unlock). Nothing was signed.
 */
export class HaltedError extends BaseError {
  override name = 'Signer.HaltedError';
  static override readonly code = 4900;
  /** `reason`: why the gate is closed (shown to the person and in `data.reason`). */
  constructor(reason: string) {
    super(`Countersign signs nothing right now: ${reason}. Unlock it again to continue.`, { data: { reason } });
  }
}

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
   * The caller's last condition before a signed perps command or order-book post leaves this service
   * (sent, or returned unsent): awaited after the signature, then the gate and `still` are checked again. A granted
   * order passes its use's write (the write runs beside the key read and the signature); when it throws, the signature
   * is dropped and nothing is sent.
   */
  beforeSend?: () => Promise<void>;
};

/**
 * The gate's state (open, or halted with a reason) and the submissions in flight `halt` waits for.
 * `authority`: the one epoch every check holds a ticket of; `settings`: read to refuse a venue not chosen,
 * a service URL in clear under `transportRule`, or a live preset the person has not confirmed (`assertVenueUsable`).
 */
export class SigningGate {
  /** Why the gate is closed (`halt`), or undefined while it is open. */
  private haltReason: string | undefined;
  /** Submissions that passed the gate, can open exposure and have not settled yet (what `halt` waits for). */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    readonly authority: Authority,
    private readonly settings: () => Promise<ConfirmationSettings>,
    private readonly transportRule?: TransportRule,
  ) {}

  /**
   * Closes the gate at once (synchronously, before the returned promise settles): from this call on,
   * every sign / execute / send path throws `HaltedError` before signing, except the panic switch's own
   * cancel and close commands passed with `PANIC_PASS`. Resolves when the submissions already in flight
   * that can open exposure (orders, leverage, transfers — not cancels, kill-switch renewals, heartbeats
   * or reads) have settled, or after `drainMs` (default `HALT_DRAIN_MS`, 5 s) — `unsettled` counts those
   * still without an answer then. Idempotent.
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

  /** Opens the gate again (the next successful unlock calls it). */
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
  check(pass: GateOptions['pass'], exempt: () => boolean): void {
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

  /**
   * The gate around one artifact: throws `HaltedError` now unless it may pass, rejects with
   * `assertVenueUsable`'s errors (no venue chosen, a URL in clear, a live preset unconfirmed; not for panic's pass),
   * runs `body` with a `recheck` to call right before each signature (a halt may come meanwhile), and counts the run as
   * in flight when it can open exposure.
   */
  guard<T>(artifact: SigningArtifact, opts: GateOptions & Held, body: (recheck: () => void) => Promise<T>): Promise<T> {
    const exempt = () => panicExempt(artifact);
    const recheck = signingCheck(() => this.check(opts.pass, exempt), this.authority, opts.authority, opts.still);
    recheck();
    // No venue chosen, a service URL in clear, or a live preset the person has not confirmed: nothing is
    // signed. Panic's own commands pass (the transport still refuses a URL in clear where they are sent).
    const confirmed =
      opts.pass === PANIC_PASS && exempt()
        ? Promise.resolve()
        : this.settings().then((s) => assertVenueUsable(s, this.transportRule));
    const running = confirmed.then(async () => {
      const out = await body(recheck);
      // Handing a signature back (L2 headers, a sign-only perps envelope) is its send: an end while it was recorded
      // withholds it.
      if (handedBack(artifact)) recheck();
      return out;
    });
    return opensExposure(artifact) ? this.track(running) : running;
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
  return op.args.every(
    (o: unknown) =>
      !!o && typeof o === 'object' && 'ro' in o && o.ro === true && 'tif' in o && o.tif === 'ioc' && !('tr' in o),
  );
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
