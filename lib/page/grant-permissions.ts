/**
 * The ERC-7715 method `wallet_grantPermissions`: a standing grant a site asks for in a standard shape,
 * with Countersign's own permission type `countersign-grant` (its `data` is the grant's limits). The
 * limits are validated (`params.ts`: `grantPermissionsSchema`, `checkGrantPermissions`: unknown fields refused, the
 * field named), the window shows them in the same words as every grant (`describeGrant`, names from the grant offer's
 * reads) with flags when the caps exceed what Countersign would propose from the account's equity, and the approval is
 * bound to a digest of exactly those limits and that expiry. On approval the grant is created with those limits — never
 * wider than shown — and revocable like any other (popup, `wallet_revokePermissions`, lock, panic, expiry).
 *
 * Countersign signs itself, so the only signer it accepts is `{ type: 'wallet' }`; it enforces no
 * ERC-7715 policy, so `policies` must be empty (a policy it cannot enforce is refused rather than
 * silently dropped). The answer: `{ expiry (Unix s), grantedPermissions, permissionsContext }`.
 */
import { keccak256, toHex } from 'viem';
import type { ApprovalView } from '../approvals/registry';
import { appendAudit, auditLog } from '../audit';
import { approvedPageScopes, narrowTicket, type Authority } from '../authority/epoch';
import { disconnected, unsupported, userRejected } from '../errors/rpc';
import { describeGrant, type Grant, type GrantLimits } from '../grants/evaluate';
import { grantOffer } from '../grants/offer';
import { readSettings } from '../settings';
import { TTL_FUNDS_MS, type Consent } from './consent';
import { connectedAccount, LOCKED_MESSAGE, type PageRequest, type ProviderDeps } from './context';
import { grantFlags } from './flags';
import { checkGrantPermissions, GRANT_PERMISSION_TYPE, type GrantPermissionsParams } from './params';
import type { PageReads } from './reads';

/** The limits of a stored grant (what `grantedPermissions[0].data` answers). */
export function grantLimitsOf(g: Grant): GrantLimits {
  const { id: _i, origin: _o, account: _a, createdAt: _c, expiresAt: _e, names: _n, ...limits } = g;
  return limits;
}

/**
 * The ERC-7715 answer for a created grant: `expiry` (Unix s, the grant's), `grantedPermissions` (one
 * `countersign-grant` with the stored limits — never wider than requested), `permissionsContext` (the
 * grant id; the popup lists and revokes it, `wallet_revokePermissions` ends it with the connection).
 */
export function grantPermissionsAnswer(g: Grant) {
  return {
    expiry: Math.floor(g.expiresAt / 1000),
    grantedPermissions: [{ type: GRANT_PERMISSION_TYPE, data: grantLimitsOf(g), policies: [] }],
    permissionsContext: g.id,
  };
}

/** What `wallet_grantPermissions` uses. */
export type GrantPermissionParts = { d: ProviderDeps; authority: Authority; consent: Consent; reads: PageReads };

/** The ERC-7715 page method (see the module docstring). */
export class GrantPermissionMethods {
  /**
   * Pending `wallet_grantPermissions` windows (approval id → origin and venue), refreshed when a grant they would
   * replace is created.
   */
  private readonly grantRequests = new Map<string, { origin: string; venue: GrantLimits['venue'] }>();

  constructor(private readonly c: GrantPermissionParts) {}

  /**
   * `wallet_grantPermissions` with parsed params `p`: the ERC-7715 answer of the grant created. Throws
   * 4200 when grants are not available, -32602 naming the field, 4900 when locked, 4001 when the person
   * rejects or when another permission of this site for this venue was approved meanwhile.
   */
  async grant(req: PageRequest, p: GrantPermissionsParams): Promise<ReturnType<typeof grantPermissionsAnswer>> {
    const { d, consent, reads } = this.c;
    const { origin } = req;
    const account = connectedAccount(req);
    // A grant is the person's authority given to the site: a disconnect, switch, venue change or lock meanwhile creates
    // none.
    const authority = narrowTicket(req.ticket, approvedPageScopes(origin));
    const grants = d.grants;
    if (!grants) throw unsupported('Standing permissions are not available.');
    const chainId = (await readSettings(d.db)).clobChainId;
    const { limits, expiresAt } = checkGrantPermissions(p, { account: account.address, chainId, now: Date.now() });
    if (!d.vault.unlocked) throw disconnected(LOCKED_MESSAGE);
    d.registry.checkCapacity(origin);
    const scope = limits.venue === 'perps' ? limits.instruments.map(String) : limits.markets;
    const offer = await grantOffer(limits.venue, scope, account.address, reads.offerReads());
    const names = Object.fromEntries(offer.markets.map((m) => [m.id, m.name]));
    const replacesNow = async () =>
      (await grants.list()).some(
        (g) =>
          g.origin === origin && g.account.toLowerCase() === account.address.toLowerCase() && g.venue === limits.venue,
      );
    const venueName = limits.venue === 'perps' ? 'perps' : 'order-book';
    const replacing = `This replaces the site's current ${venueName} permission.`;
    // The window's flags and the digest it binds; rebuilt when another grant of this site is created while this one is
    // pending.
    const lines = describeGrant({ ...limits, names, expiresAt });
    const shown = (replaces: boolean) => ({
      lines,
      flags: [...grantFlags(limits, offer), ...(replaces ? [replacing] : [])],
      digest: keccak256(
        toHex(JSON.stringify({ grant: origin, account: account.address.toLowerCase(), limits, expiresAt, replaces })),
      ),
    });
    const first = shown(await replacesNow());
    const { id, approved } = d.registry.add(
      {
        origin,
        kind: 'grant',
        title: 'Allow this site to trade within limits',
        ...first,
        signer: null,
        account: { address: account.address, label: account.label },
      },
      TTL_FUNDS_MS,
      async () => shown(await replacesNow()),
    );
    this.grantRequests.set(id, { origin, venue: limits.venue });
    let view: ApprovalView;
    try {
      view = await consent.awaitWindow(id, approved, authority);
    } finally {
      this.grantRequests.delete(id);
    }
    this.c.authority.assert(authority);
    if (!d.vault.unlocked) throw disconnected(LOCKED_MESSAGE);
    // Never replace a permission the approved window did not say it replaces (one approved meanwhile).
    if (!view.flags.includes(replacing) && (await replacesNow()))
      throw userRejected(
        'Another permission of this site for this venue was approved ' +
          'meanwhile; ask again to see what this one replaces.',
      );
    const durationMs = expiresAt - Date.now();
    if (durationMs < 60_000)
      throw userRejected('The permission would have ended within a minute of being approved; ask again.');
    const grant = await grants.create({
      origin,
      account: account.address,
      limits,
      durationMs,
      notAfter: expiresAt,
      names,
      authority,
    });
    // Other pending requests of this site for this venue now replace this grant: their windows are
    // rebuilt with the flag (their old digest can no longer be approved).
    for (const [pending, r] of this.grantRequests)
      if (r.origin === origin && r.venue === limits.venue) await d.registry.refresh(pending);
    await appendAudit(
      auditLog(d.db, () => d.vault.auditKey()),
      {
        at: Date.now(),
        origin,
        account: account.address.toLowerCase(),
        kind: 'grant.create',
        summary: (
          `Standing permission (wallet_grantPermissions) for ${origin} until ` +
          `${new Date(grant.expiresAt).toISOString()}: ${describeGrant(grant).slice(0, 2).join(' ')}`
        ).slice(0, 500),
        result: 'ok',
      },
    );
    return grantPermissionsAnswer(grant);
  }
}
