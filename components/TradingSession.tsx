/**
 * "Trading session: <site>, <time left>" ("A grant outlives auto-lock"): shown in the popup
 * header while a standing grant is live, and on the unlock screen while auto-lock has sealed the owner
 * key but kept the keys the live grants use. Presentational: the caller passes the live grants' sites
 * and expiry times (Unix ms) and the clock.
 */

import { sessionText, type SessionSite } from '../lib/grants/session';

export type { SessionSite };

/** The header chip / banner. Renders nothing when no grant is live. */
export function TradingSessionBanner({
  sites,
  now,
  sealed,
}: {
  sites: readonly SessionSite[];
  now: number;
  sealed?: boolean;
}) {
  if (!sites.length) return null;
  return (
    <p class={sealed ? 'session-banner sealed' : 'session-banner'} role="status" data-testid="trading-session">
      <strong>Trading session:</strong> {sessionText(sites, now)}
      {sealed ? (
        <span class="muted">
          {' '}
          — your owner key is locked; only the permission{sites.length > 1 ? 's' : ''} above can sign.
        </span>
      ) : null}
    </p>
  );
}
