/**
 * One authority epoch: what ends the person's authority, and the one check every signing path makes.
 *
 * Every request captures a ticket when it starts (a page request in `ProviderService.request`, a popup
 * action or a dead-man renewal when it enters the signing service). The ticket is compared right before
 * each signature and again right before each send (`SigningService`: REST and the perps session alike,
 * every order-book attempt), whatever the request awaited in between — a gateway read, a grant check,
 * the approval window, an audit journal record, a grant use write, a retry back-off. A ticket captured
 * before an ending event is refused from then on; one captured after it (the person's own action once
 * the event is over, panic's cancels after the gate closed) is not.
 *
 * Scopes (a ticket checks the ones its path depends on), and what ends them:
 * - `all`: lock (and auto-lock without a grant), panic, the end of a trading session (it locks), a
 *   change of venue (preset, gateway URLs, chain id, header set, pinned domain) — everything.
 * - `person`: the person's own authority given while unlocked (window approvals, popup actions) —
 *   auto-lock entering a trading session, an account switch.
 * - `pages`: every page request (they act for the active account) — an account switch.
 * - `grants`: every standing grant — revoke all (lock, panic, unlock after a browser restart).
 * - `origin:<origin>`: one site's page requests — its disconnect (`wallet_revokePermissions`).
 * - a grant id: requests covered by that grant — its revoke or replacement (ended for good: ids are unique).
 *
 * The error says what ended it (`endedError`, the one mapping every path uses; nothing was signed, or what
 * was signed was dropped unsent):
 *
 * | what ended it | a request without a grant | a grant-covered request |
 * |---|---|---|
 * | `lock`, `panic`, `session` | `AuthorityEndedError` 4900 | `GrantRevokedError` -32003 (its grant went with it) |
 * | `venue` | `AuthorityEndedError` 4900 | `AuthorityEndedError` 4900 |
 * | `account` | `SiteAuthorityEndedError` 4100 | `SiteAuthorityEndedError` 4100 |
 * | `disconnect` | `SiteAuthorityEndedError` 4100 | `GrantRevokedError` -32003 (its site's grants were revoked) |
 * | `revoke` | `GrantRevokedError` -32003 | `GrantRevokedError` -32003 |
 *
 * A ticket is told the reason of the first end after it was captured (not a later one of the same scope).
 */
import { BaseError } from '../errors/base';

/** What ended a scope (the words of the page's error). */
export type EndReason = 'lock' | 'panic' | 'session' | 'venue' | 'account' | 'disconnect' | 'revoke';

/** A scope a ticket can depend on (see the module docstring). */
export type AuthorityScope = 'all' | 'person' | 'pages' | 'grants' | `origin:${string}`;

/**
 * What a request holds from its start: the counter of each scope it depends on as it was then, and the
 * grant covering it (if any). Immutable; narrow it with `narrowTicket`.
 */
export type AuthorityTicket = { readonly seen: Readonly<Record<string, number>>; readonly grant?: string };

const WORDS: Record<EndReason, string> = {
  lock: 'Countersign was locked',
  panic: 'the panic switch ran',
  session: 'Countersign auto-locked into a trading session',
  venue: 'the venue settings changed',
  account: 'you switched accounts in Countersign',
  disconnect: 'the site was disconnected',
  revoke: 'the standing permission was revoked',
};

/** The sentence a request whose authority ended for `reason` gets (nothing was sent). */
export function endedMessage(reason: EndReason): string {
  return `Nothing was sent: ${WORDS[reason]} after this request started. Ask again if you still want it.`;
}

/**
 * Thrown when a request's authority ended (lock, panic, trading session, venue change, revoke) before it was signed or
 * sent. EIP-1193 4900.
 */
export class AuthorityEndedError extends BaseError {
  override name = 'Authority.EndedError';
  static override readonly code: number | undefined = 4900;
  constructor(readonly reason: EndReason) {
    super(endedMessage(reason), { data: { reason } });
  }
}

/**
 * Thrown when the site's authority ended (its disconnect, an account switch) before the request was signed or sent.
 * EIP-1193 4100.
 */
export class SiteAuthorityEndedError extends AuthorityEndedError {
  override name = 'Authority.SiteEndedError';
  static override readonly code: number | undefined = 4100;
}

/**
 * Thrown right before a signature covered by a grant when that grant was revoked (by the person, by a
 * disconnect of its site, by lock or panic) after it covered the request: revoke acts before the next
 * signature. Nothing was signed. -32003: the request was refused; asking again opens a window.
 */
export class GrantRevokedError extends BaseError {
  override name = 'Grants.RevokedError';
  static override readonly code: number | undefined = -32003;
  constructor() {
    super('The standing permission was revoked before this request was signed; nothing was signed.');
  }
}

/**
 * The error a request whose authority ended for `reason` gets — the one mapping of every path (the table
 * in the module docstring): `granted`, the request was covered by a standing grant.
 */
export function endedError(reason: EndReason, o: { granted: boolean }): AuthorityEndedError | GrantRevokedError {
  if (reason === 'revoke') return new GrantRevokedError();
  if (reason === 'account') return new SiteAuthorityEndedError(reason);
  if (reason === 'venue') return new AuthorityEndedError(reason);
  if (o.granted) return new GrantRevokedError();
  return reason === 'disconnect' ? new SiteAuthorityEndedError(reason) : new AuthorityEndedError(reason);
}

/**
 * Whether `err` is a refusal because the request's authority ended (`endedError`'s classes): nothing of it was sent.
 */
export function isEndedError(err: unknown): err is AuthorityEndedError | GrantRevokedError {
  return err instanceof AuthorityEndedError || err instanceof GrantRevokedError;
}

/** `ticket` checking only `scopes` (each as it was captured) and, when given, the grant `grant`. */
export function narrowTicket(
  ticket: AuthorityTicket,
  scopes: readonly AuthorityScope[],
  grant?: string,
): AuthorityTicket {
  const seen: Record<string, number> = {};
  for (const s of scopes) {
    const n = ticket.seen[s];
    if (n !== undefined) seen[s] = n;
  }
  return grant === undefined ? { seen } : { seen, grant };
}

/** The scopes of a page request of `origin` when it starts (narrowed once its path is known). */
export const pageScopes = (origin: string): AuthorityScope[] => [
  'all',
  'person',
  'pages',
  'grants',
  `origin:${origin}`,
];
/** The scopes a window-approved page request of `origin` checks. */
export const approvedPageScopes = (origin: string): AuthorityScope[] => ['all', 'person', 'pages', `origin:${origin}`];
/**
 * The scopes a grant-covered page request of `origin` checks (a trading session keeps it; its grant is checked too).
 */
export const grantedPageScopes = (origin: string): AuthorityScope[] => ['all', 'pages', 'grants', `origin:${origin}`];
/** The scopes of the popup's own actions (the default of the signing service). */
export const PERSON_SCOPES: readonly AuthorityScope[] = ['all', 'person'];
/** The scopes of the dead-man's renewals (they outlive a trading session and an account switch). */
export const KILL_SWITCH_SCOPES: readonly AuthorityScope[] = ['all'];
/**
 * The scopes of panic's own cancels and closes, captured right after its halt ended `all`: only a later
 * end of `all` (a lock, a venue change) stops them — not an account switch while panic runs.
 */
export const PANIC_SCOPES: readonly AuthorityScope[] = ['all'];

/** The counters of every scope, and the ended grants (one per background). */
export class Authority {
  private readonly counters = new Map<string, number>();
  /** Per scope, the reason of each end in order: the n-th end (counter n-1 → n) is `reasons[n - 1]`. */
  private readonly reasons = new Map<string, EndReason[]>();
  private readonly endedGrants = new Set<string>();
  private readonly listeners = new Set<() => void>();

  /** A ticket of `scopes` as they are now. */
  capture(scopes: readonly AuthorityScope[]): AuthorityTicket {
    const seen: Record<string, number> = {};
    for (const s of scopes) seen[s] = this.counters.get(s) ?? 0;
    return { seen };
  }

  /**
   * Ends `scope` now (synchronously: every ticket captured before this call is refused from here on),
   * for `reason`; tells the listeners (`onEnd`).
   */
  end(scope: AuthorityScope, reason: EndReason): void {
    this.counters.set(scope, (this.counters.get(scope) ?? 0) + 1);
    const list = this.reasons.get(scope) ?? [];
    list.push(reason);
    this.reasons.set(scope, list);
    this.told();
  }

  /** Ends grant `id` for good (revoked or replaced). */
  endGrant(id: string): void {
    this.endedGrants.add(id);
    this.told();
  }

  /**
   * Why `ticket` ended (the first end after its capture of the first ended scope it checks), or undefined while it
   * holds.
   */
  endedBy(ticket: AuthorityTicket): EndReason | undefined {
    for (const [s, n] of Object.entries(ticket.seen))
      if ((this.counters.get(s) ?? 0) !== n) return this.reasons.get(s)?.[n] ?? 'lock';
    if (ticket.grant !== undefined && this.endedGrants.has(ticket.grant)) return 'revoke';
    return undefined;
  }

  /**
   * Throws `endedError` (granted when the ticket carries a grant) when `ticket` ended. Synchronous: nothing
   * may await between it and the signature or send it guards.
   */
  assert(ticket: AuthorityTicket): void {
    const reason = this.endedBy(ticket);
    if (reason !== undefined) throw endedError(reason, { granted: ticket.grant !== undefined });
  }

  /** Calls `fn` after every `end` / `endGrant` (synchronously); returns the unsubscribe. */
  onEnd(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  private told(): void {
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch {
        /* a listener's failure never stops an end */
      }
    }
  }
}
