/**
 * The header's stream state, over both venues' account streams (the perps session and the
 * order-book user channel, as `streams.status` reports them for the active account): "live" while every
 * one of them pushes orders, fills and positions; "polling" while one is down and the popup reads it over
 * REST (the title names which). Hidden when the account has no stream (no proxy, no API credentials).
 */
export function StreamBadge({ venues }: { venues: readonly { venue: 'perps' | 'clob'; live: boolean }[] }) {
  if (venues.length === 0) return null;
  const down = venues.filter((x) => !x.live).map((x) => (x.venue === 'perps' ? 'perps' : 'order book'));
  const live = down.length === 0;
  return (
    <span
      class={live ? 'stream-badge live' : 'stream-badge polling'}
      style={{ fontSize: '11px', padding: '1px 6px', border: '1px solid var(--line)', borderRadius: '8px' }}
      role="status"
      title={
        live
          ? 'Orders, fills and positions arrive as they happen'
          : `The ${down.join(' and ')} stream is down: reading the venue over REST`
      }
    >
      {live ? 'live' : 'polling'}
    </span>
  );
}
