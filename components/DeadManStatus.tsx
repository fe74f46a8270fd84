/**
 * The kill switches' status under the standing permissions: per venue, whether the dead-man
 * timer is armed, when perps orders cancel unless renewed (and how long is left), or when the order
 * book's last heartbeat went out, and the last renewal's failure. Presentational: times are Unix ms.
 */

/** One switch's fields this list shows. */
export type DeadManRow = {
  venue: 'perps' | 'clob';
  account: string;
  armed: boolean;
  perpsCancelAt?: number;
  lastHeartbeat?: number;
  error?: string;
};

/** One switch's status in plain words, relative to `now` (Unix ms). */
export function deadManText(v: DeadManRow, now: number): string {
  const state = v.armed ? 'armed' : 'NOT armed — granted requests ask';
  const main =
    v.venue === 'perps'
      ? `Dead-man timer (perps) ${state}: orders cancel at ` +
        `${v.perpsCancelAt ? new Date(v.perpsCancelAt).toLocaleTimeString() : '…'} unless renewed ` +
        `(${v.perpsCancelAt ? Math.max(0, Math.round((v.perpsCancelAt - now) / 1000)) : '…'} s left).`
      : `Dead-man timer (order book) ${state}: last heartbeat ` +
        `${v.lastHeartbeat ? `${Math.round((now - v.lastHeartbeat) / 1000)} s ago` : 'not yet'}.`;
  return `${main}${v.error ? ` Last renewal failed: ${v.error}` : ''}`;
}

/** The list (`data-testid="deadman"`, one `deadman-<venue>` row per switch); nothing without switches. */
export function DeadManStatus({ venues, now }: { venues: readonly DeadManRow[]; now: number }) {
  if (!venues.length) return null;
  return (
    <ul class="muted small" data-testid="deadman">
      {venues.map((v) => (
        <li key={`${v.venue}:${v.account}`} data-testid={`deadman-${v.venue}`}>
          {deadManText(v, now)}
        </li>
      ))}
    </ul>
  );
}
