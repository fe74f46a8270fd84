/**
 * What a stopped worker or a killed browser left, recorded off the first answers' path once the vault is
 * unlocked (the venues' reads need the account's keys): the submissions the audit journal holds without
 * their answer, asked of the venue (`lib/audit/reconcile.ts` over `./venue-lookup.ts`); and, when the
 * browser discarded the database and the vault came back from its copy, the venues' orders of the last
 * 24 h (`lib/audit/lost-storage.ts`). Both tell the person (`./notifications.ts`).
 */
import { auditLog } from '../audit';
import type { AuditJournal } from '../audit/journal';
import { reconcileJournal, type ReconcileNotice } from '../audit/reconcile';
import { recordFoundOrders } from '../audit/lost-storage';
import type { VenueReads } from '../reads/venue-reads';
import type { SigningService } from '../signer/service';
import type { VaultDb } from '../vault/db';
import type { Vault } from '../vault/vault';
import type { BackgroundNotifications } from './notifications';
import { orderFinders, venueLookup } from './venue-lookup';

/** What the recovery needs (every service is built before it; see `compose.ts`). */
type AuditRecoveryDeps = {
  db: VaultDb;
  vault: Vault;
  reads: VenueReads;
  service: Pick<SigningService, 'clobRead'>;
  journal: AuditJournal;
  notifications: Pick<BackgroundNotifications, 'unrecorded' | 'storageLost'>;
  now: () => number;
};

/**
 * `reconcile()` asks the venue about the journal's leftovers and records them (only while the vault is unlocked, one
 * pass at a time: a call meanwhile does nothing); `sweepLost()` records the venues' orders found after a lost
 * database. Both return at once and never throw (a failure is dropped).
 */
export function createAuditRecovery(d: AuditRecoveryDeps): { reconcile: () => void; sweepLost: () => void } {
  const { db, vault, reads, service, journal, notifications, now } = d;
  let reconciling: Promise<unknown> | undefined;
  const reconcile = (): void => {
    if (!vault.unlocked || reconciling) return;
    const notify = ({ kind, venue, recorded }: ReconcileNotice) =>
      notifications.unrecorded(kind.slice(kind.indexOf('.') + 1), { stopped: true, venue, recorded });
    reconciling = reconcileJournal(
      journal,
      auditLog(db, () => vault.auditKey(), { now }),
      venueLookup(reads, (a, p) => service.clobRead(a, p)),
      notify,
    )
      .catch(() => undefined)
      .finally(() => (reconciling = undefined));
  };
  // The browser discarded the database and the vault came back from its copy: the venues' orders of the
  // last 24 h are recorded (`lib/audit/lost-storage.ts`), off the unlock's answer.
  const sweepLost = (): void =>
    void (async () => {
      const owners = (await vault.listOwners()).map((x) => x.address.toLowerCase());
      const finders = orderFinders(reads, (a) => vault.storedKeys(a));
      notifications.storageLost(
        await recordFoundOrders(
          auditLog(db, () => vault.auditKey(), { now }),
          owners,
          finders,
          now(),
        ),
      );
    })().catch(() => undefined);
  return { reconcile, sweepLost };
}
