/**
 * The panic switch (issue #11 §2; issue #17 finding 7 and "Panic is total and bounded"). One action that
 * ends everything for the active account, in this order:
 *
 * 1. **Stop signing, at once** (synchronously, before the first await): close the signing gate
 *    (`SigningService.halt`) so every new signature — page or popup, granted or approved in a window — is
 *    refused; stop the dead-man's renewals (`haltKillSwitches`) **without** disarming the venues' kill
 *    switches (they stay armed and fire if a cancel fails: panic never sends `autoCancel {time: 0}`);
 *    revoke every standing grant; reject every pending approval. Then wait until the submissions already
 *    in flight have settled (at most `drainMs`), so an order signed a moment before the panic cannot land
 *    after the cancel.
 * 2. **Cancel both venues in parallel**: perps `cancelAll` and order-book `DELETE /cancel-all`, each
 *    request with a deadline (`requestTimeoutMs`) and one retry when no answer came (cancels are
 *    idempotent). These, and the closes below, are the only signatures the halted gate lets through
 *    (`PANIC_PASS`). Optionally close every perps position (reduce-only IOC market orders, one per
 *    position, in parallel) once the perps cancel was answered; closes are never retried, and a close
 *    without an answer is reported as an unknown outcome. The whole venue phase is cut at `venuesMaxMs`.
 * 3. **Audit**: append the panic entry before the lock (the audit chain is keyed by a vault key; after the
 *    lock there is none).
 * 4. **Lock**, whatever happened (a throw anywhere still locks).
 *
 * Bound (default `PANIC_TIMING`): at most `drainMs + venuesMaxMs` = 5 + 20 = 25 s plus local storage
 * work; without "close positions" the venue phase ends within 2 × 5 s, so 15 s. The gate stays closed
 * until the next successful unlock (`SigningService.resume`).
 *
 * A venue that did not answer is named in the report with its kill switch: perps auto-cancel at the
 * dead-man's `perpsCancelAt`; order book, `ORDER_BOOK_HEARTBEAT_LAPSE_MS` after its `lastHeartbeat` —
 * "did not answer — its kill switch (…) will cancel within N s", or "no kill switch was armed — check
 * the venue".
 */
import { cancelAll, createOrders } from '../perps/commands';
import { BaseError } from '../errors/base';
import { NetworkError } from '../http/json';
import { OutcomeUnknownError, PANIC_PASS, type SigningService } from '../signer/service';
import type { Vault } from '../vault/vault';
import type { DeadManStatus } from './deadman';
import { ORDER_BOOK_HEARTBEAT_LAPSE_MS, PANIC_TIMING, type PanicTiming } from './panic-timing';
import { instrumentLabel } from '../validation/venue-text';

export { ORDER_BOOK_HEARTBEAT_LAPSE_MS, PANIC_TIMING, panicBoundMs, type PanicTiming } from './panic-timing';

/**
 * What happened at one venue (or to the positions):
 * - `{ ok: true, detail }` done;
 * - `{ ok: false, error }` the venue answered with an error, or only part was done;
 * - `{ ok: false, noAnswer: true, error, killSwitch, cancelWithinS? }` the venue did not answer;
 *   `error` is the plain sentence, `killSwitch` which switch will cancel (`'none'`: none was armed) and
 *   `cancelWithinS` within how many seconds (0 when its time has already passed: a silent venue is
 *   often silent for longer than the kill switch's lead, so "already due" is a normal outcome);
 * - `{ skipped }` nothing to do (no account, no key, not asked).
 */
export type PanicStep =
  | { ok: true; detail: string }
  | { ok: false; error: string }
  | { ok: false; noAnswer: true; error: string; killSwitch: 'auto-cancel' | 'heartbeat lapse' | 'none'; cancelWithinS?: number }
  | { skipped: string };

/**
 * The panic report: each venue's cancels, the closed positions, how many grants were revoked and
 * requests rejected, whether the vault is locked, and `problems` (steps that failed, in plain words).
 */
export type PanicReport = { perps: PanicStep; clob: PanicStep; positions: PanicStep; grants: number; pending: number; locked: boolean; problems: string[] };

/** What `runPanic` needs. */
export type PanicDeps = {
  /** The active account (resolved after the gate is closed). */
  account: () => Promise<string | undefined>;
  vault: Vault;
  service: SigningService;
  closePositions: boolean;
  /** Revokes every standing grant; returns how many. */
  revokeGrants: () => Promise<number>;
  /** Rejects every pending approval; returns how many. */
  rejectPending: () => number;
  /** Stops the dead-man's renewals without disarming the venues' kill switches (`DeadMan.halt`). */
  haltKillSwitches?: () => void;
  /** The dead-man's state (read before and after the cancels, for the silent-venue sentence). */
  killSwitches?: () => DeadManStatus;
  /** Appends the panic audit entry (called before the lock). */
  audit: (report: PanicReport) => Promise<void>;
  /** Locks the vault (and runs the lock hooks). */
  lock: () => Promise<void>;
  now?: () => number;
  timing?: Partial<PanicTiming>;
};

/** A panic request that got no answer within its deadline. */
export class NoAnswerError extends BaseError {
  override name = 'Panic.NoAnswerError';
  constructor(ms: number) {
    super(`No answer within ${Math.ceil(ms / 1000)} s.`);
  }
}

const msg = (e: unknown) => (e instanceof BaseError ? e.shortMessage : 'Something went wrong.');
const noAnswer = (e: unknown) => e instanceof NoAnswerError || e instanceof OutcomeUnknownError || e instanceof NetworkError;

/** `p`, or `NoAnswerError` after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new NoAnswerError(ms)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Runs `fn` with a deadline; once more when no answer came (for idempotent cancels only). */
async function cancelOnceMore<T>(fn: () => Promise<T>, ms: number): Promise<T> {
  try {
    return await within(fn(), ms);
  } catch (err) {
    if (!noAnswer(err)) throw err;
    return within(fn(), ms);
  }
}

const secondsUntil = (at: number, now: number) => Math.max(0, Math.ceil((at - now) / 1000));

/** The report line of a venue that did not answer, from the dead-man's latest state. */
function silentVenue(venue: 'perps' | 'clob', at: number | undefined, now: number): PanicStep {
  const name = venue === 'perps' ? 'auto-cancel' : 'heartbeat lapse';
  if (at === undefined) return { ok: false, noAnswer: true, killSwitch: 'none', error: 'did not answer — no kill switch was armed — check the venue' };
  const s = secondsUntil(at, now);
  return {
    ok: false,
    noAnswer: true,
    killSwitch: name,
    cancelWithinS: s,
    error:
      s > 0
        ? `did not answer — its kill switch (${name}) will cancel within ${s} s`
        : `did not answer — its kill switch (${name}) is already due (for ${Math.floor((now - at) / 1000)} s): the venue cancels as soon as it runs again — check the venue`,
  };
}

/**
 * Runs the panic switch (see the module comment for the order and the bound). Never throws: every
 * failure is in the report, and the vault is locked at the end whatever happened.
 */
export async function runPanic(d: PanicDeps): Promise<PanicReport> {
  const t: PanicTiming = { ...PANIC_TIMING, ...d.timing };
  const now = d.now ?? Date.now;
  const report: PanicReport = { perps: { skipped: 'no account' }, clob: { skipped: 'no account' }, positions: { skipped: 'not asked' }, grants: 0, pending: 0, locked: false, problems: [] };
  const step = async <T>(what: string, fn: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (e) {
      report.problems.push(`${what}: ${msg(e)}`);
      return undefined;
    }
  };
  const states: DeadManStatus[] = [];
  const readKillSwitches = () => void step('Reading the dead-man timer', () => d.killSwitches && states.push(d.killSwitches()));
  try {
    // 1. Stop signing — synchronously, before anything else can run.
    readKillSwitches();
    let drained: Promise<{ unsettled: number }> = Promise.resolve({ unsettled: 0 });
    try {
      drained = d.service.halt('the panic switch is running', t.drainMs);
    } catch (e) {
      report.problems.push(`Stopping new signatures: ${msg(e)}`);
    }
    await step('Stopping the dead-man renewals', () => d.haltKillSwitches?.());
    report.grants = (await step('Revoking the standing permissions', d.revokeGrants)) ?? 0;
    report.pending = (await step('Rejecting the pending requests', d.rejectPending)) ?? 0;
    const account = await step('Finding the active account', d.account);
    const unlocked = d.vault.state !== 'locked'; // a trading session keeps the keys panic's cancels need
    // Reads are not signatures: count the open perps orders while the in-flight submissions settle.
    const hasProxy = account && unlocked ? ((await step('Reading the proxy keys', () => d.vault.listProxies(account))) ?? []).some((p) => p.expiry > now()) : false;
    const hasClob = account && unlocked ? ((await step('Reading the API credentials', () => d.vault.hasClobCredentials(account))) ?? false) : false;
    const openPerps = hasProxy ? within(d.service.perpsRead(account, 'openOrders', undefined, { timeoutMs: t.requestTimeoutMs }), t.requestTimeoutMs).then((x) => (Array.isArray(x) ? x.length : undefined)).catch(() => undefined) : Promise.resolve(undefined);
    const { unsettled } = await drained.catch(() => ({ unsettled: 0 }));
    if (unsettled > 0) report.problems.push(`${unsettled} request(s) signed just before the panic had no answer yet when the cancels were sent.`);

    // 2. Both venues in parallel, each with deadlines; the whole phase cut at venuesMaxMs.
    if (account && !unlocked) {
      report.perps = { skipped: 'Countersign was locked' };
      report.clob = { skipped: 'Countersign was locked' };
    } else if (account) {
      const pass = { pass: PANIC_PASS, timeoutMs: t.requestTimeoutMs } as const;
      let perpsDone = false;
      let clobDone = false;
      let closing = false;
      const perps = async () => {
        if (!hasProxy) {
          report.perps = { skipped: 'no proxy key' };
          return;
        }
        try {
          await cancelOnceMore(() => d.service.perpsSend(account, cancelAll({}), { origin: 'panic', summary: 'Panic: cancel every perps order', ...pass }), t.requestTimeoutMs);
          const n = await openPerps;
          report.perps = { ok: true, detail: n === undefined ? 'every open order cancelled' : `${n} open order(s) cancelled` };
        } catch (e) {
          report.perps = noAnswer(e) ? { ok: false, error: 'did not answer' } : { ok: false, error: msg(e) };
        }
        perpsDone = true;
        if (!d.closePositions) return;
        if (!('ok' in report.perps && report.perps.ok)) {
          report.positions = { ok: false, error: 'not closed: the perps cancel did not succeed — check the venue' };
          return;
        }
        closing = true;
        report.positions = await closeAll(d.service, account, t);
        closing = false;
      };
      const clob = async () => {
        if (!hasClob) {
          report.clob = { skipped: 'no API credentials' };
        } else {
          try {
            const r = await cancelOnceMore(() => d.service.clobCancelAll(account, pass), t.requestTimeoutMs);
            const left = Object.keys(r.not_canceled ?? {}).length;
            report.clob = left ? { ok: false, error: `${r.canceled.length} cancelled, ${left} not — check the venue` } : { ok: true, detail: `${r.canceled.length} open order(s) cancelled` };
          } catch (e) {
            report.clob = noAnswer(e) ? { ok: false, error: 'did not answer' } : { ok: false, error: msg(e) };
          }
        }
        clobDone = true;
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all([perps(), clob()]), new Promise<void>((r) => (timer = setTimeout(r, t.venuesMaxMs)))]);
      clearTimeout(timer);
      if (!perpsDone) report.perps = { ok: false, error: 'did not answer' };
      if (!clobDone) report.clob = { ok: false, error: 'did not answer' };
      if (closing) report.positions = { ok: false, error: 'no answer in time: some positions may or may not have been closed — check the venue' };
      // A venue that did not answer: which kill switch will cancel, and when.
      readKillSwitches();
      const mine = states.flatMap((s) => s.venues).filter((v) => v.account.toLowerCase() === account.toLowerCase());
      const latest = (k: 'perpsCancelAt' | 'lastHeartbeat') => mine.reduce<number | undefined>((m, v) => (v[k] === undefined ? m : Math.max(m ?? 0, v[k]!)), undefined);
      const hb = latest('lastHeartbeat');
      if ('error' in report.perps && report.perps.error === 'did not answer') report.perps = silentVenue('perps', latest('perpsCancelAt'), now());
      if ('error' in report.clob && report.clob.error === 'did not answer') report.clob = silentVenue('clob', hb === undefined ? undefined : hb + ORDER_BOOK_HEARTBEAT_LAPSE_MS, now());
    }

    // 3. The audit entry, while the vault key still exists.
    await step('Writing the audit entry', () => d.audit(report));
  } catch (e) {
    report.problems.push(`Panic: ${msg(e)}`);
  } finally {
    // 4. Lock, whatever happened.
    try {
      await d.lock();
    } catch (e) {
      report.problems.push(`Locking: ${msg(e)}`);
    }
    report.locked = d.vault.state === 'locked';
  }
  return report;
}

/** Closes every perps position of `account` with reduce-only IOC market orders in parallel (never retried). */
async function closeAll(service: SigningService, account: string, t: PanicTiming): Promise<PanicStep> {
  // Named by the instrument id the close order commits to (`instrument #1`): no other read delays the panic.
  let positions: { instrument_id: number; size: string }[];
  try {
    const portfolio = await within(service.perpsRead(account, 'portfolio', undefined, { timeoutMs: t.requestTimeoutMs }), t.requestTimeoutMs);
    positions = (portfolio.positions ?? []).filter((p) => !/^-?0*(\.0*)?$/.test(p.size));
  } catch (e) {
    return { ok: false, error: noAnswer(e) ? 'not closed: the venue did not answer the positions read — check the venue' : `not closed: ${msg(e)}` };
  }
  if (positions.length === 0) return { ok: true, detail: 'no open positions' };
  const results = await Promise.allSettled(
    positions.map((p) =>
      within(
        service.perpsSend(account, createOrders({ orders: [{ iid: p.instrument_id, buy: p.size.startsWith('-'), qty: p.size.replace('-', ''), tif: 'ioc', ro: true }] }), {
          origin: 'panic',
          summary: `Panic: close ${instrumentLabel(p.instrument_id, undefined)}`,
          pass: PANIC_PASS,
          timeoutMs: t.requestTimeoutMs,
        }),
        t.requestTimeoutMs,
      ),
    ),
  );
  const closed: string[] = [];
  const failed: string[] = [];
  const unknown: string[] = [];
  results.forEach((r, i) => {
    const symbol = instrumentLabel(positions[i]!.instrument_id, undefined);
    const ack = r.status === 'fulfilled' && Array.isArray(r.value) ? (r.value[0] as { status?: unknown; error?: unknown } | undefined) : undefined;
    if (r.status === 'fulfilled' && ack?.status !== 'err') closed.push(symbol);
    else if (r.status === 'fulfilled') failed.push(`${symbol}: ${typeof ack?.error === 'string' ? ack.error.slice(0, 80) : 'refused'}`);
    else if (noAnswer(r.reason)) unknown.push(symbol);
    else failed.push(`${symbol}: ${msg(r.reason)}`);
  });
  if (!failed.length && !unknown.length) return { ok: true, detail: `closed ${closed.join(', ')}` };
  return {
    ok: false,
    error: [`closed ${closed.join(', ') || 'none'}`, ...(failed.length ? [`failed ${failed.join('; ')}`] : []), ...(unknown.length ? [`no answer for ${unknown.join(', ')} — may or may not be closed, check the venue`] : [])].join('; '),
  };
}
