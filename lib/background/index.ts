/**
 * The background service worker: `startBackground` registers every listener synchronously (MV3 may
 * start the worker for an event) and builds the services once the vault database is open
 * (`compose.ts`); each listener awaits them. The parts, by concern:
 * - `compose.ts`: the services, in order (vault, signing, grants, dead-man, locks, provider, router);
 * - `ports.ts`: the page ↔ background ports (the 64 KiB check, events to sites) — the only page route;
 * - `approval-window.ts`: one approval window at a time, its binding to the pending request, the badge;
 * - `lock.ts`: lock, auto-lock, the trading session and its tick;
 * - `deadman-wiring.ts`: the kill switches of the live grants;
 * - `lifetime.ts`: start hooks and keeping the worker awake while the dead-man is armed;
 * - `start-marks.ts`: the cold start's marks in the worker's performance timeline (the bench reads them).
 * A worker the browser started for a message answers it before its start-up work (start hooks, the audit
 * journal's recovery) runs; nothing gated is answered before the vault's session is restored.
 */
import { ApprovalRegistry } from '../approvals/registry';
import type { BrowserSender } from '../messaging/router';
import type { Reply } from '../messaging/protocol';
import type { VenueReads } from '../reads/venue-reads';
import type { SigningService } from '../signer/service';
import type { GrantService } from '../grants/service';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { PerpsSessionTransport } from '../perps/transport';
import { Lifetime } from './lifetime';
import { ApprovalWindow, Badge } from './approval-window';
import { PagePorts } from './ports';
import { compose, type BackgroundOptions, type Services } from './compose';
import { startMark } from './start-marks';
import { startWorkGate } from './start-work';

export type { BackgroundBrowser, BrowserPort } from './browser';
export type { BackgroundOptions } from './compose';
export { AUTOLOCK_ALARM, GRANTS_ALARM } from './lock';

/**
 * The running background (tests drive it; the extension keeps nothing of it). The service accessors
 * throw before `ready` resolves.
 */
export type Background = {
  /** Resolves once every service is built (rejects when the vault database cannot open). */
  ready: Promise<void>;
  /** Answers one runtime message as `runtime.onMessage` does. */
  handle: (message: unknown, sender: BrowserSender) => Promise<Reply>;
  vault: () => Vault;
  db: () => VaultDb;
  service: () => SigningService;
  /** The venue reads (books, portfolio, open orders). */
  reads: () => VenueReads;
  grants: () => GrantService;
  /**
   * The perps session of `account` at `perpsUrl` when the background holds one (`BackgroundStreams.session`; the
   * bench's submit stage).
   */
  session: (account: string, perpsUrl: string) => PerpsSessionTransport | undefined;
  /** Pending approvals. */
  registry: ApprovalRegistry;
  /** Locks the vault and runs everything that follows a lock. */
  lock: () => Promise<void>;
};

/** Wires the background. Call once from `defineBackground`'s `main` (synchronously). */
export function startBackground(o: BackgroundOptions): Background {
  const { browser } = o;
  startMark('main');
  // The background's lifetime: its alarm listener is registered here, synchronously.
  const lifetime = new Lifetime({ browser });
  const badge = new Badge(browser.action);
  const registry = new ApprovalRegistry({ onChange: (pending) => badge.setPending(pending.length) });
  const approvalWindow = new ApprovalWindow(browser, registry);
  const ports = new PagePorts(browser);
  const services = compose(o, { lifetime, registry, badge, approvalWindow, ports });
  let built: Services | undefined;
  const ready = services.then((s) => {
    built = s;
  });
  const get = (): Services => {
    if (!built) throw new Error('The background is not ready yet (await `ready`).');
    return built;
  };
  // Start-up work no answer needs — the lifetime's start hooks (the kill switches re-arm; a granted
  // request arms them itself, `DeadMan.killSwitchArmed`) and the audit journal's recovery — runs once no
  // answer is owed and no message came for a moment (the messages and page requests that woke the worker,
  // and the reads a popup sends right after its first answer, are answered first), at the latest
  // `START_WORK_MAX_DELAY_MS` after the services are built (`./start-work.ts`).
  const gate = startWorkGate(() => {
    built?.startWork();
    void lifetime.start();
  });
  void ready.then(
    () => gate.built(),
    () => undefined,
  );
  const owing = <T>(work: () => Promise<T>): Promise<T> => gate.owing(work);

  const handle = (message: unknown, sender: BrowserSender) =>
    owing(async () => (await services).handle(message, sender));
  const lock = async () => (await services).locks.lock();

  browser.runtime.onMessage.addListener((message, sender) => handle(message, sender));
  ports.listen((origin, method, params) => owing(async () => (await services).servePage(origin, method, params)));
  browser.alarms.onAlarm.addListener((alarm) => void services.then((s) => s.locks.alarm(alarm.name)));
  browser.runtime.onStartup.addListener(() => void services.then((s) => s.locks.lock()));
  // First install: open the onboarding in a tab (a person sees where to start; the popup is small).
  browser.runtime.onInstalled?.addListener(({ reason }) => {
    if (reason === 'install') void browser.tabs?.create({ url: browser.runtime.getURL('/popup.html#welcome') });
  });
  // The panic shortcut opens the popup on the panic confirmation (one click away, never automatic).
  browser.commands?.onCommand.addListener((command) => {
    if (command === 'panic')
      void browser.windows?.create({
        url: browser.runtime.getURL('/popup.html#panic'),
        type: 'popup',
        width: 400,
        height: 600,
        focused: true,
      });
  });
  startMark('listening');

  return {
    ready,
    handle,
    vault: () => get().vault,
    db: () => get().db,
    service: () => get().service,
    reads: () => get().reads,
    grants: () => get().grants,
    session: (a, u) => get().streams.session(a, u),
    registry,
    lock,
  };
}
