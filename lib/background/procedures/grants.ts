/** Handlers of the standing-grant procedures and the dead-man status (contract: lib/messaging/grants.ts). */
import { ApprovalNotFoundError } from '../../approvals/registry';
import { appendAudit } from '../../audit';
import { describeGrant } from '../../grants/evaluate';
import { grantOffer, serviceOfferReads } from '../../grants/offer';
import { GrantLimitsError } from '../../grants/service';
import type { GRANT_CONTRACT } from '../../messaging/grants';
import { readSettings } from '../../settings';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/**
 * Offer and create a grant for the pending request the window shows (its origin, account, venue and
 * markets — never the message's; `ApprovalNotFoundError`, `GrantLimitsError`), list, revoke, dead-man status.
 */
export function grantProcedures(d: ProcedureDeps): ContractHandlers<typeof GRANT_CONTRACT> {
  const { db, service } = d;
  /** Equity and names for a grant offer. */
  const offerReads = serviceOfferReads({
    perpsRead: (account, name) => d.reads.perpsRead(account, name),
    clobCollateral: (account) => d.reads.clobCollateral(account),
    clobUrl: async () => (await readSettings(db)).clobUrl,
  });
  return {
    'grant.offer': async ({ approvalId }) => {
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable || !view.markets?.length) throw new ApprovalNotFoundError();
      return grantOffer(view.kind === 'clob' ? 'clob' : 'perps', view.markets, view.account.address, offerReads);
    },
    'grant.create': async ({ approvalId, limits, minutes }) => {
      // The origin and account come from the pending request the window shows, never from the message;
      // the grant's venue and instruments / markets must be those of that request.
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable) throw new ApprovalNotFoundError();
      const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
      if (limits.venue !== (view.kind === 'clob' ? 'clob' : 'perps')) throw new GrantLimitsError({ field: 'limits.venue', reason: 'must be the venue of the request being approved' });
      const other = scope.find((m) => !view.markets?.includes(m));
      if (other !== undefined) throw new GrantLimitsError({ field: limits.venue === 'perps' ? 'limits.instruments' : 'limits.markets', reason: `may name only what the request being approved trades (not ${other.slice(0, 20)})` });
      const names = await offerReads.names(limits.venue, scope).catch(() => ({}));
      const grant = await d.grants.create({ origin: view.origin, account: view.account.address, limits, durationMs: minutes * 60_000, names });
      await appendAudit(auditOf(d), { at: Date.now(), origin: view.origin, account: view.account.address.toLowerCase(), kind: 'grant.create', summary: `Standing permission for ${view.origin} until ${new Date(grant.expiresAt).toISOString()}: ${describeGrant(grant).slice(0, 2).join(' ')}`.slice(0, 500), result: 'ok' });
      return grant;
    },
    'grant.list': async () => d.grants.list(),
    'grant.revoke': async ({ id }) => {
      await d.grants.revoke(id);
      return null;
    },
    'deadman.status': async () => d.deadman(),
  };
}
