/**
 * What the dead-man (./deadman.ts) writes to the audit log — one entry when a period arms (or could not),
 * one when it ends, with its renewal count and the last renewal, never one per renewal — and its journal:
 * the running periods, saved so that the next start closes in the audit log a period the stopped
 * background left open.
 */
import { HEARTBEAT_LAPSE_MS, HEARTBEAT_MS, PERPS_LEAD_MS, PERPS_RENEW_MS, type DeadManVenue } from './deadman-switches';

/** An audit entry the dead-man writes (the caller adds time and origin). */
export type DeadManAuditEntry = {
  account: string;
  kind: 'deadman.arm' | 'deadman.end';
  summary: string;
  result: 'ok' | 'error';
  detail?: string;
};

/** A running period as saved in the journal (to close it in the audit log after an unexpected stop). */
export type DeadManJournalRecord = {
  venue: DeadManVenue;
  account: string;
  since: number;
  renewals: number;
  lastRenewal?: number;
  cancelAt?: number;
};
/**
 * Where the journal lives (the background uses `storage.session`: gone with the browser, kept across worker restarts).
 */
export type DeadManJournal = { load: () => Promise<unknown>; save: (records: DeadManJournalRecord[]) => Promise<void> };

/** A time in the dead-man's audit texts: `t` (Unix ms) as ISO 8601 in UTC, `never` when undefined. */
export const auditTime = (t: number | undefined) => (t === undefined ? 'never' : new Date(t).toISOString());
const venueName = (v: DeadManVenue) => (v === 'perps' ? 'perps' : 'the order book');

/** The summary of a period's first successful renewal (`deadman.arm`, `ok`): what the venue cancels, and when. */
export function armedSummary(p: { venue: DeadManVenue; account: string; lastRenewal?: number }): string {
  return p.venue === 'perps'
    ? `Dead-man armed for perps (${p.account}): the venue cancels every ` +
        `perps order ${PERPS_LEAD_MS / 1000} s after the last renewal (renewed ` +
        `every ${PERPS_RENEW_MS / 1000} s; first at ${auditTime(p.lastRenewal)})`
    : `Dead-man armed for the order book (${p.account}): a heartbeat every ${HEARTBEAT_MS / 1000} s; ` +
        `the exchange cancels every order-book order ${HEARTBEAT_LAPSE_MS / 1000} s after the last one`;
}

/** The summary of a period whose first renewal failed (`deadman.arm`, `error`): granted requests ask until it arms. */
export function notArmedSummary(p: { venue: DeadManVenue; account: string }): string {
  return (
    `Dead-man could not arm ${venueName(p.venue)} for ` + `${p.account}; granted ${p.venue} requests ask until it does`
  );
}

/**
 * The summary of a period's end (`deadman.end`): how it ended (`outcome`), its renewals since it began, the last one,
 * and its failed renewals with the last reason. Times Unix ms.
 */
export function endedSummary(
  p: {
    venue: DeadManVenue;
    account: string;
    since: number;
    renewals: number;
    lastRenewal?: number;
    failures: number;
    error?: string;
  },
  outcome: string,
): string {
  const failures = p.failures ? `, ${p.failures} failed${p.error ? ` (last: ${p.error})` : ''}` : '';
  return (
    `Dead-man for ${venueName(p.venue)} (${p.account}) ended: ${outcome}. ${p.renewals} ` +
    `renewal(s) since ${auditTime(p.since)}, the last at ${auditTime(p.lastRenewal)}${failures}`
  );
}

/** A running period as the journal keeps it (its timer, session and failures left out). */
export function journalRecord(p: DeadManJournalRecord): DeadManJournalRecord {
  return {
    venue: p.venue,
    account: p.account,
    since: p.since,
    renewals: p.renewals,
    ...(p.lastRenewal === undefined ? {} : { lastRenewal: p.lastRenewal }),
    ...(p.cancelAt === undefined ? {} : { cancelAt: p.cancelAt }),
  };
}

/**
 * The `deadman.end` entries (account and summary) of the periods a stopped background left in its journal
 * (`saved`, the loaded records; one not in the record's shape is skipped): what the venue does at its switch.
 */
export function stoppedPeriodEntries(saved: unknown[]): { account: string; summary: string }[] {
  const entries: { account: string; summary: string }[] = [];
  for (const r of saved as Partial<DeadManJournalRecord>[]) {
    if (
      (r?.venue !== 'perps' && r?.venue !== 'clob') ||
      typeof r.account !== 'string' ||
      typeof r.since !== 'number' ||
      typeof r.renewals !== 'number'
    )
      continue;
    const fired =
      r.venue === 'perps'
        ? typeof r.cancelAt === 'number'
          ? `the venue cancels at ${auditTime(r.cancelAt)} unless re-armed`
          : 'never armed'
        : 'the exchange cancels the order-book orders after its lapse';
    entries.push({
      account: r.account,
      summary:
        `Dead-man for ${venueName(r.venue)} (${r.account}) ended when the background ` +
        `stopped: ${fired}. ${r.renewals} renewal(s) since ${auditTime(r.since)}, the last ` +
        `at ${auditTime(typeof r.lastRenewal === 'number' ? r.lastRenewal : undefined)}`,
    });
  }
  return entries;
}
