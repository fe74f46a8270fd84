/**
 * Which requests are the person's own — the only ones that may draw on what is kept for the person: the
 * reserve of the client-side rate budgets (lib/ratelimit/reserve.ts) and the pending-approval slots no
 * site can take (lib/approvals/registry.ts).
 *
 * The person's requests carry one of `PERSON_ORIGINS` as their origin; every origin is set by the
 * background's own code, never by a page: `extension` by the popup's procedures (the router admits only
 * the extension's own pages), `dead-man` by the kill-switch renewals, `panic` by the panic switch. A page's
 * origin is the browser's sender URL of its port, and `ProviderService.request` refuses, before anything else, every
 * origin that is not an http(s) URL origin (`isAllowedOrigin`) — none of these words is one. So a page can never claim
 * the person's share.
 */

/** The origins of the person's own requests: the popup, the dead-man timer, the panic switch. */
const PERSON_ORIGINS = ['extension', 'dead-man', 'panic'] as const;

/** One of `PERSON_ORIGINS`. */
type PersonOrigin = (typeof PERSON_ORIGINS)[number];

/** The origin of the popup's requests (the person's clicks; its deposit-wallet batches ask in the approval window). */
export const POPUP_ORIGIN: PersonOrigin = 'extension';

/** Whether `origin` is one of the person's own (`PERSON_ORIGINS`); any other origin is a site's. */
export function isPersonOrigin(origin: string): origin is PersonOrigin {
  return (PERSON_ORIGINS as readonly string[]).includes(origin);
}
