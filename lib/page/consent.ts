/**
 * Consent, for both venues: build → window → approved artifact. The signing service builds the complete
 * artifact first (`lib/signer/artifact.ts`); the approval window shows that artifact decoded in plain
 * words with its binding digest and the method's risk flags; on approval the caller signs exactly that
 * artifact and sends exactly its body. Nothing is rebuilt after consent: the artifact is rebuilt only
 * while pending, when it would go stale (`validUntil`), and the window then shows the new digest and re-arms.
 *
 * A window-approved request holds the person's authority (`approvedPageScopes`): a lock, a trading
 * session, an account switch, a venue change or a disconnect ends it, and its pending window closes at
 * once with why (`endedError`'s code).
 */
import type { ApprovalKind, ApprovalRefresh, ApprovalView } from '../approvals/registry';
import { approvedPageScopes, endedError, narrowTicket, type Authority, type AuthorityTicket } from '../authority/epoch';
import { disconnected, fromRpcError, toRpcError } from '../errors/rpc';
import type { GrantRequest } from '../grants/evaluate';
import { canOfferGrant, clobGrantRequest, perpsGrantRequest, requestMarkets } from '../grants/requests';
import { describeArtifact, perpsArtifactCommand, type SigningArtifact } from '../signer/artifact';
import type { OwnerInfo } from '../vault/vault';
import type { ProviderDeps } from './context';
import type { PageReads } from './reads';

/** Approval time-to-live of trading requests (orders, cancels, leverage, L2 headers), in ms: 60 s. */
export const TTL_TRADING_MS = 60_000;
/** Approval time-to-live of withdrawals, transfers, connections and grants, in ms: 300 s. */
export const TTL_FUNDS_MS = 300_000;

/**
 * An approved artifact: the window's view (digest, words) with the artifact exactly as approved and the authority it
 * was approved under.
 */
export type Approved = ApprovalView & { artifact: SigningArtifact; authority: AuthorityTicket };

/**
 * What `Consent.approve` asks about: the venue kind, the account, how to build the artifact, its flags, and how long
 * the window waits (ms).
 */
export type ConsentAsk = {
  origin: string;
  kind: ApprovalKind;
  account: OwnerInfo;
  build: () => Promise<SigningArtifact>;
  flagsFor: (a: SigningArtifact) => Promise<string[]>;
  ttlMs: number;
  ticket: AuthorityTicket;
};

/** The approval windows of page requests (see the module docstring). */
export class Consent {
  /** The authority of each pending window's request (approval id → ticket), closed when it ends. */
  private readonly windowAuthority = new Map<string, AuthorityTicket>();

  constructor(
    private readonly d: ProviderDeps,
    private readonly authority: Authority,
    private readonly reads: PageReads,
  ) {
    // A window whose request's authority ended (disconnect, venue change …) closes at once, with why (`endedError`'s
    // code).
    authority.onEnd(() => {
      for (const [id, ticket] of this.windowAuthority) {
        const reason = authority.endedBy(ticket);
        if (reason === undefined) continue;
        this.windowAuthority.delete(id);
        d.registry.reject(id, fromRpcError(toRpcError(endedError(reason, { granted: false }))));
      }
    });
  }

  /**
   * Shows the approval window and waits for the person's answer on request `id`, its authority `ticket`
   * watched meanwhile: an end of it rejects the request at once (the constructor's listener).
   */
  async awaitWindow(id: string, approved: Promise<ApprovalView>, ticket: AuthorityTicket): Promise<ApprovalView> {
    this.windowAuthority.set(id, ticket);
    try {
      await this.d.showApprovals();
      return await approved;
    } finally {
      this.windowAuthority.delete(id);
    }
  }

  /**
   * Builds the artifact, shows it decoded, waits for the person, and returns the approved view (its
   * artifact and digest exactly as approved). Throws 4900 when the vault is locked or in a trading
   * session (before the window and after it), 4001 when the person rejects or the window expires,
   * -32002 past the registry's capacity, and the authority's end error when it ends meanwhile.
   */
  async approve({ origin, kind, account, build, flagsFor, ttlMs, ticket }: ConsentAsk): Promise<Approved> {
    // A window-approved request holds the person's authority: a trading session, lock, switch or disconnect ends it.
    const authority = narrowTicket(ticket, approvedPageScopes(origin));
    const mustBeUnlocked = () => {
      this.authority.assert(authority);
      if (!this.d.vault.unlocked)
        throw disconnected(
          "Countersign is in a trading session: only requests within this site's " +
            'standing permission are signed. Unlock Countersign to approve this one.',
        );
    };
    mustBeUnlocked();
    this.d.registry.checkCapacity(origin);
    // The symbols and steps are read while the artifact is built (one venue read on a worker's first request).
    const [symbol, steps] = [this.reads.symbol(), this.reads.steps()];
    const make = async () => {
      const artifact = await build();
      const { title, lines, signer } = describeArtifact(artifact, await symbol, await steps);
      const refresh: ApprovalRefresh = {
        artifact,
        digest: artifact.digest,
        lines,
        flags: await flagsFor(artifact),
        refreshAt: artifact.validUntil,
      };
      return { title, signer, refresh };
    };
    const first = await make();
    // Auto-lock may have entered a trading session while the window was being built (its `rejectAll` ran
    // before this request was pending): nothing outside the grants may become approvable in a session.
    mustBeUnlocked();
    const offer =
      this.d.grants && (kind === 'clob' || kind === 'perps') ? offerable(first.refresh.artifact) : undefined;
    const { id, approved } = this.d.registry.add(
      {
        origin,
        kind,
        title: first.title,
        signer: first.signer,
        account: { address: account.address, label: account.label },
        grantable: !!offer,
        markets: offer ? requestMarkets(offer) : [],
        ...first.refresh,
      },
      ttlMs,
      async () => (await make()).refresh,
    );
    const view = await this.awaitWindow(id, approved, authority);
    mustBeUnlocked();
    if (!view.artifact) throw disconnected('The approved request carried nothing to sign.');
    return { ...view, artifact: view.artifact, authority };
  }
}

/**
 * The grant request of an artifact, when a window for it may offer a grant (perps: submitted orders and leverage;
 * order-book orders).
 */
function offerable(a: SigningArtifact | undefined): GrantRequest | undefined {
  if (a?.kind === 'clob') return clobGrantRequest(a);
  if (a?.kind === 'perps' && a.submit) {
    const req = perpsGrantRequest(perpsArtifactCommand(a));
    return canOfferGrant(req) ? req : undefined;
  }
  return undefined;
}
