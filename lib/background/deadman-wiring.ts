/**
 * The dead-man's wiring in the background: the kill switches of the live
 * grants, renewed while the keys the grants use are available (unlocked, or a trading session), written
 * to the audit log as `dead-man`, journalled in `storage.session` (kept across worker restarts, gone
 * with the browser), re-armed on every background start (`Lifetime.onStart`), and the two questions the
 * provider asks it before a grant covers a request and before a site's own disconnect.
 */
import { appendAudit, auditLog } from '../audit';
import { KILL_SWITCH_SCOPES } from '../authority/epoch';
import type { GrantService } from '../grants/service';
import type { ProviderDeps } from '../page/context';
import type { SigningService } from '../signer/service';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { BackgroundBrowser } from './browser';
import { DeadMan, targetsOf } from './deadman';
import type { DeadManJournalRecord } from './deadman-audit';
import type { Lifetime } from './lifetime';

/** `storage.session` key of the dead-man's journal. */
const DEADMAN_JOURNAL_KEY = 'deadman.journal';

/** What the dead-man is built from (every service is built before it; see `compose.ts`). */
export type DeadManWiring = {
  browser: BackgroundBrowser;
  db: VaultDb;
  vault: Vault;
  service: SigningService;
  grants: GrantService;
  lifetime: Lifetime;
  now: () => number;
};

/**
 * Builds the background's dead-man and registers its start hook: on every start (after the session
 * restore) the kill switches of the live grants are re-armed, before any granted request is signed.
 */
export function createDeadMan(w: DeadManWiring): DeadMan {
  const { browser, db, vault, grants, lifetime, now } = w;
  const deadman = new DeadMan({
    service: w.service,
    // A renewal holds the authority of its start: lock, panic and a venue change end it (`lib/authority/epoch.ts`).
    ticket: () => w.service.authority.capture(KILL_SWITCH_SCOPES),
    vault,
    targets: async () => targetsOf(await grants.list()),
    lifetime,
    // The session state keeps the grants' proxy keys and API credentials: renewals go on in it.
    usable: () => vault.state !== 'locked',
    audit: (e) =>
      appendAudit(
        auditLog(db, () => vault.auditKey()),
        { at: now(), origin: 'dead-man', ...e },
      ).then(() => undefined),
    journal: {
      load: async () => (await browser.storage.session.get(DEADMAN_JOURNAL_KEY))[DEADMAN_JOURNAL_KEY],
      save: (records: DeadManJournalRecord[]) => browser.storage.session.set({ [DEADMAN_JOURNAL_KEY]: records }),
    },
    now,
  });
  lifetime.onStart(() => deadman.start());
  return deadman;
}

/**
 * The provider's questions to the dead-man: whether a venue's kill switch is armed for an account (a
 * covered request is signed only then), and, before `wallet_revokePermissions` revokes a site's grants,
 * ending their switches by letting them fire (`DeadMan.lapse`) — never by unsetting them.
 */
export function deadmanProviderHooks(
  deadman: DeadMan,
  grants: GrantService,
): Required<Pick<ProviderDeps, 'killSwitchArmed' | 'beforeSiteRevoke'>> {
  return {
    killSwitchArmed: (venue, account) => deadman.killSwitchArmed(venue, account),
    beforeSiteRevoke: async (origin) =>
      deadman.lapse(targetsOf((await grants.list()).filter((g) => g.origin === origin))),
  };
}
