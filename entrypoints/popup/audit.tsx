/**
 * The audit log (issue #11 §4): every signature and security action — time, origin or "extension",
 * what in plain words, key kind, digest, the gateway's answer — filterable by origin and kind, exported
 * as CSV or JSON. The hash chain is verified on every read; a removed or edited entry is reported.
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, ErrorText, Field, Notice } from '../../components/ui';
import { call, messageOf } from './api';

type Entry = { id: number; at: number; origin: string; account: string; kind: string; summary: string; digest?: string; result: string; detail?: string };
type Verification = { ok: boolean; count: number; brokenAt?: number; reason?: string };
const KINDS = [
  ['', 'everything'],
  ['perps', 'perps'],
  ['clob', 'order book'],
  ['grant', 'permissions'],
  ['panic', 'panic'],
  ['account', 'accounts'],
] as const;

export function AuditView() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [origins, setOrigins] = useState<string[]>([]);
  const [origin, setOrigin] = useState('');
  const [kind, setKind] = useState('');
  const [check, setCheck] = useState<Verification>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    void call<'audit.list', Entry[]>('audit.list', { limit: 500 }).then((all) => setOrigins([...new Set(all.map((e) => e.origin))]), () => undefined);
    void call<'audit.verify', Verification>('audit.verify', {}).then(setCheck, (e) => setError(messageOf(e)));
  }, []);
  useEffect(() => {
    void call<'audit.list', Entry[]>('audit.list', { limit: 200, ...(origin ? { origin } : {}), ...(kind ? { kind } : {}) }).then(setEntries, (e) => setError(messageOf(e)));
  }, [origin, kind]);
  const exportAs = async (format: 'csv' | 'json') => {
    try {
      const { text } = await call<'audit.export', { text: string }>('audit.export', { format });
      const url = URL.createObjectURL(new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `countersign-audit-${new Date().toISOString().slice(0, 10)}.${format}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <section class="panel audit" aria-label="Audit log">
      {check ? (
        check.ok ? (
          <Notice>Chain verified: {check.count} entries, none removed or changed.</Notice>
        ) : (
          <p class="error" role="alert" data-testid="audit-broken">⚠ The audit log was tampered with at entry #{check.brokenAt}: {check.reason}.</p>
        )
      ) : null}
      <ErrorText error={error} />
      <div class="grid3">
        <Field label="Origin">
          <select name="audit-origin" value={origin} onChange={(e) => setOrigin(e.currentTarget.value)}>
            <option value="">all</option>
            {origins.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
        </Field>
        <Field label="Kind">
          <select name="audit-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            {KINDS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        </Field>
        <div class="actions">
          <Button onClick={() => void exportAs('csv')}>CSV</Button>
          <Button onClick={() => void exportAs('json')}>JSON</Button>
        </div>
      </div>
      <ul class="orders small" data-testid="audit-entries">
        {entries.map((e) => (
          <li key={e.id}>
            <span class="num muted">{new Date(e.at).toISOString().slice(5, 19).replace('T', ' ')}</span> · <strong>{e.origin}</strong> · {e.summary}
            <span class="muted"> · {e.kind} · {e.result}{e.digest ? ` · ${e.digest.slice(0, 10)}…` : ''}{e.detail ? ` · ${e.detail}` : ''}</span>
          </li>
        ))}
      </ul>
      {entries.length === 0 ? <p class="muted">No entries.</p> : null}
    </section>
  );
}
