/**
 * When the browser discarded Countersign's database (Chromium deletes an extension's IndexedDB it finds
 * damaged when it starts, which a killed browser can leave behind), the vault comes back from its second
 * copy (`lib/vault/copy.ts`) but the audit log, the journal of what was in flight and the keyed
 * submissions' records are gone with the database. So that nothing the venues hold is left unrecorded,
 * the first unlock that restored the vault from its copy asks each venue for the account's orders — perps
 * orders of any status of the last `LOST_WINDOW_MS` (`GET /v1/account/orders?start_timestamp=`), the
 * order book's open orders (`GET /data/orders`) and the orders of its newest trades (`GET /data/trades`) — and
 * writes one `unknown` audit entry for each ("found at the venue after the browser discarded Countersign's records"),
 * dated when the venue says it was created (else now), with its client order id or order hash, and the person is told
 * once. A venue that cannot be asked is named in that notification; its orders are not recorded. Reads only the
 * person's own accounts; nothing is signed or sent.
 */
import { appendAudit, type AuditLog } from './log';

/**
 * How far back the venues are asked after a lost database (ms): 24 h, as long as keyed records and grant uses count.
 */
export const LOST_WINDOW_MS = 24 * 3_600_000;

/** One order a venue holds for an account, as the sweep records it. */
export type FoundOrder = {
  venue: 'perps' | 'clob';
  account: string;
  at: number | undefined;
  words: string;
  id: string;
};

/**
 * What the sweep asks: the orders `account` placed since `since` (Unix ms) at one venue; throws when the venue cannot
 * be asked.
 */
export type OrderFinder = { venue: 'perps' | 'clob'; find: (account: string, since: number) => Promise<FoundOrder[]> };

/** What the person is told: how many orders were recorded, and the venues that could not be asked. */
export type LostStorageReport = { recorded: number; unasked: string[] };

const DETAIL =
  "The browser discarded Countersign's records after a crash; this order was " +
  'found at the venue afterwards. Countersign may have sent it; check the venue.';

/**
 * The sweep (see the module docstring) over `accounts` (lowercase addresses) with `finders`, at `now`
 * (Unix ms). Appends one entry per order found; returns the report. Throws nothing.
 */
export async function recordFoundOrders(
  log: AuditLog,
  accounts: readonly string[],
  finders: readonly OrderFinder[],
  now: number,
): Promise<LostStorageReport> {
  const report: LostStorageReport = { recorded: 0, unasked: [] };
  for (const f of finders) {
    for (const account of accounts) {
      let found: FoundOrder[];
      try {
        found = await f.find(account, now - LOST_WINDOW_MS);
      } catch {
        if (!report.unasked.includes(f.venue)) report.unasked.push(f.venue);
        continue;
      }
      for (const o of found) {
        const kind = o.venue === 'perps' ? 'perps.createOrders' : 'clob.postOrders';
        try {
          await appendAudit(log, {
            at: o.at ?? now,
            origin: 'unknown',
            account,
            kind,
            summary: `Found at the venue: ${o.words}`,
            digest: o.id,
            result: 'unknown',
            detail: DETAIL,
          });
          report.recorded++;
        } catch {
          /* the person is told how many were recorded */
        }
      }
    }
  }
  return report;
}
