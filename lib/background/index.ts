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
import { createRouter, identifySender, type BrowserSender } from '../messaging/router';
import { PROCEDURES } from '../messaging/protocol';
import { ApprovalRegistry } from '../approvals/registry';
import { MAX_REQUEST_BYTES, PORT_NAME } from '../bridge/framing';
import { disconnected, invalidParams, toRpcError, userRejected } from '../provider/errors';
import { ProviderService } from '../provider/service';
import { GrantService } from '../grants/service';
import { appendAudit, pruneAudit } from '../audit';
import { DeadMan, targetsOf, type DeadManJournalRecord } from './deadman';
import { Lifetime } from './lifetime';
import { readSettings } from '../settings';
import { activeAccount } from '../accounts';
import { SigningService } from '../signer/service';
import { openVaultDb, type VaultDb } from '../vault/db';
import { Vault, type SessionState, type SessionStore } from '../vault/vault';
import { createProcedures } from './procedures';
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
    onRemoved: { addListener: (fn: (id: number) => void) => void };
  };
  tabs?: { create: (o: { url: string }) => Promise<unknown> };
  commands?: { onCommand: { addListener: (fn: (command: string) => void) => void } };
  action?: { setBadgeText: (o: { text: string }) => Promise<void> | void; setBadgeBackgroundColor?: (o: { color: string }) => Promise<void> | void };
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

  const showApprovals = async () => {
    if (!browser.windows) return;
    if (approvalWindowId !== undefined) {
      try {
        await browser.windows.update(approvalWindowId, { focused: true });
        return;
      } catch {
        approvalWindowId = undefined;
      }
    }
    const w = await browser.windows.create({ url: browser.runtime.getURL('/approval.html'), type: 'popup', width: 420, height: 640, focused: true });
    approvalWindowId = w.id;
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
        // While a grant is live the venues' kill switches stay armed (issue #11 §3, issue #17 §6).
        void deadman.sync();
      },
    });
    deadman = new DeadMan({
      service,
      vault,
      targets: async () => targetsOf(await grants.list()),
      lifetime,
      audit: (e) => appendAudit(db, { at: (o.now ?? Date.now)(), origin: 'dead-man', ...e }),
      journal: {
        load: async () => (await browser.storage.session.get(DEADMAN_JOURNAL_KEY))[DEADMAN_JOURNAL_KEY],
        save: (records: DeadManJournalRecord[]) => browser.storage.session.set({ [DEADMAN_JOURNAL_KEY]: records }),
      },
      ...(o.now ? { now: o.now } : {}),
    });
    // Every start (after the session restore above): re-arm the kill switches of the live grants.
    lifetime.onStart(() => deadman.start());
    provider = new ProviderService({ vault, db, service, registry, showApprovals, emit, grants, killSwitchArmed: (venue, account) => deadman.killSwitchArmed(venue, account) });
    route = createRouter(
      createProcedures({
        vault,
        db,
        service,
        registry,
        grants,
        deadman: () => deadman.state,
        onPanic: () => deadman.halt(),
        onUnlocked: async () => {
          // Grants never outlive a lock: one left on disk by a browser restart (locked without running
          // the lock path) is revoked at the next unlock.
          await grants.revokeAll();
          await armAutoLock();
          await pruneAudit(db, (await readSettings(db)).auditRetentionDays);
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
        pageRequest: async (input, sender) => {
          try {
            return { id: input.id, result: await provider.request(sender.origin, input.method, input.params) };
          } catch (err) {
            return { id: input.id, error: toRpcError(err) };
          }
        },
      }),
      { extensionId: browser.runtime.id, extensionOrigin },
    );
  })();

  void ready.then(() => lifetime.start(), () => undefined);

  const handle = async (message: unknown, sender: BrowserSender) => {
    await ready;
    await vault.restoreSession();
    const reply = await route(message, sender);
    // A person's action from an extension page (not a scheduled read) re-arms the auto-lock timer.
    const type = (message as { type?: unknown } | null)?.type;
    const activity = typeof type === 'string' && Object.hasOwn(PROCEDURES, type) && PROCEDURES[type as keyof typeof PROCEDURES].activity;
    if (activity && reply.ok && vault.unlocked && sender.url?.startsWith(browser.runtime.getURL('/'))) await armAutoLock();
    return reply;
  };

  browser.runtime.onMessage.addListener((message, sender) => handle(message, sender));
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === AUTOLOCK_ALARM) void ready.then(lock);
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

  // Closing the approval window rejects the request it was showing.
  browser.windows?.onRemoved.addListener((id) => {
    if (id !== approvalWindowId) return;
    approvalWindowId = undefined;
    const head = registry.list()[0];
    if (head) registry.decide(head.id, { approve: false });
    if (registry.size > 0) void showApprovals();
  });

  return { ready, handle, vault: () => vault, db: () => db, service: () => service, grants: () => grants, registry, lock, pageRequest };
}
