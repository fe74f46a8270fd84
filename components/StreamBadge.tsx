/**
 * The header's stream state (issue #22): "live" while the background's perps stream for the account
 * pushes orders, fills and the portfolio; "polling" while it is down and the popup reads them over REST
 * every 2 s. Hidden when there is no perps account (nothing account-side to stream).
 */
export function StreamBadge({ live, shown }: { live: boolean; shown: boolean }) {
  if (!shown) return null;
  return (
    <span class={live ? 'stream-badge live' : 'stream-badge polling'} style={{ fontSize: '11px', padding: '1px 6px', border: '1px solid var(--line)', borderRadius: '8px' }} role="status" title={live ? 'Orders, fills and positions arrive as they happen' : 'The stream is down: reading the venue every 2 s'}>
      {live ? 'live' : 'polling'}
    </span>
  );
}
