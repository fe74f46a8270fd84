/**
 * The background service worker's composition: opens the vault database, builds the vault, the
 * signing service and the message router, and wires auto-lock (alarms), lock-on-browser-start and the
 * session store. Listeners are registered synchronously (MV3 may start the worker for an event) and
 * each awaits `ready`.
 *
 * Auto-lock (issue #14 §2): a person's actions re-arm a one-shot `autolock` alarm N minutes ahead (N
 * from settings, default 15): the procedures marked `activity` in the message contract (unlock, sign,
 * approve, change settings, search, and `session.activity`, which the popup sends on real input).
 * Scheduled reads (`vault.status`, `approval.list`, books, orders) never re-arm it, so an approval
 * window or popup left open still locks at the deadline. When the alarm fires the vault locks and every
 * pending approval is rejected with 4900. A browser restart locks too (`runtime.onStartup`, and
 * `storage.session` is emptied by the browser anyway).
 *
 * Lifetime (issue #17 §6, `lifetime.ts`): every start of the worker / event page runs the `Lifetime`
 * start hooks once the session is restored — the dead-man re-arms the kill switches of the live grants
 * there, before any granted request is signed — and the dead-man holds the background awake while armed.
 */
import { createRouter, identifySender, OUTPUT_CHECKS, type BrowserSender } from '../messaging/router';
import { PROCEDURES } from '../messaging/protocol';
import { ApprovalRegistry } from '../approvals/registry';
import { MAX_REQUEST_BYTES, PORT_NAME } from '../bridge/framing';
import { disconnected, invalidParams, toRpcError, userRejected } from '../provider/errors';
import { ProviderService } from '../provider/service';
import { GrantService } from '../grants/service';
import { appendAudit, auditLog, pruneAudit } from '../audit';
import { DeadMan, targetsOf, type DeadManJournalRecord } from './deadman';
import { Lifetime } from './lifetime';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import { sessionText } from '../grants/session';
import { SigningService } from '../signer/service';
import { openVaultDb, type VaultDb } from '../vault/db';
import { Vault, type SessionState, type SessionStore } from '../vault/vault';
import { createProcedures, SESSION_PROCEDURES } from './procedures';
import { VaultLockedError } from '../vault/errors';
import { toWireError } from '../errors/base';
import type { PanicTiming } from './panic';
import type { KdfBounds, KdfParams } from '../vault/crypto';

/** The parts of the WebExtension API the background uses (webextension-polyfill or WXT's fake browser). */
export type BackgroundBrowser = {
  runtime: {
    id: string;
    getURL: (path: string) => string;
    onMessage: { addListener: (fn: (message: unknown, sender: BrowserSender) => Promise<unknown> | undefined) => void };
    onStartup: { addListener: (fn: () => void) => void };
    /** Called every 20 s while the background is held alive (`lib/background/lifetime.ts`). */
    getPlatformInfo?: () => Promise<unknown>;
    onInstalled?: { addListener: (fn: (details: { reason: string }) => void) => void };
    onConnect?: { addListener: (fn: (port: BrowserPort) => void) => void };
  };
  windows?: {
    create: (o: { url: string; type: 'popup'; width: number; height: number; focused?: boolean }) => Promise<{ id?: number }>;
    update: (id: number, o: { focused: boolean }) => Promise<unknown>;
    remove?: (id: number) => Promise<unknown>;
    onRemoved: { addListener: (fn: (id: number) => void) => void };
  };
  tabs?: { create: (o: { url: string }) => Promise<unknown> };
  commands?: { onCommand: { addListener: (fn: (command: string) => void) => void } };
  action?: {
    setBadgeText: (o: { text: string }) => Promise<void> | void;
    setBadgeBackgroundColor?: (o: { color: string }) => Promise<void> | void;
    setTitle?: (o: { title: string }) => Promise<void> | void;
  };
  storage: {
    session: {
      get: (key: string) => Promise<Record<string, unknown>>;
      set: (items: Record<string, unknown>) => Promise<void>;
      remove: (key: string) => Promise<void>;
      setAccessLevel?: (o: { accessLevel: 'TRUSTED_CONTEXTS' | 'TRUSTED_AND_UNTRUSTED_CONTEXTS' }) => Promise<void>;
    };
  };
  alarms: {
    create: (name: string, info: { delayInMinutes?: number; periodInMinutes?: number }) => unknown;
    clear: (name: string) => Promise<unknown>;
    onAlarm: { addListener: (fn: (alarm: { name: string }) => void) => void };
  };
};

/** A runtime port (content script ↔ background). */
export type BrowserPort = {
  name: string;
  sender?: BrowserSender;
  postMessage: (m: unknown) => void;
  disconnect: () => void;
  onMessage: { addListener: (fn: (m: unknown) => void) => void };
  onDisconnect: { addListener: (fn: () => void) => void };
};

export const AUTOLOCK_ALARM = 'autolock';
/** Minute alarm while a grant is live: expiry sweep and the trading-session title. */
export const GRANTS_ALARM = 'grants.tick';
const SESSION_KEY = 'vault.session';
const DEADMAN_JOURNAL_KEY = 'deadman.journal';

function sessionStore(browser: BackgroundBrowser): SessionStore {
  return {
    get: async () => (await browser.storage.session.get(SESSION_KEY))[SESSION_KEY] as SessionState | undefined,
    set: (s) => browser.storage.session.set({ [SESSION_KEY]: s }),
    clear: () => browser.storage.session.remove(SESSION_KEY),
  };
}

export type BackgroundOptions = {
  browser: BackgroundBrowser;
  dbName?: string;
  /** KDF parameters (tests lower them; the extension uses the defaults). */
  kdf?: KdfParams;
  bounds?: KdfBounds;
  fetchFn?: typeof fetch;
  now?: () => number;
  /** Extra work after lock (the bridge rejects pending approvals and tells pages). */
  onLocked?: () => Promise<void>;
  /** Panic's time limits (tests lower them; default `PANIC_TIMING` in ./panic). */
  panicTiming?: Partial<PanicTiming>;
};

export type Background = {
  ready: Promise<void>;
  handle: (message: unknown, sender: BrowserSender) => Promise<unknown>;
  vault: () => Vault;
  db: () => VaultDb;
  service: () => SigningService;
  grants: () => GrantService;
  registry: ApprovalRegistry;
  lock: () => Promise<void>;
  /** Handles one page request as if it came over a port from `sender` (tests). */
  pageRequest: (sender: BrowserSender, method: string, params: unknown) => Promise<unknown>;
};

/** Wires the background. Call once from `defineBackground`'s `main` (synchronously). */
export function startBackground(o: BackgroundOptions): Background {
  const { browser } = o;
  let vault!: Vault;
  let db!: VaultDb;
  let service!: SigningService;
  let route!: ReturnType<typeof createRouter>;
  let provider!: ProviderService;
  const extensionOrigin = browser.runtime.getURL('/');
  const ports = new Set<{ port: BrowserPort; origin: string }>();
  let approvalWindowId: number | undefined;
  /** The request the approval window last said it displays (issue #17 §10): closing the window ends only this one. */
  let shownInWindow: { id: string; digest: string } | undefined;

  // The badge: pending approvals (amber count) first; otherwise "ON" (green) while a standing grant is live.
  let pendingCount = 0;
  let liveGrants = 0;
  const badge = () => {
    void browser.action?.setBadgeText({ text: pendingCount ? String(pendingCount) : liveGrants ? 'ON' : '' });
    void browser.action?.setBadgeBackgroundColor?.({ color: pendingCount ? '#b45309' : '#047857' });
  };
  const registry = new ApprovalRegistry({
    onChange: (pending) => {
      pendingCount = pending.length;
      badge();
    },
  });
  let grants!: GrantService;
  let deadman!: DeadMan;
  // The background's lifetime (issue #17 §6): its alarm listener is registered here, synchronously.
  const lifetime = new Lifetime({ browser });

  const emit = (origin: string | undefined, event: string, data: unknown) => {
    for (const p of ports) {
      if (origin === undefined || p.origin === origin) {
        try {
          p.port.postMessage({ event, data });
        } catch {
          ports.delete(p);
        }
      }
    }
  };

  // One approval window at a time: concurrent requests share one `windows.create`; a window the
  // background is closing is never reused (`approval.empty` forgets its id before removing it).
  let opening: Promise<void> | undefined;
  const showApprovals = async (): Promise<void> => {
    if (!browser.windows) return;
    if (opening) return opening;
    if (approvalWindowId !== undefined) {
      try {
        await browser.windows.update(approvalWindowId, { focused: true });
        return;
      } catch {
        approvalWindowId = undefined;
      }
    }
    opening = (async () => {
      const w = await browser.windows!.create({ url: browser.runtime.getURL('/approval.html'), type: 'popup', width: 420, height: 640, focused: true });
      approvalWindowId = w.id;
    })().finally(() => (opening = undefined));
    return opening;
  };

  const pageRequest = async (sender: BrowserSender, method: string, params: unknown) => {
    await ready;
    await vault.restoreSession();
    const who = identifySender(sender, browser.runtime.id, extensionOrigin);
    if (!who || who.kind !== 'content') throw invalidParams('Requests must come from a page.');
    let size = 0;
    try {
      size = new TextEncoder().encode(JSON.stringify(params ?? null)).length;
    } catch {
      throw invalidParams('params must be JSON.');
    }
    if (size > MAX_REQUEST_BYTES) throw invalidParams('The request is larger than 64 KiB.');
    return provider.request(who.origin, method, params);
  };

  const armAutoLock = async () => {
    const { autoLockMinutes } = await readSettings(db);
    await browser.alarms.clear(AUTOLOCK_ALARM);
    await browser.alarms.create(AUTOLOCK_ALARM, { delayInMinutes: autoLockMinutes });
  };
  const afterLock = async () => {
    await deadman.halt(); // lock never unsets the venues' kill switches: they fire
    await browser.alarms.clear(AUTOLOCK_ALARM);
    await grants.revokeAll(); // lock revokes every standing grant
    registry.rejectAll(() => disconnected('Countersign was locked; the request was cancelled.'));
    emit(undefined, 'accountsChanged', []);
    emit(undefined, 'disconnect', { code: 4900, message: 'Countersign is locked.' });
    await o.onLocked?.();
  };
  const lock = async () => {
    await vault.lock();
    await afterLock();
  };

  /**
   * Auto-lock (issue #17, "A grant outlives auto-lock, the owner key does not"): with no live grant the
   * vault locks. While a grant is live it enters a trading session instead: the owner key and everything
   * the live grants do not use are sealed (the master key is forgotten); the grants' proxy keys and API
   * credentials stay so the granted site keeps trading within its limits and the kill switches keep
   * being renewed. Pending approvals are rejected (4900) and sites without a grant see no account.
   * The session ends when the last grant ends or expires (then the vault locks), on Lock and on Panic.
   */
  const autoLock = async () => {
    if (vault.unlocked) {
      const live = await grants.list().catch(() => []);
      if (live.length) {
        try {
          await vault.enterTradingSession({ accounts: [...new Set(live.map((g) => g.account.toLowerCase()))] });
          await browser.alarms.clear(AUTOLOCK_ALARM);
          registry.rejectAll(() => disconnected('Countersign auto-locked (a trading session keeps only standing permissions); unlock to approve this request.'));
          const granted = new Set(live.map((g) => g.origin));
          for (const c of await db.getAll('connections')) if (!granted.has(c.origin)) emit(c.origin, 'accountsChanged', []);
          await sessionTick();
          return;
        } catch {
          /* could not keep what the grants need: lock fully (the safe side) */
        }
      }
    }
    await lock();
  };

  /**
   * Every minute while a grant is live: sweeps expired grants (the last one ending locks a trading
   * session) and shows "Trading session: <site>, <time left>" in the toolbar button's title.
   */
  const sessionTick = async () => {
    if (vault.state === 'locked') return;
    const live = await grants.list();
    if (!live.length) {
      await browser.alarms.clear(GRANTS_ALARM);
      void browser.action?.setTitle?.({ title: 'Countersign' });
      // (Panic revokes the grants first and locks itself after its cancels: never lock under it.)
      if (vault.sessionLive && !service.halted) await lock();
      return;
    }
    await browser.alarms.create(GRANTS_ALARM, { delayInMinutes: 1 });
    const text = sessionText(live.map((g) => ({ origin: g.origin, expiresAt: g.expiresAt })), Date.now());
    void browser.action?.setTitle?.({ title: `Countersign — trading session: ${text}${vault.sessionLive ? ' (owner key locked)' : ''}` });
  };

  const ready = (async () => {
    try {
      // Content scripts must never read the session store (it holds the exported master key).
      await browser.storage.session.setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' });
    } catch {
      /* already the default in Chrome; unsupported in the test double */
    }
    db = await openVaultDb(o.dbName);
    vault = new Vault({ db, session: sessionStore(browser), ...(o.now ? { now: o.now } : {}), ...(o.kdf ? { kdf: o.kdf } : {}), ...(o.bounds ? { bounds: o.bounds } : {}) });
    await vault.restoreSession();
    service = new SigningService({
      vault,
      db,
      settings: () => readSettings(db),
      ...(o.fetchFn ? { fetchFn: o.fetchFn } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
    grants = new GrantService({
      vault,
      ...(o.now ? { now: o.now } : {}),
      onChange: (n) => {
        liveGrants = n;
        badge();
        void sessionTick().catch(() => undefined);
        // While a grant is live the venues' kill switches stay armed (issue #11 §3, issue #17 §6).
        void deadman.sync();
      },
    });
    deadman = new DeadMan({
      service,
      vault,
      targets: async () => targetsOf(await grants.list()),
      lifetime,
      // The session state keeps the grants' proxy keys and API credentials: renewals go on in it.
      usable: () => vault.state !== 'locked',
      audit: (e) => appendAudit(auditLog(db, () => vault.auditKey()), { at: (o.now ?? Date.now)(), origin: 'dead-man', ...e }).then(() => undefined),
      journal: {
        load: async () => (await browser.storage.session.get(DEADMAN_JOURNAL_KEY))[DEADMAN_JOURNAL_KEY],
        save: (records: DeadManJournalRecord[]) => browser.storage.session.set({ [DEADMAN_JOURNAL_KEY]: records }),
      },
      ...(o.now ? { now: o.now } : {}),
    });
    // Every start (after the session restore above): re-arm the kill switches of the live grants.
    lifetime.onStart(() => deadman.start());
    provider = new ProviderService({ vault, db, service, registry, showApprovals, emit, grants, killSwitchArmed: (venue, account) => deadman.killSwitchArmed(venue, account),
      beforeSiteRevoke: async (origin) => deadman.lapse(targetsOf((await grants.list()).filter((g) => g.origin === origin))),
    });
    route = createRouter(
      createProcedures({
        vault,
        db,
        service,
        registry,
        grants,
        deadman: () => deadman.state,
        ...(o.panicTiming ? { panicTiming: o.panicTiming } : {}),
        haltKillSwitches: () => void deadman.halt(),
        onApprovalEmpty: async () => {
          if (registry.size > 0) return false;
          const id = approvalWindowId;
          approvalWindowId = undefined;
          shownInWindow = undefined;
          if (id !== undefined) await browser.windows?.remove?.(id).catch(() => undefined);
          return true;
        },
        onApprovalShown: (id, digest) => {
          if (registry.list().some((x) => x.id === id)) shownInWindow = { id, digest };
        },
        onUnlocked: async ({ fromSession }) => {
          // Grants never outlive a lock: one left on disk by a browser restart (locked without running
          // the lock path) is revoked at the next unlock. Unlocking a trading session keeps its grants.
          if (!fromSession) await grants.revokeAll();
          else await sessionTick();
          await armAutoLock();
          await pruneAudit(auditLog(db, () => vault.auditKey()), (await readSettings(db)).auditRetentionDays);
          const active = await activeAccount(db, vault);
          for (const c of await db.getAll('connections')) {
            if (c.accounts[0]?.toLowerCase() === active?.address.toLowerCase()) emit(c.origin, 'accountsChanged', c.accounts);
          }
        },
        onLocked: afterLock,
        onSettings: async () => {
          if (vault.unlocked) await armAutoLock();
        },
        onAccountChanged: async (active) => {
          registry.rejectAll(() => userRejected('You switched accounts in Countersign; the request was cancelled.'));
          for (const c of await db.getAll('connections')) {
            emit(c.origin, 'accountsChanged', c.accounts[0]?.toLowerCase() === active.toLowerCase() && vault.unlocked ? c.accounts : []);
          }
        },
      }),
      { extensionId: browser.runtime.id, extensionOrigin },
      { checkOutputs: OUTPUT_CHECKS },
    );
  })();

  void ready.then(() => lifetime.start(), () => undefined);

  const handle = async (message: unknown, sender: BrowserSender) => {
    await ready;
    await vault.restoreSession();
    const type = (message as { type?: unknown } | null)?.type;
    // A trading session serves only what SESSION_PROCEDURES lists; the rest needs the password again.
    if (vault.sessionLive && typeof type === 'string' && Object.hasOwn(PROCEDURES, type) && !SESSION_PROCEDURES.has(type)) {
      return { ok: false, error: toWireError(new VaultLockedError({ inSession: true })) };
    }
    const reply = await route(message, sender);
    // A person's action from an extension page (not a scheduled read) re-arms the auto-lock timer.
    const activity = typeof type === 'string' && Object.hasOwn(PROCEDURES, type) && PROCEDURES[type as keyof typeof PROCEDURES].activity;
    if (activity && reply.ok && vault.unlocked && sender.url?.startsWith(browser.runtime.getURL('/'))) await armAutoLock();
    return reply;
  };

  browser.runtime.onMessage.addListener((message, sender) => handle(message, sender));
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === AUTOLOCK_ALARM) void ready.then(autoLock);
    if (alarm.name === GRANTS_ALARM) void ready.then(sessionTick).catch(() => undefined);
  });
  browser.runtime.onStartup.addListener(() => void ready.then(lock));
  // First install: open the onboarding in a tab (a person sees where to start; the popup is small).
  browser.runtime.onInstalled?.addListener(({ reason }) => {
    if (reason === 'install') void browser.tabs?.create({ url: browser.runtime.getURL('/popup.html#welcome') });
  });
  // The panic shortcut opens the popup on the panic confirmation (one click away, never automatic).
  browser.commands?.onCommand.addListener((command) => {
    if (command === 'panic') void browser.windows?.create({ url: browser.runtime.getURL('/popup.html#panic'), type: 'popup', width: 400, height: 600, focused: true });
  });

  // Pages talk over a port from the content script; the origin is the port sender's tab URL.
  browser.runtime.onConnect?.addListener((port) => {
    const who = port.sender ? identifySender(port.sender, browser.runtime.id, extensionOrigin) : undefined;
    if (port.name !== PORT_NAME || !who || who.kind !== 'content') {
      port.disconnect();
      return;
    }
    const entry = { port, origin: who.origin };
    ports.add(entry);
    port.onDisconnect.addListener(() => ports.delete(entry));
    port.onMessage.addListener((m) => {
      const msg = m as { id?: unknown; method?: unknown; params?: unknown } | null;
      if (!msg || typeof msg.id !== 'string' || msg.id.length > 64) return;
      const id = msg.id;
      const method = typeof msg.method === 'string' ? msg.method : '';
      pageRequest(port.sender!, method, msg.params).then(
        (result) => {
          try {
            port.postMessage({ id, result: result ?? null });
          } catch {
            /* page went away */
          }
        },
        (err) => {
          try {
            port.postMessage({ id, error: toRpcError(err) });
          } catch {
            /* page went away */
          }
        },
      );
    });
  });

  // Closing the approval window rejects only the request it said it was displaying (by id; the person saw
  // that request, at this or an earlier digest of the same request). A request that arrived while the
  // window was closing was never shown: it stays pending and gets a new window.
  browser.windows?.onRemoved.addListener((id) => {
    if (id !== approvalWindowId) return;
    approvalWindowId = undefined;
    const shown = shownInWindow;
    shownInWindow = undefined;
    if (shown && registry.list().some((x) => x.id === shown.id)) registry.decide(shown.id, { approve: false });
    if (registry.size > 0) void showApprovals();
  });

  return { ready, handle, vault: () => vault, db: () => db, service: () => service, grants: () => grants, registry, lock, pageRequest };
}
