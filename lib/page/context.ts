/**
 * What every stage and method family of the page path works with: the background's services
 * (`ProviderDeps`, wired in `lib/background/compose.ts`) and one request as it leaves the session gates
 * (`PageRequest`: its origin, its authority ticket and the session it was admitted in).
 */
import type { ApprovalRegistry } from '../approvals/registry';
import type { AuthorityTicket } from '../authority/epoch';
import { unauthorized } from '../errors/rpc';
import type { RefPrice } from '../grants/evaluate';
import type { GrantService } from '../grants/service';
import type { SigningService } from '../signer/service';
import type { Connection, VaultDb } from '../vault/db';
import type { OwnerInfo, Vault } from '../vault/vault';
import type { OutcomeStore } from './outcomes';

/**
 * What the page path (`ProviderService`) works with: the background's services, built before it in
 * `lib/background/compose.ts`.
 */
export type ProviderDeps = {
  /** Standing grants; absent: every signature asks. */
  grants?: GrantService;
  /**
   * Whether `venue`'s kill switch (perps auto-cancel, order-book heartbeat) is armed for `account`;
   * asked before a covered request is signed. `false` or a throw: the request asks instead. Absent:
   * treated as armed (the background wires the dead-man's answer here).
   */
  killSwitchArmed?: (venue: 'perps' | 'clob', account: string) => Promise<boolean>;
  /**
   * Called before `wallet_revokePermissions` revokes the origin's grants: the dead-man then ends their
   * switches by letting them fire (`DeadMan.lapse`), never by unsetting them — a site must not be able to
   * switch the auto-cancel off under its own open orders by disconnecting.
   */
  beforeSiteRevoke?: (origin: string) => Promise<void>;
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  registry: ApprovalRegistry;
  /** Shows the approval window (one at a time). */
  showApprovals: () => Promise<void>;
  /**
   * The public streams of the markets live grants cover (`lib/background/grant-books.ts`): a covered
   * order's reference price when the stream may judge it; absent: always the REST reads.
   */
  grantBooks?: {
    ref: (tokenId: string) => Promise<RefPrice | undefined>;
    perpsRef: (iid: number, label: string) => Promise<RefPrice | undefined>;
  };
  /**
   * Where unknown outcomes of keyed submissions are kept across worker restarts (`lib/page/outcomes.ts`); absent: in
   * memory only.
   */
  outcomes?: OutcomeStore;
  /** Sends an event to every page of `origin` (or of every origin when `origin` is undefined). */
  emit: (origin: string | undefined, event: 'accountsChanged' | 'connect' | 'disconnect', data: unknown) => void;
};

/**
 * The session a request was admitted in (`gates.ts`): the origin's connection, the active account, and
 * `granted` — the active account when it is the one the connection was granted (a site acts only then).
 */
export type Session = { conn: Connection | undefined; active: OwnerInfo | undefined; granted: OwnerInfo | undefined };

/** One request past the session gates: the sender's origin, the authority it captured at its start, its session. */
export type PageRequest = { origin: string; ticket: AuthorityTicket; session: Session };

/** The account a connected method acts for (`Session.granted`); 4100 when there is none (deny by default). */
export function connectedAccount(req: PageRequest): OwnerInfo {
  if (!req.session.granted) throw unauthorized();
  return req.session.granted;
}

/** The 4900 message of a request that needs an unlocked vault. */
export const LOCKED_MESSAGE = 'Countersign is locked. Open the extension and unlock it.';
