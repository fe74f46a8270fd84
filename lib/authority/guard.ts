/**
 * The one check every signature and every send makes (`lib/authority/epoch.ts`), and the owner key
 * guarded by it. The signing service builds the check from its panic gate; every path — venue commands,
 * order-book L2 requests, ClobAuth, deposit-wallet batches and wallet creation — calls it right before
 * each signature and again right before each send, whatever it awaited in between.
 */
import type { LocalAccount } from 'viem';
import type { Authority, AuthorityTicket } from './epoch';

/**
 * What a request holds from its start: its authority ticket (`Authority.capture`, taken where the request
 * starts — a page request, a popup procedure, a dead-man renewal, panic after its halt). Required on every
 * signing call: there is no default.
 */
export type Held = { readonly authority: AuthorityTicket };

/**
 * The check right before a signature or a send: the signing gate (`gate`: throws `Signer.HaltedError`
 * while panic holds it), the caller's own condition (`still`, e.g. a grant still covering), then the ticket
 * (`AuthorityEndedError` 4900, `SiteAuthorityEndedError` 4100, `GrantRevokedError` -32003). Synchronous: nothing may
 * await between it and what it guards.
 */
export function signingCheck(
  gate: () => void,
  authority: Authority,
  ticket: AuthorityTicket,
  still?: () => void,
): () => void {
  return () => {
    gate();
    still?.();
    authority.assert(ticket);
  };
}

/**
 * `check` as the last check right before a body leaves (`beforeSend`, called by the transport), and
 * `refused(err)`: whether `err` is what that check threw — then nothing was sent.
 */
export function lastCheck(check: () => void): { beforeSend: () => void; refused: (err: unknown) => boolean } {
  let thrown: unknown;
  let threw = false;
  return {
    beforeSend: () => {
      try {
        check();
      } catch (err) {
        thrown = err;
        threw = true;
        throw err;
      }
    },
    refused: (err) => threw && err === thrown,
  };
}

/**
 * `owner` with every signing method (`sign*`: typed data, message, transaction …) running `check` right
 * before it signs: a ClobAuth header, a deposit-wallet batch. Nothing else of the key changes.
 */
export function guardedOwner(owner: LocalAccount, check: () => void): LocalAccount {
  const out: Record<string, unknown> = { ...owner };
  for (const [k, f] of Object.entries(owner)) {
    if (typeof f !== 'function' || !k.startsWith('sign')) continue;
    out[k] = (...args: unknown[]) => {
      check();
      return (f as (...a: unknown[]) => unknown).apply(owner, args);
    };
  }
  return out as LocalAccount;
}
