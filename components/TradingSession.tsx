/**
 * "Trading session: <site>, <time left>" (issue #17, "A grant outlives auto-lock"): shown in the popup
 * header while a standing grant is live, and on the unlock screen while auto-lock has sealed the owner
 * key but kept the keys the live grants use. Presentational: the caller passes the live grants' sites
 * and expiry times (Unix ms) and the clock.
 */

/** One live grant as the banner shows it: the site and when its permission ends (Unix ms). */
export type SessionSite = { origin: string; expiresAt: number };

/** "3 h 12 min", "14 min", "40 s" from a duration in ms (never negative). */
export function timeLeft(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** The sites' hosts (scheme dropped), the soonest expiry's time left: "trade.example, 3 h 12 min left". */
export function sessionText(sites: readonly SessionSite[], now: number): string {
  const hosts = [...new Set(sites.map((s) => s.origin.replace(/^https?:\/\//, '')))];
  const soonest = Math.min(...sites.map((s) => s.expiresAt));
  const names = hosts.length > 2 ? `${hosts.slice(0, 2).join(', ')} +${hosts.length - 2}` : hosts.join(', ');
  return `${names}, ${timeLeft(soonest - now)} left`;
}

/** The header chip / banner. Renders nothing when no grant is live. */
export function TradingSessionBanner({ sites, now, sealed }: { sites: readonly SessionSite[]; now: number; sealed?: boolean }) {
  if (!sites.length) return null;
  return (
    <p class={sealed ? 'session-banner sealed' : 'session-banner'} role="status" data-testid="trading-session">
      <strong>Trading session:</strong> {sessionText(sites, now)}
      {sealed ? <span class="muted"> — your owner key is locked; only the permission{sites.length > 1 ? 's' : ''} above can sign.</span> : null}
    </p>
  );
}
