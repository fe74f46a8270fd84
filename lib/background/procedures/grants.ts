/** Handlers of the standing-grant procedures and the dead-man status (contract: lib/messaging/grants.ts). */
import { ApprovalNotFoundError } from '../../approvals/registry';
import { appendAudit } from '../../audit';
import { describeGrant } from '../../grants/evaluate';
import { grantOffer, proposeCaps, serviceOfferReads, type GrantOffer } from '../../grants/offer';
import { GrantLimitsError } from '../../grants/errors';
import type { GrantLimitsInput } from '../../grants/schema';
import { approvedPageScopes } from '../../authority/epoch';
import { toUnits } from '../../decimal';
import type { GRANT_CONTRACT } from '../../messaging/grants';
import { readSettings } from '../../settings';
import { auditOf, type ContractHandlers, type ProcedureDeps } from './deps';

/**
 * `GrantLimitsError` naming the first cap of `limits` above what the offer proposed (`proposal`, from the
 * account's equity: the window lets the person only lower it); none without a proposal (equity unknown).
 */
function checkCaps(
  limits: Pick<GrantLimitsInput, 'maxNotional' | 'dailyNotional'>,
  proposal: Pick<GrantOffer['proposal'], 'maxNotional' | 'dailyNotional'>,
): void {
  for (const field of ['maxNotional', 'dailyNotional'] as const) {
    const cap = proposal[field];
    if (cap === undefined) continue;
    const asked = toUnits(limits[field], 18);
    if (asked !== undefined && asked > (toUnits(cap, 18) ?? 0n))
      throw new GrantLimitsError({
        field: `limits.${field}`,
        reason: `must be at most ${cap} USDC, the cap proposed from the account's equity`,
      });
  }
}

/**
 * Offer and create a grant for the pending request the window shows (its origin, account, venue and
 * markets — never the message's; `ApprovalNotFoundError`, `GrantLimitsError`; caps at most the offer's
 * proposal, read again when no offer was asked; the request's authority held from the call, so a lock,
 * panic, switch or disconnect meanwhile makes no grant), list, revoke, dead-man status.
 */
export function grantProcedures(d: ProcedureDeps): ContractHandlers<typeof GRANT_CONTRACT> {
  const { db, service } = d;
  /** Equity and names for a grant offer. */
  const offerReads = serviceOfferReads({
    perpsRead: (account, name) => d.reads.perpsRead(account, name),
    clobCollateral: (account) => d.reads.clobCollateral(account),
    clobUrl: async () => (await readSettings(db)).clobUrl,
    fetchFn: service.gatewayFetch(),
  });
  /** The proposal of the offer made for each pending request (what the window's form may lower, never raise). */
  const offered = new Map<string, Pick<GrantOffer['proposal'], 'maxNotional' | 'dailyNotional'>>();
  /** Forgets the offers of requests no longer pending. */
  const forget = () => {
    const pending = new Set(d.registry.list().map((x) => x.id));
    for (const id of offered.keys()) if (!pending.has(id)) offered.delete(id);
  };
  return {
    'grant.offer': async ({ approvalId }) => {
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable || !view.markets?.length) throw new ApprovalNotFoundError();
      const offer = await grantOffer(
        view.kind === 'clob' ? 'clob' : 'perps',
        view.markets,
        view.account.address,
        offerReads,
      );
      forget();
      if (d.registry.list().some((x) => x.id === approvalId)) offered.set(approvalId, offer.proposal);
      return offer;
    },
    'grant.create': async ({ approvalId, limits, minutes }) => {
      // The origin and account come from the pending request the window shows, never from the message;
      // the grant's venue and instruments / markets must be those of that request.
      const view = d.registry.list().find((x) => x.id === approvalId);
      if (!view || !view.account || !view.grantable) throw new ApprovalNotFoundError();
      // The request's authority from the call: a lock, panic, account switch or disconnect while the reads below run
      // makes no grant.
      const authority = service.authority.capture(approvedPageScopes(view.origin));
      const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
      if (limits.venue !== (view.kind === 'clob' ? 'clob' : 'perps'))
        throw new GrantLimitsError({
          field: 'limits.venue',
          reason: 'must be the venue of the request being approved',
        });
      const other = scope.find((m) => !view.markets?.includes(m));
      if (other !== undefined)
        throw new GrantLimitsError({
          field: limits.venue === 'perps' ? 'limits.instruments' : 'limits.markets',
          reason: `may name only what the request being approved trades (not ${other.slice(0, 20)})`,
        });
      const proposal =
        offered.get(approvalId) ??
        proposeCaps(await offerReads.equity(limits.venue, view.account.address).catch(() => undefined));
      checkCaps(limits, proposal);
      const names = await offerReads.names(limits.venue, scope).catch(() => ({}));
      const grant = await d.grants.create({
        origin: view.origin,
        account: view.account.address,
        limits,
        durationMs: minutes * 60_000,
        names,
        authority,
      });
      await appendAudit(auditOf(d), {
        at: Date.now(),
        origin: view.origin,
        account: view.account.address.toLowerCase(),
        kind: 'grant.create',
        summary: (
          `Standing permission for ${view.origin} until ` +
          `${new Date(grant.expiresAt).toISOString()}: ${describeGrant(grant).slice(0, 2).join(' ')}`
        ).slice(0, 500),
        result: 'ok',
      });
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
