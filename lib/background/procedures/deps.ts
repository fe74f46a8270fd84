/**
 * What the procedure handlers need (one typed object, built once by the background's composition):
 * the vault, its database, the signing service, the venue reads, the approval registry, the grants, the dead-man state,
 * and the hooks that tell the rest of the background what a procedure did.
 */
import type { ApprovalRegistry } from '../../approvals/registry';
import { auditLog, type AuditLog } from '../../audit';
import type { GrantService } from '../../grants/service';
import type { SigningService } from '../../signer/service';
import type { VenueReads } from '../../reads/venue-reads';
import type { ReadAhead } from '../read-ahead';
import type { VaultDb } from '../../vault/db';
import type { Vault } from '../../vault/vault';
import type { DeadManStatus } from '../deadman';
import type { PanicTiming } from '../panic';
import type { ProcedureName } from '../../messaging/protocol';
import type { Handlers } from '../../messaging/router';

/** Dependencies of `createProcedures` (field names are the composition's; optional hooks may be absent in tests). */
export type ProcedureDeps = {
  vault: Vault;
  db: VaultDb;
  service: SigningService;
  /** The venue reads (books, portfolio, open orders): the popup's reads go here, never through the signer. */
  reads: VenueReads;
  /**
   * The reads started ahead of a popup on a cold worker (`../read-ahead.ts`): the popup's matching `perps.read` takes
   * one instead of sending it again.
   */
  readAhead?: Pick<ReadAhead, 'take'>;
  /**
   * Called after the vault becomes unlocked (arm auto-lock, announce to pages); `fromSession`: it was a trading
   * session.
   */
  onUnlocked: (o: { fromSession: boolean }) => Promise<void>;
  /**
   * Locks: every grant revoked at the call (before the vault's lock waits its turn behind queued writes),
   * the vault locked, then what follows a lock (reject pending approvals, tell pages) — `Locks.lock`.
   */
  lock: () => Promise<void>;
  /**
   * Called after settings were stored (`venue`: a venue field changed; its authority already ended before
   * the write, and ends again here for what started while the write was under way).
   */
  onSettings: (change?: { venue: boolean }) => Promise<void>;
  /** Called after the chain id setting changed (the new id): pages get EIP-1193 `chainChanged` (hex). */
  onChainChanged?: (chainId: number) => void;
  /** Called after the person switched the active account (reject pending, tell sites). */
  onAccountChanged: (active: string) => Promise<void>;
  /** Pending approvals. */
  registry: ApprovalRegistry;
  /** Standing grants. */
  grants: GrantService;
  /** The dead-man timer's state. */
  deadman: () => DeadManStatus;
  /** Opens (or focuses) the approval window on the pending requests (the deposit-wallet batches ask there). */
  showApprovals?: () => Promise<void>;
  /** The approval window displays request `id` at `digest` (closing the window rejects only that one). */
  onApprovalShown?: (id: string, digest: string) => void;
  /**
   * The approval window's queue is empty: close it (background-side, so a request arriving now gets a fresh window).
   */
  onApprovalEmpty?: () => Promise<boolean>;
  /** Stops the dead-man's renewals without disarming the venues' kill switches (panic; `DeadMan.halt`). */
  haltKillSwitches?: () => void;
  /** Panic's time limits (tests lower them; default `PANIC_TIMING`). */
  panicTiming?: Partial<PanicTiming>;
  /**
   * Whether the browser granted the host permissions `origins` (match patterns, `https://host/*`):
   * `permissions.contains`. A precondition `settings.set` checks before it stores a venue (not the guard:
   * the transport rule is). Absent only in test backgrounds built without a permissions API.
   */
  hostsGranted?: (origins: string[]) => Promise<boolean>;
};

/** The audit log of the deps' vault database, keyed by the vault's audit key. */
export function auditOf(d: Pick<ProcedureDeps, 'db' | 'vault'>): AuditLog {
  return auditLog(d.db, () => d.vault.auditKey());
}

/** The handlers of one contract module's procedures (e.g. `ContractHandlers<typeof VAULT_CONTRACT>`). */
export type ContractHandlers<C> = Pick<Handlers, keyof C & ProcedureName>;
