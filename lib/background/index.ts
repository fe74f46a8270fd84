/**
 * The background service worker's composition: opens the vault database, builds the vault, the
 * signing service and the message router, and wires auto-lock (alarms), lock-on-browser-start and the
 * session store. Listeners are registered synchronously (MV3 may start the worker for an event) and
 * each awaits `ready`.
 *
 * Auto-lock: every request from an extension page re-arms a one-shot `autolock` alarm N minutes ahead
 * (N from settings, default 15); when it fires the vault locks. A browser restart locks too
 * (`runtime.onStartup`, and `storage.session` is emptied by the browser anyway).
 */
import { createRouter, type BrowserSender } from '../messaging/router';
import { readSettings } from '../settings';
import { SigningService } from '../signer/service';
import { openVaultDb, type VaultDb } from '../vault/db';
import { Vault, type SessionState, type SessionStore } from '../vault/vault';
import { createProcedures, type ProcedureDeps } from './procedures';
import { BaseError } from '../errors/base';
import type { KdfBounds, KdfParams } from '../vault/crypto';

/** The parts of the WebExtension API the background uses (webextension-polyfill or WXT's fake browser). */
export type BackgroundBrowser = {
  runtime: {
    id: string;
    getURL: (path: string) => string;
    onMessage: { addListener: (fn: (message: unknown, sender: BrowserSender) => Promise<unknown> | undefined) => void };
    onStartup: { addListener: (fn: () => void) => void };
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
    create: (name: string, info: { delayInMinutes: number }) => unknown;
    clear: (name: string) => Promise<unknown>;
    onAlarm: { addListener: (fn: (alarm: { name: string }) => void) => void };
  };
};

export const AUTOLOCK_ALARM = 'autolock';
const SESSION_KEY = 'vault.session';

/** Thrown for page requests until the approval bridge handles them. */
class PageRequestsUnavailableError extends BaseError {
  override name = 'Provider.UnsupportedMethodError';
  readonly code = 4200;
}

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
  pageRequest?: ProcedureDeps['pageRequest'];
  /** Extra work after lock (the bridge rejects pending approvals and tells pages). */
  onLocked?: () => Promise<void>;
};

export type Background = {
  ready: Promise<void>;
  handle: (message: unknown, sender: BrowserSender) => Promise<unknown>;
  vault: () => Vault;
  db: () => VaultDb;
  service: () => SigningService;
  lock: () => Promise<void>;
};

/** Wires the background. Call once from `defineBackground`'s `main` (synchronously). */
export function startBackground(o: BackgroundOptions): Background {
  const { browser } = o;
  let vault!: Vault;
  let db!: VaultDb;
  let service!: SigningService;
  let route!: ReturnType<typeof createRouter>;

  const armAutoLock = async () => {
    const { autoLockMinutes } = await readSettings(db);
    await browser.alarms.clear(AUTOLOCK_ALARM);
    await browser.alarms.create(AUTOLOCK_ALARM, { delayInMinutes: autoLockMinutes });
  };
  const lock = async () => {
    await vault.lock();
    await browser.alarms.clear(AUTOLOCK_ALARM);
    await o.onLocked?.();
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
    route = createRouter(
      createProcedures({
        vault,
        db,
        service,
        onUnlocked: armAutoLock,
        onLocked: async () => {
          await browser.alarms.clear(AUTOLOCK_ALARM);
          await o.onLocked?.();
        },
        onSettings: async () => {
          if (vault.unlocked) await armAutoLock();
        },
        pageRequest:
          o.pageRequest ??
          (async () => {
            throw new PageRequestsUnavailableError('Page requests are not available yet.');
          }),
      }),
      { extensionId: browser.runtime.id, extensionOrigin: browser.runtime.getURL('/') },
    );
  })();

  const handle = async (message: unknown, sender: BrowserSender) => {
    await ready;
    await vault.restoreSession();
    const reply = await route(message, sender);
    // Activity from an extension page while unlocked re-arms the auto-lock timer.
    if (vault.unlocked && sender.url?.startsWith(browser.runtime.getURL('/'))) await armAutoLock();
    return reply;
  };

  browser.runtime.onMessage.addListener((message, sender) => handle(message, sender));
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === AUTOLOCK_ALARM) void ready.then(lock);
  });
  browser.runtime.onStartup.addListener(() => void ready.then(lock));

  return { ready, handle, vault: () => vault, db: () => db, service: () => service, lock };
}
