/** Handlers of the audit-log procedures (contract: lib/messaging/audit.ts). */
import { auditCsv, auditOrigins, checkAudit, exportAudit, pageAudit } from '../../audit';
import type { AUDIT_CONTRACT } from '../../messaging/audit';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/**
 * Pages (newest first, 100 by default), origins, incremental checks, exports (oldest first; the first page carries the
 * check).
 */
export function auditProcedures(d: ProcedureDeps): ContractHandlers<typeof AUDIT_CONTRACT> {
  const audit = auditOf(d);
  return {
    'audit.list': async ({ limit, origin, kind, before }) =>
      (await pageAudit(audit, { limit: limit || 100, origin, kind, before })).entries,
    'audit.origins': async () => auditOrigins(audit),
    'audit.verify': async ({ full }) => checkAudit(audit, { full: !!full }),
    'audit.export': async ({ format, after, limit }) => {
      const page = await exportAudit(audit, { after, limit });
      const text =
        format === 'csv'
          ? auditCsv(page.entries, { header: after === undefined })
          : JSON.stringify(page.entries, null, 2);
      return { text, next: page.next, ...(after === undefined ? { verification: await checkAudit(audit) } : {}) };
    },
  };
}
