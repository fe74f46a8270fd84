/**
 * The signing audit log (keyed and scalable): one entry per signature
 * and per security action — time (Unix ms), origin or "extension", account, kind, what in plain words,
 * binding digest, the gateway's answer, detail. Never a key, secret or signature.
 *
 * **A chain a store writer cannot rebuild.** Each entry's link is HMAC-SHA256 (WebCrypto) under the
 * vault's audit key (`Vault.auditKey()`: HKDF-SHA256 from the master key, so it exists only while the
 * vault is unlocked) over every field a person reads, the entry's id and the previous link. Beside the
 * log a checkpoint — count, oldest id, anchor, newest id, head, when the seal started and why — is
 * MAC'd with the same key and written in the same IndexedDB transaction as each append and each
 * prune (`meta` › `auditCheckpoint`, next to the vault's record index). So, while unlocked, a check
 * detects: an edited entry (re-chained or not: the MACs need the key); an inserted or forged entry;
 * re-attribution (origin, account, kind, summary … are all MAC'd); the oldest entries dropped and the
 * anchor moved (the anchor is in the MAC'd checkpoint); the newest entries truncated (the head and
 * count are); an entry moved to another id (the id is MAC'd).
 *
 * **What stays undetectable, and why.**
 * - A rollback of the whole profile (or of the log *and* its checkpoint together) to an older copy:
 *   an older pair is still a valid pair under the same key. Likewise the whole log and its checkpoint
 *   deleted together look like a new, empty log (the Audit tab shows when the seal started).
 * - Anything done while the vault is locked cannot be checked until the next unlock (no key); it is
 *   checked then.
 * - Entries recorded while locked carry no MAC until the next keyed append chains them in, marked
 *   `auth: 'locked'` — the Audit tab shows them as "recorded while locked, not authenticated": a store
 *   writer could have added or changed such an entry before it was chained in (never one recorded
 *   with the key). Callers record while unlocked (signing needs the vault); the panic entry is
 *   recorded before the lock.
 * - When the checkpoint is missing or does not verify (tampering, or a vault restored from a backup of
 *   another master key), the next keyed operation starts a new seal: entries kept from before it are
 *   shown as not authenticated, and the event is recorded (a keyed `audit.seal` entry and the
 *   checkpoint's `seals`); after tampering the log reports "broken" while such entries are kept.
 *   A store writer who also removes every trace of the keyed log can make it look like a log from
 *   before the keyed version: its entries are then shown as not authenticated, never as sealed.
 * - A person with the unlocked browser is not an attacker here: the key works for them.
 *
 * **When each is detected.** The check a tab open runs sees the ends (oldest dropped, newest
 * truncated) and anything wrong among the entries added since the last check; an entry deleted,
 * changed or reordered among entries already verified is seen by the full check ("Check everything"),
 * and a changed or reordered one also on any page that shows it (`verify.ts` states it case by case).
 *
 * **Scale.** Appends are O(1) (one transaction, two MACs). Reads page in one request each where the
 * browser offers `getAllRecords`, else with cursors (`read.ts`); the tab's check costs what is new, never
 * a whole-store count (`verify.ts`); the full check runs in the background with progress and counts only in
 * bounded key ranges; retention walks a cursor (`prune.ts`). Memory is bounded at any size; nothing loads the whole
 * log. The Audit tab shows the first page before it asks for the check.
 */
export {
  appendAudit,
  auditLog,
  auditWritten,
  resealAfterRestore,
  ConflictError,
  InvalidEntryError,
  type AuditInput,
  type AuditKeySource,
  type AuditLog,
} from './log';
export { auditProgress, checkAudit, INLINE_LIMIT, type AuditCheck, type AuditProgress } from './verify';
export {
  auditCsv,
  auditOrigins,
  exportAudit,
  pageAudit,
  MAX_EXPORT_PAGE,
  MAX_PAGE,
  type AuditEntryStatus,
  type AuditEntryView,
  type AuditPage,
} from './read';
export { pruneAudit } from './prune';
