/**
 * Lock behaviour in one place: lock, auto-lock, the trading session and its minute tick, unlock's
 * follow-ups, and what a trading session may still be asked.
 *
 * Auto-lock: a person's actions re-arm a one-shot `autolock` alarm N minutes ahead (N from settings,
 * default 15): the procedures marked `activity` in the message contract (unlock, sign, approve, change
 * settings, search, and `session.activity`, which the popup sends on real input), when they succeed and
 * come from an extension page. Scheduled reads (`vault.status`, `approval.list`, books, orders) never
 * re-arm it, so an approval window or popup left open still locks at the deadline. A browser restart
 * locks too (`runtime.onStartup`; `storage.session` is emptied by the browser anyway).
 *
 * Lock: the vault locks; the dead-man stops renewing (the venues' kill switches fire, never unset); every
 * standing grant is revoked; every pending approval is rejected with 4900; pages see no account and a
 * 4900 `disconnect`.
 *
 * Trading session ("A grant outlives auto-lock, the owner key does not"): when auto-lock fires while a
 * grant is live, the owner key and everything the live grants do not use are sealed; the grants' proxy
 * keys and API credentials stay, so the granted site keeps trading within its limits and the kill
 * switches keep being renewed. Pending approvals are rejected (4900) and sites without a grant see no
 * account. It ends when the last grant ends or expires (the vault then locks), on Lock and on Panic.
 */
import { numberToHex } from 'viem';
import { PROCEDURES, type ProcedureName } from '../messaging/protocol';
import type { BrowserSender } from '../messaging/router';
import type { ApprovalRegistry } from '../approvals/registry';
import { disconnected } from '../errors/rpc';
import type { GrantService } from '../grants/service';
import { sessionText } from '../grants/session';
import { auditLog, pruneAudit } from '../audit';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import type { SigningService } from '../signer/service';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { DeadMan } from './deadman';
import type { BackgroundBrowser } from './browser';
import type { Emit } from './ports';
import { SESSION_PROCEDURES } from './procedures';

/** The one-shot auto-lock alarm (re-armed by a person's actions). */
export const AUTOLOCK_ALARM = 'autolock';
/** Minute alarm while a grant is live: expiry sweep and the trading-session title. */
export const GRANTS_ALARM = 'grants.tick';

/** What `Locks` works on: every service is built before it (see `compose.ts`). */
export type LocksDeps = {
  browser: BackgroundBrowser;
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  grants: GrantService;
  deadman: DeadMan;
  registry: ApprovalRegistry;
  emit: Emit;
  /** Extra work after lock (`BackgroundOptions.onLocked`). */
  onLocked?: () => Promise<void>;
};

/** Whether `type` names a procedure of the message contract. */
function isProcedure(type: unknown): type is ProcedureName {
  return typeof type === 'string' && Object.hasOwn(PROCEDURES, type);
}

/** The procedure a runtime message names (`{ type }`), if it names one. */
export function procedureOf(message: unknown): ProcedureName | undefined {
  if (typeof message !== 'object' || message === null || !('type' in message)) return undefined;
  return isProcedure(message.type) ? message.type : undefined;
}

/** Lock, auto-lock, the trading session and unlock's follow-ups. */
export class Locks {
  constructor(private readonly d: LocksDeps) {}

  /** Re-arms the one-shot auto-lock alarm `autoLockMinutes` (settings) from now. */
  async armAutoLock(): Promise<void> {
    const { autoLockMinutes } = await readSettings(this.d.db);
    await this.d.browser.alarms.clear(AUTOLOCK_ALARM);
    await this.d.browser.alarms.create(AUTOLOCK_ALARM, { delayInMinutes: autoLockMinutes });
  }

  /**
   * Locks the vault, then everything that follows a lock (`afterLock`). Every grant is revoked first, at
   * the call (`GrantService.revokeAll` counts the revocation synchronously): the vault's lock waits its
   * turn behind writes already queued, and a granted request waiting among them must not pass its last
   * check before the send meanwhile (`lib/background/page-path.granted.test.ts`, "a popup lock while the
   * write is pending").
   */
  readonly lock = async (): Promise<void> => {
    // everything started before the lock ends here (`lib/authority/epoch.ts`)
    this.d.service.authority.end('all', 'lock');
    const revoked = this.d.grants.revokeAll();
    await this.d.vault.lock();
    await revoked.catch(() => undefined); // afterLock revokes again (and reports)
    await this.afterLock();
  };

  /**
   * What follows every lock (the `vault.lock` procedure, panic, auto-lock, browser start): the dead-man
   * halts (kill switches fire, never unset), the auto-lock alarm is cleared, every grant is revoked, every
   * pending approval is rejected (4900), and connected sites see no account (`accountsChanged: []`). No
   * `disconnect`: the provider still serves the chain (EIP-1193 keeps `disconnect` for when it cannot).
   */
  readonly afterLock = async (): Promise<void> => {
    this.d.service.authority.end('all', 'lock');
    await this.d.deadman.halt();
    await this.d.browser.alarms.clear(AUTOLOCK_ALARM);
    await this.d.grants.revokeAll();
    this.d.registry.rejectAll(() => disconnected('Countersign was locked; the request was cancelled.'));
    // Only connected sites are told: a page that never connected does not learn when the person locks.
    for (const c of await this.d.db.getAll('connections').catch(() => [])) this.d.emit(c.origin, 'accountsChanged', []);
    await this.d.onLocked?.();
  };

  /**
   * The auto-lock alarm fired: with no live grant the vault locks; with one it enters a trading session
   * (pending approvals rejected with 4900, sites without a grant told they have no account). When the
   * session cannot keep what the grants need, the vault locks fully (the safe side).
   */
  readonly autoLock = async (): Promise<void> => {
    const { vault, grants, registry, db, emit } = this.d;
    if (vault.unlocked) {
      const live = await grants.list().catch(() => []);
      if (live.length) {
        // Only the grants go on: whatever the person approved or started before ends here.
        this.d.service.authority.end('person', 'session');
        try {
          await vault.enterTradingSession({ accounts: [...new Set(live.map((g) => g.account.toLowerCase()))] });
          await this.d.browser.alarms.clear(AUTOLOCK_ALARM);
          registry.rejectAll(() =>
            disconnected(
              'Countersign auto-locked (a trading session keeps only ' +
                'standing permissions); unlock to approve this request.',
            ),
          );
          const granted = new Set(live.map((g) => g.origin));
          for (const c of await db.getAll('connections'))
            if (!granted.has(c.origin)) emit(c.origin, 'accountsChanged', []);
          await this.sessionTick();
          return;
        } catch {
          /* could not keep what the grants need: lock fully (the safe side) */
        }
      }
    }
    await this.lock();
  };

  /**
   * Every minute while a grant is live (and on every grant change): sweeps expired grants (the last one
   * ending locks a trading session) and shows "Trading session: <site>, <time left>" in the toolbar
   * button's title. Never locks while panic runs (panic revokes the grants first and locks itself).
   */
  readonly sessionTick = async (): Promise<void> => {
    const { vault, grants, service, browser } = this.d;
    if (vault.state === 'locked') return;
    const live = await grants.list();
    if (!live.length) {
      await browser.alarms.clear(GRANTS_ALARM);
      void browser.action?.setTitle?.({ title: 'Countersign' });
      if (vault.sessionLive && !service.halted) await this.lock();
      return;
    }
    await browser.alarms.create(GRANTS_ALARM, { delayInMinutes: 1 });
    const text = sessionText(
      live.map((g) => ({ origin: g.origin, expiresAt: g.expiresAt })),
      Date.now(),
    );
    void browser.action?.setTitle?.({
      title: `Countersign — trading session: ${text}${vault.sessionLive ? ' (owner key locked)' : ''}`,
    });
  };

  /** Runs the lock alarms: `AUTOLOCK_ALARM` auto-locks, `GRANTS_ALARM` ticks the session; others are ignored. */
  alarm(name: string): Promise<void> {
    if (name === AUTOLOCK_ALARM) return this.autoLock();
    if (name === GRANTS_ALARM) return this.sessionTick().catch(() => undefined);
    return Promise.resolve();
  }

  /**
   * After an unlock: a grant left on disk by a browser restart (locked without running the lock path) is
   * revoked — unlocking a trading session (`fromSession`) keeps its grants; the auto-lock is armed; the
   * audit log is pruned to its retention; connected sites of the active account get `connect`
   * (`{ chainId }`, hex) and their accounts back (`accountsChanged`).
   */
  readonly unlocked = async ({ fromSession }: { fromSession: boolean }): Promise<void> => {
    const { vault, db, grants, emit } = this.d;
    if (!fromSession) await grants.revokeAll();
    else await this.sessionTick();
    await this.armAutoLock();
    await pruneAudit(
      auditLog(db, () => vault.auditKey()),
      (await readSettings(db)).auditRetentionDays,
    );
    const active = await activeAccount(db, vault);
    const chainId = numberToHex((await readSettings(db)).clobChainId);
    for (const c of await db.getAll('connections')) {
      if (c.accounts[0]?.toLowerCase() !== active?.address.toLowerCase()) continue;
      emit(c.origin, 'connect', { chainId });
      emit(c.origin, 'accountsChanged', c.accounts);
    }
  };

  /** Settings changed: re-arm the auto-lock (its minutes may have changed) while unlocked. */
  readonly settingsChanged = async (): Promise<void> => {
    if (this.d.vault.unlocked) await this.armAutoLock();
  };

  /**
   * Whether a trading session refuses `procedure` (it serves only `SESSION_PROCEDURES`; the rest needs the password).
   */
  refusedInSession(procedure: ProcedureName | undefined): boolean {
    return this.d.vault.sessionLive && procedure !== undefined && !SESSION_PROCEDURES.has(procedure);
  }

  /** After a successful call: a person's action (`activity`) from an extension page re-arms the auto-lock. */
  async activity(procedure: ProcedureName | undefined, sender: BrowserSender): Promise<void> {
    if (
      procedure &&
      PROCEDURES[procedure].activity &&
      this.d.vault.unlocked &&
      sender.url?.startsWith(this.d.browser.runtime.getURL('/'))
    )
      await this.armAutoLock();
  }
}
