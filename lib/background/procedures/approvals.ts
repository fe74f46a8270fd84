/** Handlers of the approval-window procedures (contract: lib/messaging/approvals.ts). */
import type { APPROVAL_CONTRACT } from '../../messaging/approvals';
import type { ContractHandlers, ProcedureDeps } from './deps';

/** The pending requests, which one the window shows, the empty queue (close the window), the person's decision. */
export function approvalProcedures(d: ProcedureDeps): ContractHandlers<typeof APPROVAL_CONTRACT> {
  return {
    'approval.list': async () => d.registry.list(),
    'approval.showing': async ({ id, digest }) => {
      d.onApprovalShown?.(id, digest);
      return null;
    },
    'approval.empty': async () => ({ closed: (await d.onApprovalEmpty?.()) ?? false }),
    'approval.decide': async ({ id, approve, digest }) => {
      d.registry.decide(id, { approve, ...(digest === undefined ? {} : { digest }) });
      return null;
    },
  };
}
