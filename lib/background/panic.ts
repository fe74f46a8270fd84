/**
 * The panic switch. One action that ends everything for every account the vault holds, in this order:
 *
 * 1. **Stop signing, at once** (synchronously, before the first await): close the signing gate
 *    (`SigningService.halt`) so every new signature — page or popup, granted or approved in a window — is
 *    refused; stop the dead-man's renewals (`haltKillSwitches`) **without** disarming the venues' kill
 *    switches (they stay armed and fire if a cancel fails: panic never sends `autoCancel {time: 0}`);
 *    make a worker restart come back locked (`Vault.forgetRestorable`: the keys stay in memory for the
 *    cancels); revoke every standing grant; reject every pending approval. Then wait until the submissions already
 *    in flight have settled (at most `drainMs`), so an order signed a moment before the panic cannot land
 *    after the cancel.
 * 2. **Cancel both venues for every account, all in parallel** (./panic-accounts): for each account the
 *    vault holds, with the keys at hand (every account when unlocked; the kept ones in a trading session),
 *    perps `cancelAll` and order-book `DELETE /cancel-all`, each request with a deadline
 *    (`requestTimeoutMs`) and one retry when no answer came (cancels are idempotent); when the venue says
 *    slow down (429) the cancel is sent again after its `Retry-After`, while that fits in the phase
 *    (./panic-requests). These, and the closes below, are the only signatures the halted gate lets through
 *    (`PANIC_PASS`), and they are not metered client-side. Optionally close every perps position
 *    (reduce-only IOC market orders, one per position, in parallel) once the perps cancel was answered;
 *    closes are never retried, and a close without an answer is reported as an unknown outcome. The whole
 *    venue phase is cut at `venuesMaxMs`, however many accounts there are.
 * 3. **Audit**: append the panic entry before the lock (the audit chain is keyed by a vault key; after the
 *    lock there is none). It says what was done and that Countersign is locking — never that it is locked.
 * 4. **Lock**, whatever happened (a throw anywhere still locks). A lock that fails is audited on its own
 *    entry (the vault is still open then, so its audit key exists) and is in the report.
 *
 * Bound (default `PANIC_TIMING`): at most `drainMs + venuesMaxMs` = 5 + 20 = 25 s plus local storage
 * work; without "close positions" and without a venue's "slow down" the venue phase ends within 2 × 5 s,
 * so 15 s. The gate stays closed until the next successful unlock (`SigningService.resume`).
 *
 * The report has a row per account (`PanicAccountReport`). A venue that was not cancelled (it did not
 * answer, it said slow down for longer than panic may wait, or its key is sealed) is named with the
 * account's kill switch: perps auto-cancel at the dead-man's `perpsCancelAt`; order book,
 * `ORDER_BOOK_HEARTBEAT_LAPSE_MS` after its `lastHeartbeat` — "did not answer — its kill switch (…) will
 * cancel within N s", or "no kill switch was armed — check the venue". The report's `ok` is true only
 * when every step of every account was done (or had nothing to do), no step failed, and the vault is locked.
 */
import { type SigningService } from '../signer/service';
import type { VenueReads } from '../reads/venue-reads';
import { PANIC_SCOPES } from '../authority/epoch';
import type { Vault } from '../vault/vault';
import type { DeadManStatus } from './deadman';
import {
  cancelAccount,
  countOpenPerps,
  finishAccount,
  panicTargets,
  stepOk,
  type AccountRun,
  type PanicAccountReport,
  type PanicStep,
  type PanicTarget,
} from './panic-accounts';
import { msg } from './panic-requests';
import { PANIC_TIMING, type PanicTiming } from './panic-timing';

export { ORDER_BOOK_HEARTBEAT_LAPSE_MS, PANIC_TIMING, panicBoundMs, type PanicTiming } from './panic-timing';
export type { PanicAccountReport, PanicStep } from './panic-accounts';

/**
 * The panic report: `accounts`, a row per account the vault holds (the active one first) with each
 * venue's cancels and the closed positions; `perps`, `clob` and `positions`, the active account's row
 * again (`{ skipped: 'no account' }` without one); how many grants were revoked and requests rejected;
 * whether the vault is locked; `problems` (steps that failed, in plain words); and `ok`, true only when
 * every step was done or had nothing to do, there is no problem, and the vault is locked.
 */
export type PanicReport = {
  ok: boolean;
  accounts: PanicAccountReport[];
  perps: PanicStep;
  clob: PanicStep;
  positions: PanicStep;
  grants: number;
  pending: number;
  locked: boolean;
  problems: string[];
};

/** What `runPanic` needs. */
export type PanicDeps = {
  /** The active account (resolved after the gate is closed). */
  account: () => Promise<string | undefined>;
  vault: Vault;
  service: SigningService;
  /** The venue reads panic counts open orders and finds positions with (drawing on the reserve). */
  reads: Pick<VenueReads, 'perpsRead'>;
  closePositions: boolean;
  /** Revokes every standing grant; returns how many. */
  revokeGrants: () => Promise<number>;
  /** Rejects every pending approval; returns how many. */
  rejectPending: () => number;
  /** Stops the dead-man's renewals without disarming the venues' kill switches (`DeadMan.halt`). */
  haltKillSwitches?: () => void;
  /** The dead-man's state (read before and after the cancels, for the sentence of a venue not cancelled). */
  killSwitches?: () => DeadManStatus;
  /**
   * Appends the panic audit entry, right before the lock: `report` as it stands then (`locked` false) and
   * `stepsOk`, whether every step so far was done or had nothing to do (the lock still to come).
   */
  audit: (report: PanicReport, stepsOk: boolean) => Promise<void>;
  /** Appends the entry of a lock that failed after the panic entry (`problem`, one sentence). */
  auditLockFailed?: (problem: string) => Promise<void>;
  /** Locks the vault (and runs the lock hooks). */
  lock: () => Promise<void>;
  now?: () => number;
  timing?: Partial<PanicTiming>;
};

/** Whether every step of `r` was done or had nothing to do, nothing failed and the vault is locked. */
export function panicOk(r: Omit<PanicReport, 'ok'>): boolean {
  return (
    r.locked &&
    r.problems.length === 0 &&
    r.accounts.every((a) => stepOk(a.perps) && stepOk(a.clob) && stepOk(a.positions))
  );
}

/**
 * Runs the panic switch (see the module comment for the order and the bound). Never throws: every
 * failure is in the report, and the vault is locked at the end whatever happened.
 */
export async function runPanic(d: PanicDeps): Promise<PanicReport> {
  const t: PanicTiming = { ...PANIC_TIMING, ...d.timing };
  const now = d.now ?? Date.now;
  const report: PanicReport = {
    ok: false,
    accounts: [],
    perps: { skipped: 'no account' },
    clob: { skipped: 'no account' },
    positions: { skipped: 'not asked' },
    grants: 0,
    pending: 0,
    locked: false,
    problems: [],
  };
  const step = async <T>(what: string, fn: () => T | Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (e) {
      report.problems.push(`${what}: ${msg(e)}`);
      return undefined;
    }
  };
  const states: DeadManStatus[] = [];
  const readKillSwitches = () =>
    void step('Reading the dead-man timer', () => d.killSwitches && states.push(d.killSwitches()));
  try {
    // 1. Stop signing — synchronously, before anything else can run.
    readKillSwitches();
    let drained: Promise<{ unsettled: number }> = Promise.resolve({ unsettled: 0 });
    try {
      drained = d.service.halt('the panic switch is running', t.drainMs);
    } catch (e) {
      report.problems.push(`Stopping new signatures: ${msg(e)}`);
    }
    // Panic's own cancels and closes hold the authority from right after the halt (which ended `all`).
    const authority = d.service.authority.capture(PANIC_SCOPES);
    // A worker stopped from here on comes back locked (the keys in memory stay for the cancels).
    await step('Sealing the keys against a worker restart', () => d.vault.forgetRestorable());
    await step('Stopping the dead-man renewals', () => d.haltKillSwitches?.());
    report.grants = (await step('Revoking the standing permissions', d.revokeGrants)) ?? 0;
    report.pending = (await step('Rejecting the pending requests', d.rejectPending)) ?? 0;
    const active = await step('Finding the active account', d.account);
    const targets: PanicTarget[] =
      (await step('Reading the accounts and their keys', () => panicTargets(d.vault, active, now()))) ?? [];
    // Reads are not signatures: count the open perps orders while the in-flight submissions settle.
    const counts = new Map(
      targets
        .filter((x) => x.perps === 'key')
        .map((x) => [x.account, countOpenPerps(d.reads, x.account, t.requestTimeoutMs)]),
    );
    const { unsettled } = await drained.catch(() => ({ unsettled: 0 }));
    if (unsettled > 0)
      report.problems.push(
        `${unsettled} request(s) signed just before the panic had no answer yet when the cancels were sent.`,
      );

    // 2. Every account, both venues, all in parallel; the whole phase cut at venuesMaxMs.
    const until = now() + t.venuesMaxMs;
    const runs: { run: AccountRun; done: Promise<void> }[] = targets.map((x) =>
      cancelAccount(
        x,
        { service: d.service, reads: d.reads, timing: t, until, now, closePositions: d.closePositions, authority },
        counts.get(x.account),
      ),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(runs.map((r) => r.done)),
      new Promise<void>((r) => (timer = setTimeout(r, t.venuesMaxMs))),
    ]);
    clearTimeout(timer);
    readKillSwitches();
    report.accounts = runs.map((r) => finishAccount(r.run, states, now()));
    const mine = report.accounts.find((a) => a.active);
    if (mine) Object.assign(report, { perps: mine.perps, clob: mine.clob, positions: mine.positions });

    // 3. The audit entry, while the vault key still exists: what was done, and that the lock comes next.
    await step('Writing the audit entry', () =>
      d.audit({ ...report, problems: [...report.problems] }, panicOk({ ...report, locked: true })),
    );
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
    if (!report.locked) {
      const problem = report.problems.find((p) => p.startsWith('Locking: ')) ?? 'Locking: the vault is still open.';
      if (!report.problems.includes(problem)) report.problems.push(problem);
      try {
        await d.auditLockFailed?.(problem);
      } catch (e) {
        report.problems.push(`Writing the audit entry of the failed lock: ${msg(e)}`);
      }
    }
    report.ok = panicOk(report);
  }
  return report;
}
