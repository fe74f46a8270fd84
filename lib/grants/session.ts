/**
 * "Trading session: <site>, <time left>" in words ("A grant outlives auto-lock"): the popup's
 * banner and the toolbar button's title use the same text. Pure.
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
