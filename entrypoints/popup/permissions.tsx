/**
 * Standing permissions (issue #11 §1): every live grant with its limits in plain words, what it used in
 * the last 24 h, the time left, and Revoke. Lock revokes them all; so does the panic switch.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import { describeGrant, type Grant } from '../../lib/grants/evaluate';
import { call, messageOf } from './api';

type GrantSummary = Grant & { used24h: string; uses24h: number };

export function Permissions() {
  const [grants, setGrants] = useState<GrantSummary[]>();
  const [error, setError] = useState<string>();
  const load = () => call<'grant.list', GrantSummary[]>('grant.list', {}).then(setGrants, (e) => setError(messageOf(e)));
  useEffect(() => void load(), []);
  if (!grants) return null;
  return (
    <section aria-label="Standing permissions" data-testid="permissions">
      <h3>Standing permissions</h3>
      <ErrorText error={error} />
      {grants.length === 0 ? <p class="muted">No site may sign without asking.</p> : null}
      <ul class="orders">
        {grants.map((g) => (
          <li key={g.id} data-testid="grant">
            <strong>{g.origin}</strong> · {Math.max(0, Math.round((g.expiresAt - Date.now()) / 60_000))} min left · used {g.used24h} USDC in {g.uses24h} request(s)
            <ul class="muted small">{describeGrant(g).map((l) => <li key={l}>{l}</li>)}</ul>
            <Button kind="danger" onClick={() => void call('grant.revoke', { id: g.id }).then(load, (e) => setError(messageOf(e)))} aria-label={`Revoke the permission of ${g.origin}`}>Revoke</Button>
          </li>
        ))}
      </ul>
    </section>
  );
}
