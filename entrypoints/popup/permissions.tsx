/**
 * Standing permissions (issue #11 §1, issue #17): every live grant with its venue and instruments /
 * markets by name, its limits in plain words, what it used in the last 24 h, the time left, and Revoke. Lock revokes them all; so does the panic switch.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import { describeGrant, grantScope, marketName, type Grant } from '../../lib/grants/evaluate';
import type { DeadManStatus } from '../../lib/background/deadman';
import { call, messageOf } from './api';

type GrantSummary = Grant & { used24h: string; uses24h: number };

export function Permissions() {
  const [grants, setGrants] = useState<GrantSummary[]>();
  const [error, setError] = useState<string>();
  const [dead, setDead] = useState<DeadManStatus>();
  const load = () => {
    void call('deadman.status', {}).then(setDead, () => undefined);
    return call('grant.list', {}).then(setGrants, (e) => setError(messageOf(e)));
  };
  useEffect(() => void load(), []);
  if (!grants) return null;
  return (
    <section aria-label="Standing permissions" data-testid="permissions">
      <h3>Standing permissions</h3>
      <ErrorText error={error} />
      {grants.length === 0 ? <p class="muted">No site may sign without asking.</p> : null}
      {dead?.venues.length ? (
        <ul class="muted small" data-testid="deadman">
          {dead.venues.map((v) => (
            <li key={`${v.venue}:${v.account}`} data-testid={`deadman-${v.venue}`}>
              {v.venue === 'perps'
                ? `Dead-man timer (perps) ${v.armed ? 'armed' : 'NOT armed — granted requests ask'}: orders cancel at ${v.perpsCancelAt ? new Date(v.perpsCancelAt).toLocaleTimeString() : '…'} unless renewed (${v.perpsCancelAt ? Math.max(0, Math.round((v.perpsCancelAt - Date.now()) / 1000)) : '…'} s left).`
                : `Dead-man timer (order book) ${v.armed ? 'armed' : 'NOT armed — granted requests ask'}: last heartbeat ${v.lastHeartbeat ? `${Math.round((Date.now() - v.lastHeartbeat) / 1000)} s ago` : 'not yet'}.`}
              {v.error ? ` Last renewal failed: ${v.error}` : ''}
            </li>
          ))}
        </ul>
      ) : null}
      <ul class="orders">
        {grants.map((g) => (
          <li key={g.id} data-testid="grant">
            <strong>{g.origin}</strong> · <span data-testid="grant-venue">{g.venue === 'perps' ? 'perps' : 'order book'}: {grantScope(g).map((m) => marketName(g, m)).join(', ')}</span> · {Math.max(0, Math.round((g.expiresAt - Date.now()) / 60_000))} min left · used {g.used24h} USDC in {g.uses24h} request(s)
            <ul class="muted small">{describeGrant(g).map((l) => <li key={l}>{l}</li>)}</ul>
            <Button kind="danger" onClick={() => void call('grant.revoke', { id: g.id }).then(load, (e) => setError(messageOf(e)))} aria-label={`Revoke the permission of ${g.origin}`}>Revoke</Button>
          </li>
        ))}
      </ul>
    </section>
  );
}
