/**
 * Standing permissions: every live grant with its venue and instruments /
 * markets by name, its limits in plain words, what it used in the last 24 h, the time left, and Revoke.
 * Lock revokes them all; so does the panic switch. State: `stores/permissions.ts`.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import { DeadManStatus } from '../../components/DeadManStatus';
import { describeGrant, grantScope, marketName } from '../../lib/grants/evaluate';
import { createPermissionsStore } from './stores/permissions';

/** Whole minutes from `now` to `expiresAt` (both ms since the epoch), never below 0. */
const minutesLeft = (expiresAt: number, now: number) => Math.max(0, Math.round((expiresAt - now) / 60_000));

/** The "Standing permissions" section of the Settings tab (nothing until the grants are read). */
export function Permissions() {
  const s = useMemo(() => createPermissionsStore(), []);
  useEffect(() => void s.load(), [s]);
  const grants = s.grants.value;
  if (!grants) return null;
  const now = Date.now();
  return (
    <section aria-label="Standing permissions" data-testid="permissions">
      <h3>Standing permissions</h3>
      <ErrorText error={s.error.value} />
      {grants.length === 0 ? <p class="muted">No site may sign without asking.</p> : null}
      <DeadManStatus venues={s.deadman.value?.venues ?? []} now={now} />
      <ul class="orders">
        {grants.map((g) => (
          <li key={g.id} data-testid="grant">
            <strong>{g.origin}</strong> ·{' '}
            <span data-testid="grant-venue">
              {g.venue === 'perps' ? 'perps' : 'order book'}:{' '}
              {grantScope(g)
                .map((m) => marketName(g, m))
                .join(', ')}
            </span>{' '}
            · {minutesLeft(g.expiresAt, now)} min left · used {g.used24h} USDC in {g.uses24h} request(s)
            <ul class="muted small">
              {describeGrant(g).map((l) => (
                <li key={l}>{l}</li>
              ))}
            </ul>
            <Button
              kind="danger"
              onClick={() => void s.revoke(g.id)}
              aria-label={`Revoke the permission of ${g.origin}`}
            >
              Revoke
            </Button>
          </li>
        ))}
      </ul>
    </section>
  );
}
