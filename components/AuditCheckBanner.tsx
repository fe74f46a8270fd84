/**
 * The audit log's check result: progress while checking, "Unlock to check" when
 * locked, a tamper alert naming the broken entry, or "Chain verified" with the counts — saying whether
 * every entry was checked (a full check passed) or the new ones and the log's ends only — and, when
 * older entries are kept unauthenticated, why. Presentational: takes the background's `AuditCheck`.
 */
import type { AuditCheck } from '../lib/audit';
import { Notice, ProgressBar } from './ui';

/** A Unix-ms time as its UTC date (YYYY-MM-DD). */
export const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A Unix-ms time as its UTC date and minute (YYYY-MM-DD HH:MM UTC). */
const time = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * What a passed check says, claiming no more than the check covered: after a full check, that no entry
 * was removed or changed as of then; after the tab's check alone, the log's ends and the new entries, and
 * that "Check everything" finds an older entry removed or changed.
 */
export function verifiedText(check: Pick<AuditCheck, 'count' | 'checked' | 'since' | 'fullAt'>): string {
  const since = check.since ? `; sealed since ${day(check.since)}` : '';
  return check.fullAt === undefined
    ? `Chain verified: ${check.count.toLocaleString('en')} entries (both ends, ` +
        `and ${check.checked.toLocaleString('en')} new since the last check${since}). ` +
        `“Check everything” also finds an older entry removed or changed.`
    : `Chain verified: ${check.count.toLocaleString('en')} entries, none removed or changed (every entry ` +
        `checked ${time(check.fullAt)}, ${check.checked.toLocaleString('en')} new checked since${since}).`;
}

/** The banner above the audit entries. */
export function CheckBanner({ check }: { check: AuditCheck }) {
  if (check.state === 'checking' && check.progress) {
    const { done, total, full } = check.progress;
    return (
      <ProgressBar
        value={done}
        max={total}
        label={
          `${full ? 'Checking every entry' : 'Checking new entries'}: ` +
          `${done.toLocaleString()} of ${total.toLocaleString()}`
        }
      />
    );
  }
  if (check.state === 'locked') return <Notice>Unlock to check the audit log.</Notice>;
  if (!check.ok) {
    return (
      <p class="error" role="alert" data-testid="audit-broken">
        ⚠ The audit log was tampered with{check.brokenAt === undefined ? '' : ` at entry #${check.brokenAt}`}:{' '}
        {check.reason}.
      </p>
    );
  }
  const seal = check.seals[check.seals.length - 1];
  return (
    <>
      <Notice>{verifiedText(check)}</Notice>
      {check.unauthenticated > 0 && seal ? (
        <p class="warn" role="status">
          {check.unauthenticated.toLocaleString()} older {check.unauthenticated === 1 ? 'entry is' : 'entries are'} kept
          but not authenticated (
          {seal.reason === 'restore'
            ? 'sealed by the vault before a restore from backup'
            : 'recorded before the log was keyed'}
          ).
        </p>
      ) : null}
    </>
  );
}
