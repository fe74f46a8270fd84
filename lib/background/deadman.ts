/**
 * The dead-man timer: while a standing grant is live, the venues' kill
 * switches of the grant's account stay armed and are renewed for as long as the browser runs. If the
 * browser dies, sleeps or loses the network, the venues cancel the account's orders themselves:
 * - perps: `autoCancel` (PATCH /v1/trade/auto-cancel, proxy-signed) set `PERPS_LEAD_MS` ahead and renewed
 *   every `PERPS_RENEW_MS`;
 * - order book: `POST /v1/heartbeats` every `HEARTBEAT_MS`; the exchange cancels the account's orders when
 *   heartbeats lapse (`HEARTBEAT_LAPSE_MS`, 10 s at the venue and in the sandbox).
 *
 * Armed whenever a grant is live, including right after the background (re)starts: `start()` runs on
 * every start (a `Lifetime` hook, after the vault session is restored) and arms each target from
 * `targets()` — before any granted request is signed. `killSwitchArmed(venue, account)` is what a granted
 * request asks first: true only while that venue's switch is live now (perps: the auto-cancel time at the
 * venue is at least `PERPS_ARMED_MIN_MS` ahead; order book: the last heartbeat is at most
 * `HEARTBEAT_ARMED_WITHIN_MS` old). After a restart it is false until the first renewal of the new
 * background succeeded, so a granted request waits for it (at most `ARM_WAIT_MS`) or asks.
 *
 * Timers and leads. While a target is armed the dead-man holds the background (`Lifetime.hold`): an
 * extension API call every 20 s keeps it awake in Chromium and Firefox, and a 30 s periodic alarm (the
 * cadence a packed Chromium extension really gets) restarts it if it is stopped anyway.
 * - Perps lead 60 s, renewed every 10 s: while the background is awake, the switch is 50-60 s ahead.
 *   If the background is stopped, the backstop alarm restarts it within 30 s and the restart renews before
 *   the venue fires (60 s > 10 s since the last renewal + 30 s + start-up), so a stop costs the person
 *   nothing at the perps venue. If it stays stopped (browser closed, machine asleep), the venue cancels
 *   every perps order at most 60 s after the last renewal — the safe side.
 * - Order book: a heartbeat every 4 s against the venue's 10 s lapse (one late beat is tolerated). The
 *   lapse is the venue's and no alarm can meet it, so heartbeats need the background awake: if it is
 *   stopped anyway, the exchange cancels the order-book orders after 10 s (the safe side), and after the
 *   restart a new heartbeat session starts before any granted order-book request is signed.
 *
 * Ending. `disarm()` — the last grant ended normally (revoked, expired): unsets the perps auto-cancel
 * (time 0) while a proxy key is usable and stops the heartbeats (the exchange then cancels that account's
 * order-book orders 10 s later: stopping is the venue's only way out). `halt()` — lock and panic: stops
 * renewing and never unsets anything, so both switches fire. Renewals are gated on `usable()` (the keys
 * the grants use are available), not on the vault being fully unlocked.
 *
 * Audit: one entry when a period arms ("Dead-man armed for …", or "could not arm" with the reason) and one
 * when it ends, with its renewal count and the last renewal time — never one entry per renewal (the
 * renewals are signed with `perpsSend(…, { audit: false })`). A period cut short by the background being
 * stopped is closed at the next start from a journal kept in `storage.session`.
 *
 * The switches' timings are in ./deadman-switches.ts; the audit entries' texts and the journal's records in
 * ./deadman-audit.ts.
 */
import { autoCancel } from '../perps/commands';
import { BaseError } from '../errors/base';
import type { SigningService } from '../signer/service';
import type { Vault } from '../vault/vault';
import type { AuthorityTicket } from '../authority/epoch';
import {
  ARM_WAIT_MS,
  HEARTBEAT_ARMED_WITHIN_MS,
  HEARTBEAT_MS,
  PERPS_ARMED_MIN_MS,
  PERPS_LEAD_MS,
  PERPS_RENEW_MS,
  type DeadManVenue,
} from './deadman-switches';
import {
  armedSummary,
  auditTime,
  endedSummary,
  journalRecord,
  notArmedSummary,
  stoppedPeriodEntries,
  type DeadManAuditEntry,
  type DeadManJournal,
} from './deadman-audit';

/** One kill switch to keep armed: a venue and the account (owner address) whose orders it cancels. */
export type DeadManTarget = { venue: DeadManVenue; account: string };

/** The reason the dead-man holds the background. */
export const DEADMAN_HOLD = 'dead-man';

/** One venue's switch as the popup shows it. Times Unix ms. */
export type DeadManVenueStatus = {
  venue: DeadManVenue;
  account: string;
  /** The switch is live now (what `killSwitchArmed` answers). */
  armed: boolean;
  /** When this armed period began. */
  since: number;
  /** Successful renewals in this period. */
  renewals: number;
  lastRenewal?: number;
  /** Perps: when the venue cancels every order unless renewed. */
  perpsCancelAt?: number;
  /** Order book: the last accepted heartbeat. */
  lastHeartbeat?: number;
  /** Why the last renewal failed (cleared by the next success). */
  error?: string;
};
/** What `deadman.status` answers: `armed` when at least one switch is live; one row per switch. */
export type DeadManStatus = { armed: boolean; venues: DeadManVenueStatus[] };

/** What the dead-man needs. */
export type DeadManDeps = {
  service: Pick<SigningService, 'perpsSend' | 'clobHeartbeat'>;
  /** The authority a renewal or a disarm captures at its start (`lib/authority/epoch.ts`, the kill switch's scopes). */
  ticket: () => AuthorityTicket;
  vault: Pick<Vault, 'unlocked' | 'listProxies' | 'hasClobCredentials'>;
  /** The switches to keep armed (from the live grants; see `targetsOf`). */
  targets: () => Promise<DeadManTarget[]>;
  /** Whether the keys the grants use are available (default: the vault is unlocked). */
  usable?: () => boolean;
  now?: () => number;
  /** Keeps the background awake while anything is armed. */
  lifetime?: { hold: (reason: string) => void; release: (reason: string) => void };
  audit?: (entry: DeadManAuditEntry) => Promise<void>;
  journal?: DeadManJournal;
};

type Period = {
  venue: DeadManVenue;
  account: string;
  since: number;
  renewals: number;
  failures: number;
  lastRenewal?: number;
  cancelAt?: number;
  /** Order-book heartbeat session id ('' starts a new one). */
  session: string;
  error?: string;
  announced: 'none' | 'failed' | 'armed';
  timer: ReturnType<typeof setInterval> | undefined;
  inflight?: Promise<void>;
  ended: boolean;
};

/**
 * The switches of the live grants: each grant's venue, or both venues for a grant that names none
 * (grants made before grants carried a venue). Deduplicated by venue and account (lowercase).
 */
export function targetsOf(grants: readonly { account: string; venue?: DeadManVenue }[]): DeadManTarget[] {
  const out = new Map<string, DeadManTarget>();
  for (const g of grants) {
    for (const venue of g.venue ? [g.venue] : (['perps', 'clob'] as const))
      out.set(`${venue}:${g.account.toLowerCase()}`, { venue, account: g.account });
  }
  return [...out.values()];
}

const key = (venue: DeadManVenue, account: string) => `${venue}:${account.toLowerCase()}`;

/** Keeps the kill switches of the live grants armed; see the module docstring. */
export class DeadMan {
  private readonly periods = new Map<string, Period>();
  private queue: Promise<unknown> = Promise.resolve();
  private sweep: ReturnType<typeof setInterval> | undefined;
  /** Set by `halt()`: nothing re-arms until `targets()` has been empty once (the grants were revoked). */
  private halted = false;
  private lastSave = 0;
  /** Targets whose period ends by lapsing (never unset): the site ended its own grant (`lapse`). */
  private readonly lapsed = new Set<string>();
  private readonly now: () => number;
  private readonly usable: () => boolean;

  constructor(private readonly o: DeadManDeps) {
    this.now = o.now ?? Date.now;
    this.usable = o.usable ?? (() => o.vault.unlocked);
  }

  /** Per-venue status for the popup (`deadman.status`). */
  get state(): DeadManStatus {
    const venues = [...this.periods.values()].map((p) => ({
      venue: p.venue,
      account: p.account,
      armed: this.live(p),
      since: p.since,
      renewals: p.renewals,
      ...(p.lastRenewal === undefined ? {} : { lastRenewal: p.lastRenewal }),
      ...(p.venue === 'perps' && p.cancelAt !== undefined ? { perpsCancelAt: p.cancelAt } : {}),
      ...(p.venue === 'clob' && p.lastRenewal !== undefined ? { lastHeartbeat: p.lastRenewal } : {}),
      ...(p.error ? { error: p.error } : {}),
    }));
    return { armed: venues.some((v) => v.armed), venues };
  }

  /**
   * The start hook (every background start, after the vault session is restored): closes in the audit log
   * the periods a stopped background left open, then arms every target of the live grants.
   */
  async start(): Promise<void> {
    await this.closeJournal();
    await this.sync();
  }

  /** Arms the targets of the live grants (idempotent); kept for callers of the first version. */
  arm(): Promise<void> {
    return this.sync();
  }

  /**
   * Brings the armed switches in line with `targets()`: arms new targets (first renewal at once), disarms
   * targets that are gone (see `disarm`). Serialised; never throws (failures are in the status).
   */
  sync(): Promise<void> {
    return this.exclusive(async () => {
      let targets: DeadManTarget[];
      try {
        targets = await this.o.targets();
      } catch {
        return;
      }
      if (this.halted) {
        if (targets.length > 0) return;
        this.halted = false;
      }
      const wanted = new Set(targets.map((t) => key(t.venue, t.account)));
      for (const [k, p] of this.periods) if (!wanted.has(k)) await this.end(p, 'disarm');
      if (this.halted) return; // halted while disarming: nothing arms again
      for (const t of targets) if (!this.periods.has(key(t.venue, t.account))) this.begin(t);
      this.holdOrRelease();
      await this.saveJournal(true);
    });
  }

  /**
   * The last grant ended normally: stops renewing, unsets the perps auto-cancel (time 0) while a proxy key
   * is usable, and stops the heartbeats (the exchange then cancels the order-book orders after its lapse).
   */
  disarm(): Promise<void> {
    return this.exclusive(async () => {
      for (const p of [...this.periods.values()]) await this.end(p, 'disarm');
      this.holdOrRelease();
      await this.saveJournal(true);
    });
  }

  /**
   * The site ended its own grants (`wallet_revokePermissions`): when these targets' periods end, the switch
   * is left to fire (perps at its last cancel time; heartbeats stop) instead of being unset — the orders the site
   * placed may still be open. Sticky until the period ends (a target another grant still needs keeps it).
   */
  lapse(targets: readonly DeadManTarget[]): void {
    for (const t of targets) this.lapsed.add(key(t.venue, t.account));
  }

  /**
   * Lock or panic: stops renewing at once and never unsets a switch, so each venue cancels the orders when
   * its switch fires (perps at the last cancel time, the order book after the heartbeat lapse). Nothing
   * re-arms until the grants are gone (`targets()` empty once); a grant made after that arms again.
   */
  halt(): Promise<void> {
    this.halted = true;
    this.lapsed.clear(); // nothing is unset after a halt anyway
    const stopping = [...this.periods.values()];
    for (const p of stopping) this.stop(p);
    this.holdOrRelease();
    return this.exclusive(async () => {
      for (const p of stopping) await this.record(p, 'halted by lock or panic; the venue cancels at its switch');
      await this.saveJournal(true);
    });
  }

  /**
   * Whether `venue`'s kill switch for `account` is live now: perps, the auto-cancel set at the venue is at
   * least `PERPS_ARMED_MIN_MS` ahead; order book, the last heartbeat is at most `HEARTBEAT_ARMED_WITHIN_MS`
   * old. Arms the live grants first if nothing is armed for that target yet (a request that woke the background), and
   * waits for a renewal in flight at most `ARM_WAIT_MS`. Never throws.
   */
  async killSwitchArmed(venue: DeadManVenue, account: string): Promise<boolean> {
    if (!this.usable()) return false;
    let p = this.periods.get(key(venue, account));
    if (!p && !this.halted) {
      await this.sync();
      p = this.periods.get(key(venue, account));
    }
    if (!p) return false;
    if (!this.live(p) && p.inflight) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([p.inflight, new Promise<void>((r) => (timer = setTimeout(r, ARM_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return !p.ended && this.live(p) && this.usable();
  }

  // ------------------------------------------------------------------------------------------

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private live(p: Period): boolean {
    const now = this.now();
    if (p.venue === 'perps') return p.cancelAt !== undefined && p.cancelAt - now >= PERPS_ARMED_MIN_MS;
    return p.lastRenewal !== undefined && now - p.lastRenewal <= HEARTBEAT_ARMED_WITHIN_MS;
  }

  private holdOrRelease(): void {
    const any = this.periods.size > 0;
    if (any) this.o.lifetime?.hold(DEADMAN_HOLD);
    else this.o.lifetime?.release(DEADMAN_HOLD);
    if (any && !this.sweep) this.sweep = setInterval(() => void this.sync(), PERPS_RENEW_MS);
    if (!any && this.sweep) {
      clearInterval(this.sweep);
      this.sweep = undefined;
    }
  }

  private begin(t: DeadManTarget): void {
    const p: Period = {
      venue: t.venue,
      account: t.account,
      since: this.now(),
      renewals: 0,
      failures: 0,
      session: '',
      announced: 'none',
      timer: undefined,
      ended: false,
    };
    this.periods.set(key(t.venue, t.account), p);
    void this.renew(p);
    p.timer = setInterval(() => void this.renew(p), t.venue === 'perps' ? PERPS_RENEW_MS : HEARTBEAT_MS);
  }

  /** One renewal of `p` (skipped while one is in flight). Never throws. */
  private renew(p: Period): Promise<void> {
    if (p.ended) return Promise.resolve();
    if (p.inflight) return p.inflight;
    const held = { authority: this.o.ticket() };
    const run = (async () => {
      try {
        if (!this.usable()) throw new DeadManCannotArmError('Countersign is locked');
        if (p.venue === 'perps') {
          if (!(await this.o.vault.listProxies(p.account)).some((x) => x.expiry > this.now()))
            throw new DeadManCannotArmError('no live proxy key for this account');
          const time = this.now() + PERPS_LEAD_MS;
          await this.o.service.perpsSend(p.account, autoCancel({ time }), {
            origin: 'dead-man',
            summary: `Dead-man: cancel all perps orders at ${auditTime(time)} unless renewed`,
            audit: false,
            ...held,
          });
          p.cancelAt = time;
        } else {
          if (!(await this.o.vault.hasClobCredentials(p.account)))
            throw new DeadManCannotArmError('no order-book API credentials for this account');
          try {
            p.session = await this.o.service.clobHeartbeat(p.account, p.session, held);
          } catch (err) {
            p.session = ''; // the next beat starts a new session (the old one may have lapsed)
            throw err;
          }
        }
        if (p.ended) return;
        p.renewals++;
        p.lastRenewal = this.now();
        p.error = undefined;
        if (p.announced !== 'armed') {
          p.announced = 'armed';
          await this.audit(p, 'deadman.arm', 'ok', armedSummary(p));
        }
      } catch (err) {
        if (p.ended) return;
        p.failures++;
        p.error = err instanceof BaseError ? err.shortMessage : 'The venue did not answer.';
        if (p.announced === 'none') {
          p.announced = 'failed';
          await this.audit(p, 'deadman.arm', 'error', notArmedSummary(p), p.error);
        }
      }
      await this.saveJournal(false);
    })();
    p.inflight = run;
    void run.finally(() => {
      if (p.inflight === run) p.inflight = undefined;
    });
    return run;
  }

  private stop(p: Period): void {
    p.ended = true;
    clearInterval(p.timer);
    p.timer = undefined;
    if (this.periods.get(key(p.venue, p.account)) === p) this.periods.delete(key(p.venue, p.account));
  }

  /** Ends `p` normally: stop, then (perps) unset the venue's auto-cancel when a proxy key is usable. */
  private async end(p: Period, how: 'disarm'): Promise<void> {
    const inflight = p.inflight;
    this.stop(p);
    await inflight; // a renewal landing after the time-0 would re-arm the venue
    let outcome = 'the grant ended';
    const lapse = this.lapsed.delete(key(p.venue, p.account));
    if (lapse && p.venue === 'perps' && p.cancelAt !== undefined)
      outcome += `; the site disconnected: auto-cancel left to fire at ${auditTime(p.cancelAt)}`;
    else if (how === 'disarm' && p.venue === 'perps' && p.cancelAt !== undefined) {
      try {
        // Only with the vault fully unlocked: a trading session ending is a lock, and a lock never unsets.
        if (!this.o.vault.unlocked) throw new DeadManCannotArmError('Countersign is locked');
        if (!(await this.o.vault.listProxies(p.account)).some((x) => x.expiry > this.now()))
          throw new DeadManCannotArmError('no usable proxy key');
        await this.o.service.perpsSend(p.account, autoCancel({ time: 0 }), {
          origin: 'dead-man',
          summary: 'Dead-man: disarmed',
          audit: false,
          authority: this.o.ticket(),
        });
        outcome += '; auto-cancel unset';
      } catch (err) {
        outcome +=
          `; auto-cancel not unset (${err instanceof BaseError ? err.shortMessage : 'the venue did not answer'}): ` +
          `the venue cancels at ${auditTime(p.cancelAt)}`;
      }
    } else if (p.venue === 'clob' && p.renewals > 0)
      outcome += '; heartbeats stopped: the exchange cancels the order-book orders after its lapse';
    await this.record(p, outcome);
  }

  /** The end-of-period audit entry. */
  private async record(p: Period, outcome: string): Promise<void> {
    await this.audit(p, 'deadman.end', 'ok', endedSummary(p, outcome));
  }

  private async audit(
    p: { account: string },
    kind: DeadManAuditEntry['kind'],
    result: DeadManAuditEntry['result'],
    summary: string,
    detail?: string,
  ): Promise<void> {
    try {
      await this.o.audit?.({ account: p.account.toLowerCase(), kind, summary, result, ...(detail ? { detail } : {}) });
    } catch {
      /* the audit log being unavailable never stops a renewal */
    }
  }

  /** Saves the running periods (at most every `PERPS_RENEW_MS` unless `force`). */
  private async saveJournal(force: boolean): Promise<void> {
    if (!this.o.journal || (!force && this.now() - this.lastSave < PERPS_RENEW_MS)) return;
    this.lastSave = this.now();
    const records = [...this.periods.values()].map(journalRecord);
    try {
      await this.o.journal.save(records);
    } catch {
      /* best effort */
    }
  }

  /** Closes, in the audit log, the periods a stopped background left in the journal. */
  private async closeJournal(): Promise<void> {
    if (!this.o.journal || this.periods.size > 0) return;
    let saved: unknown;
    try {
      saved = await this.o.journal.load();
    } catch {
      return;
    }
    if (!Array.isArray(saved)) return;
    for (const e of stoppedPeriodEntries(saved)) await this.audit(e, 'deadman.end', 'ok', e.summary);
    await this.saveJournal(true);
  }
}

/** Why a switch could not be armed or renewed (no usable key or credentials, vault locked). */
export class DeadManCannotArmError extends BaseError {
  override name = 'DeadMan.CannotArmError';
  constructor(reason: string) {
    super(`The kill switch cannot be armed: ${reason}.`);
  }
}
