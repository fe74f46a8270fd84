/**
 * The background's services, built once, in order: vault database → the page path's keyed records and
 * the audit journal (IndexedDB, read before anything writes them: a start must know what a stopped worker
 * or a killed browser left in flight) → vault (session restored) → authority epoch, weight meter and venue reads
 * (`lib/reads/venue-reads.ts`) → signing service (`lib/signer/`) → grants → dead-man → locks → the page path
 * (`ProviderService`, `lib/page/`) and `servePage`, the function the page ports call for each page request
 * (`lib/background/index.ts` hands it to `PagePorts.listen`) → streams and notifications → message router. Nothing is
 * assigned later; every service receives the ones it needs, built before it (the signer reaches the streams' perps
 * session through a function read at send time). The synchronous part — what `startBackground` must create inside
 * `main` because it registers listeners (lifetime, approval registry and window, badge, page ports) — is the `Shell`.
 * What a stopped worker or a killed browser left is recovered by `./audit-recovery.ts`.
 */
import { opfsCopyStore, storageFailure, type VaultCopyStore } from '../vault/copy';
import { BUILD_TRANSPORT_RULE, type TransportRule } from '../settings/transport';
import * as v from 'valibot';
import { numberToHex } from 'viem';
import { createRouter, OUTPUT_CHECKS, type BrowserSender } from '../messaging/router';
import type { Reply } from '../messaging/protocol';
import { START_HINT_KEY, VAULT_EPOCH_KEY } from '../messaging/start-hint';
import type { ApprovalRegistry } from '../approvals/registry';
import { userRejected } from '../errors/rpc';
import { ProviderService } from '../page/request';
import { idbOutcomeStore } from '../page/outcomes';
import { durableAuditJournal, idbJournalStore } from '../audit/journal';
import { GrantService } from '../grants/service';
import { readSettings, type Settings } from '../settings';
import { SigningService } from '../signer/service';
import { VenueReads } from '../reads/venue-reads';
import { WeightMeter } from '../ratelimit/meter';
import type { Budget } from '../ratelimit/sliding-window';
import { DB_NAME, openVaultDb, type VaultDb } from '../vault/db';
import { Vault, type SessionState, type SessionStore } from '../vault/vault';
import { VaultLockedError } from '../vault/errors';
import { toWireError } from '../errors/base';
import type { KdfBounds, KdfParams } from '../vault/crypto';
import type { BackgroundBrowser } from './browser';
import type { PanicTiming } from './panic';
import type { DeadMan } from './deadman';
import type { Lifetime } from './lifetime';
import { createProcedures } from './procedures';
import type { ProcedureDeps } from './procedures/deps';
import { createDeadMan, deadmanProviderHooks } from './deadman-wiring';
import { Locks, procedureOf } from './lock';
import type { PagePorts, ServePage } from './ports';
import type { ApprovalWindow, Badge } from './approval-window';
import { createBackgroundStreams, type BackgroundStreams } from './streams';
import type { WebSocketConstructor } from '../streams/perps';
import { createBackgroundNotifications } from './notifications';
import { Authority } from '../authority/epoch';
import { startMark } from './start-marks';
import { createGrantBooks, type GrantBooks } from './grant-books';
import { createAuditRecovery } from './audit-recovery';
import { ReadAhead } from './read-ahead';

/** Options of `startBackground` (the extension passes only `browser`; tests lower the KDF and timings). */
export type BackgroundOptions = {
  browser: BackgroundBrowser;
  /** IndexedDB name of the vault (default `DB_NAME`; each test uses its own). */
  dbName?: string;
  /** KDF parameters (tests lower them; the extension uses the defaults). */
  kdf?: KdfParams;
  bounds?: KdfBounds;
  /** `fetch` for the gateways (tests route it to the in-process sandbox). */
  fetchFn?: typeof fetch;
  /** Clock in ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Extra work after lock (the bridge rejects pending approvals and tells pages). */
  onLocked?: () => Promise<void>;
  /** Panic's time limits (tests lower them; default `PANIC_TIMING` in ./panic). */
  panicTiming?: Partial<PanicTiming>;
  /** The WebSocket of the live streams (default the worker's; Node tests pass `ws`). */
  WebSocket?: WebSocketConstructor;
  /**
   * Where the vault's second copy lives (default a file of the origin private file system, `copyStoreOf`; tests pass
   * one in memory).
   */
  vaultCopy?: VaultCopyStore;
  /**
   * Which transports may carry a signature or a secret (`lib/settings/transport.ts`; default this build's:
   * loopback in clear only in development and test builds). Tests pass a release's rule.
   */
  transportRule?: TransportRule;
  /**
   * The client-side weight budgets per gateway (default `CLIENT_WEIGHT_BUDGETS`, the venue's). Only the
   * bench build lifts them: it measures latency against a sandbox whose own budgets are lifted too.
   */
  weightBudgets?: { request: Budget; action: Budget };
};

/** What `startBackground` builds synchronously (each registers its listeners in `main`). */
export type Shell = {
  lifetime: Lifetime;
  registry: ApprovalRegistry;
  badge: Badge;
  approvalWindow: ApprovalWindow;
  ports: PagePorts;
};

/** The built background: every service, the runtime-message handler and the page-request server. */
export type Services = {
  db: VaultDb;
  vault: Vault;
  service: SigningService;
  /** The venue reads (books, portfolio, open orders), on the signer's weight meter. */
  reads: VenueReads;
  grants: GrantService;
  deadman: DeadMan;
  locks: Locks;
  /** Answers one runtime message from an extension page (the message contract's reply). */
  handle: (message: unknown, sender: BrowserSender) => Promise<Reply>;
  /** Serves one page request from `origin` (the port's `ServePage`). */
  servePage: ServePage;
  /** The live streams. */
  streams: BackgroundStreams;
  /**
   * Start-up work no answer waits for (the audit journal's recovery: what a stopped worker sent without
   * recording its answer). Call once per start; `startBackground` calls it once no answer is owed.
   */
  startWork: () => void;
};

/**
 * The vault's copy store (`lib/vault/copy.ts`): `o.vaultCopy` when given (tests), else the file
 * `vault-copy.json` of the extension's origin private file system — `vault-copy-<name>.json` for a vault
 * database of another name than `DB_NAME`: a copy belongs to its vault. `{}` (no copy kept) where the
 * browser has no such file system.
 */
function copyStoreOf(o: Pick<BackgroundOptions, 'vaultCopy' | 'dbName'>): { copy?: VaultCopyStore } {
  if (o.vaultCopy) return { copy: o.vaultCopy };
  const store = opfsCopyStore(
    o.dbName === undefined || o.dbName === DB_NAME ? 'vault-copy.json' : `vault-copy-${o.dbName}.json`,
  );
  return store ? { copy: store } : {};
}

/** `storage.session` key of the vault's session state (the exported master key or the session key). */
const SESSION_KEY = 'vault.session';

const sessionStateSchema = v.union([
  v.object({ mk: v.string(), salt: v.string() }),
  v.object({ sk: v.string(), salt: v.string(), bundle: v.string() }),
]);

/** The vault's session store on `storage.session` (a stored value of another shape reads as none). */
function sessionStore(browser: BackgroundBrowser): SessionStore {
  return {
    get: async (): Promise<SessionState | undefined> => {
      const s = (await browser.storage.session.get(SESSION_KEY))[SESSION_KEY];
      return v.is(sessionStateSchema, s) ? s : undefined;
    },
    // Every session change renews the epoch and drops the popup's start hint (lib/messaging/start-hint.ts), before the
    // keys go.
    set: async (s) => {
      await browser.storage.session.set({ [VAULT_EPOCH_KEY]: crypto.randomUUID(), [SESSION_KEY]: s });
      await browser.storage.session.remove(START_HINT_KEY);
    },
    clear: async () => {
      await browser.storage.session.set({ [VAULT_EPOCH_KEY]: crypto.randomUUID() });
      await browser.storage.session.remove(START_HINT_KEY);
      await browser.storage.session.remove(SESSION_KEY);
    },
  };
}

/**
 * One settings read shared until `forget()`: it serves the signer until `settings.set` writes (their only writer, which
 * calls `onSettings` right after, and that forgets it): it reads them up to three times per order (page path). A
 * failed read is not kept.
 */
function sharedSettings(db: VaultDb): { read: () => Promise<Settings>; forget: () => void } {
  let settingsRead: Promise<Settings> | undefined;
  const read = () =>
    (settingsRead ??= readSettings(db).catch((err: unknown) => {
      settingsRead = undefined;
      throw err;
    }));
  return { read, forget: () => (settingsRead = undefined) };
}

/**
 * The runtime-message handler over the router `route`: the vault's session restored first, a procedure a trading
 * session may not call answered `VaultLocked` (`inSession`), the person's activity noted after a reply that succeeded.
 */
function messageHandler(
  vault: Vault,
  locks: Locks,
  route: (message: unknown, sender: BrowserSender) => Promise<Reply>,
): Services['handle'] {
  return async (message: unknown, sender: BrowserSender): Promise<Reply> => {
    await vault.restoreSession();
    const procedure = procedureOf(message);
    if (locks.refusedInSession(procedure))
      return { ok: false, error: toWireError(new VaultLockedError({ inSession: true })) };
    const reply = await route(message, sender);
    if (reply.ok) await locks.activity(procedure, sender);
    startMark(`first.${procedure ?? 'message'}`);
    return reply;
  };
}

/** What the person's changes reach in the background (see `personChangeHooks`). */
type PersonChangeDeps = {
  db: VaultDb;
  vault: Vault;
  registry: ApprovalRegistry;
  authority: Authority;
  locks: Locks;
  ports: PagePorts;
  streams: BackgroundStreams;
  grantBooks: GrantBooks;
  /** The audit journal's recovery and the lost-storage sweep (`./audit-recovery.ts`). */
  reconcile: () => void;
  sweepLost: () => void;
  /** Drops the settings read the signer shares, so the next use reads the stored ones. */
  forgetSettings: () => void;
};

/**
 * What follows the person's changes the procedures report (`ProcedureDeps`): an unlock (the locks, the lost-storage
 * sweep, the journal's recovery), stored settings (a venue's authority ends, the settings are read again, the grants'
 * streams follow new URLs), the chain id (`chainChanged` to pages), the active account (pending requests rejected, the
 * authority of pages and of the person ended, the streams follow, each connected site told `accountsChanged`).
 */
function personChangeHooks(
  d: PersonChangeDeps,
): Pick<ProcedureDeps, 'onUnlocked' | 'onSettings' | 'onChainChanged' | 'onAccountChanged'> {
  const { db, vault, registry, authority, locks, ports, streams, grantBooks, reconcile, sweepLost } = d;
  return {
    onUnlocked: async (how) => {
      await locks.unlocked(how);
      if (vault.takeStorageLost()) sweepLost();
      reconcile();
    },
    onSettings: async (change) => {
      // Ended before the write too (`settings.set`); a request started during the write read the old settings.
      if (change?.venue) authority.end('all', 'venue');
      d.forgetSettings();
      await locks.settingsChanged();
      void grantBooks.reconcile(); // new stream URLs
    },
    onChainChanged: (chainId) => ports.emit(undefined, 'chainChanged', numberToHex(chainId)),
    onAccountChanged: async (active) => {
      registry.rejectAll(() => userRejected('You switched accounts in Countersign; the request was cancelled.'));
      // Page requests act for the active account, and the person's own actions were started for the old one.
      authority.end('pages', 'account');
      authority.end('person', 'account');
      void streams.reconcile(); // the old account's stream closes now
      for (const c of await db.getAll('connections')) {
        ports.emit(
          c.origin,
          'accountsChanged',
          c.accounts[0]?.toLowerCase() === active.toLowerCase() && vault.unlocked ? c.accounts : [],
        );
      }
    },
  };
}

/**
 * Builds every service in order (see the module docstring). Content scripts are first denied the
 * session store (it holds the exported master key). Resolves once the router is ready.
 */
export async function compose(o: BackgroundOptions, shell: Shell): Promise<Services> {
  const { browser } = o;
  const { registry, ports, badge, approvalWindow, lifetime } = shell;
  const now = o.now ?? Date.now;
  // The database opens in the browser's process while the session store is restricted (the open does not touch it).
  const opening = openVaultDb(o.dbName);
  opening.catch(() => undefined); // awaited below
  try {
    await browser.storage.session.setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' });
  } catch {
    /* already the default in Chrome; unsupported in the test double */
  }
  const db = await opening;
  startMark('db');
  // Read before anything else writes them: what a stopped worker or a killed browser left in flight — its
  // keyed submissions (`lib/page/outcomes.ts`, read by the provider's first keyed request) and the
  // submissions it sent without recording their answer (`lib/audit/journal.ts`, read now).
  const outcomes = idbOutcomeStore(db);
  const journal = durableAuditJournal(idbJournalStore(db), now);
  const vault = new Vault({ db, session: sessionStore(browser), now, kdf: o.kdf, bounds: o.bounds, ...copyStoreOf(o) });
  await vault.restoreSession();
  startMark('session');
  const { read: settings, forget: forgetSettings } = sharedSettings(db);
  // Perps commands go over the account's live session when there is one; `streams` is built below and only read at send
  // time. The one authority epoch every signing path checks (`lib/authority/epoch.ts`).
  const authority = new Authority();
  // One weight meter per gateway, shared by the reads and the signed commands; the account's own order-book reads are
  // L2-signed, so they go through the signer.
  const meter = new WeightMeter(now, o.weightBudgets);
  const transportRule = o.transportRule ?? BUILD_TRANSPORT_RULE;
  const reads: VenueReads = new VenueReads({
    vault,
    settings,
    meter,
    clobRead: (account, path): Promise<unknown> => service.clobRead(account, path),
    ...(o.fetchFn ? { fetchFn: o.fetchFn } : {}),
    transportRule,
  });
  const service = new SigningService({
    authority,
    vault,
    db,
    settings,
    fetchFn: o.fetchFn,
    transportRule,
    now,
    journal,
    meter,
    reads,
    session: (account, perpsUrl) => streams.session(account, perpsUrl),
    onUnrecorded: (what) => notifications.unrecorded(what),
  });
  // The grant uses a stopped worker sent under before their vault write was stored: merged at the grants' first read
  // (`GrantLedger`).
  const grants = new GrantService({ authority, vault, now, onChange: (live) => grantsChanged(live), journal });
  const deadman = createDeadMan({ browser, db, vault, service, grants, lifetime, now });
  const locks = new Locks({
    browser,
    vault,
    db,
    service,
    grants,
    deadman,
    registry,
    emit: ports.emit,
    onLocked: o.onLocked,
  });
  // A grant made, used up, expired or revoked: badge, session title, the kill switches and the streams
  // follow (a grant's orders go over the perps session from its first one, not after the next need check).
  function grantsChanged(live: number): void {
    badge.setLiveGrants(live);
    void locks.sessionTick().catch(() => undefined);
    void deadman.sync();
    void streams.reconcile();
    void grantBooks.reconcile();
  }
  // The public streams of the markets live grants cover (order book, perps): a covered order's reference price without
  // a REST read (`lib/streams/reference.ts`).
  const grantBooks = createGrantBooks({
    grants,
    settings,
    now,
    transportRule,
    ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}),
  });
  const provider = new ProviderService({
    vault,
    db,
    service,
    registry,
    grants,
    grantBooks,
    showApprovals: approvalWindow.show,
    emit: ports.emit,
    outcomes,
    ...deadmanProviderHooks(deadman, grants),
  });
  const servePage: ServePage = async (origin, method, params) => {
    startMark('page.request');
    await vault.restoreSession();
    const answer = await provider.request(origin, method, params);
    startMark(`first.page.${method}`);
    return answer;
  };
  // The live streams (proxy secrets stay here; pages get derived pushes only).
  const streams = createBackgroundStreams({
    vault,
    db,
    reads,
    grants,
    lifetime,
    settings: () => readSettings(db),
    broadcast: (m) => void browser.runtime.sendMessage?.(m).catch(() => undefined),
    now,
    transportRule,
    ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}),
  });
  // raised from the stream pushes
  const notifications = createBackgroundNotifications({ browser, db, vault, grants, service, reads, now });
  streams.onPush(notifications.onPush);
  // What a stopped worker or a killed browser left in the audit journal (asked of the venue and recorded once the
  // vault is unlocked, at start or at the next unlock) or lost with the database: off the first answers' path.
  const { reconcile, sweepLost } = createAuditRecovery({ db, vault, reads, service, journal, notifications, now });
  // The vault's second copy follows a vault newer than it (a write whose copy failed), off the first answers' path.
  const startWork = () => {
    void vault.refreshCopy().catch(() => undefined);
    void grantBooks.reconcile();
    reconcile();
  };
  const readAhead = new ReadAhead(
    (r) => reads.perpsRead(r.account, r.name, r.query, { draw: 'person' }),
    service.authority,
    now,
  );
  const route = createRouter(
    {
      ...notifications.procedures,
      ...createProcedures({
        vault,
        db,
        readAhead,
        service,
        reads,
        registry,
        grants,
        deadman: () => deadman.state,
        panicTiming: o.panicTiming,
        haltKillSwitches: () => void deadman.halt(),
        onApprovalEmpty: () => approvalWindow.empty(),
        showApprovals: () => approvalWindow.show(),
        onApprovalShown: (id, digest) => approvalWindow.shown(id, digest),
        ...(browser.permissions
          ? {
              hostsGranted: (origins: string[]) => browser.permissions?.contains({ origins }) ?? Promise.resolve(false),
            }
          : {}),
        lock: locks.lock,
        ...personChangeHooks({
          db,
          vault,
          registry,
          authority,
          locks,
          ports,
          streams,
          grantBooks,
          reconcile,
          sweepLost,
          forgetSettings,
        }),
      }),
      'streams.status': () => streams.status(),
      // What the popup reads next when the answer lacks it (a cold worker, another instrument) starts at the answer.
      'streams.watch': (w) => readAhead.watch(w, () => streams.watch(w)),
    },
    { extensionId: browser.runtime.id, extensionOrigin: browser.runtime.getURL('/') },
    { checkOutputs: OUTPUT_CHECKS, mapError: storageFailure },
  );
  const handle = messageHandler(vault, locks, route);
  startMark('ready');
  return { db, vault, service, reads, grants, deadman, locks, handle, servePage, streams, startWork };
}
