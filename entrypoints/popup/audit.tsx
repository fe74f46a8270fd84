/**
 * The audit log: every signature and security action — time, origin or
 * "extension", what in plain words, kind, digest, the gateway's answer — filterable by origin and kind,
 * exported as CSV or JSON. The log is keyed with the vault's audit key: opening the tab shows the
 * newest page first, then checks the entries added since the last check and the log's start and end;
 * "Check everything" runs a full check (every entry, and the sealed count) in the background with a
 * progress bar. Entries load a page at a time (newest first);
 * exports are assembled from pages (`stores/audit.ts`), so neither side ever holds more than a page.
 */
import { useEffect, useMemo } from 'preact/hooks';
import type { AuditEntryStatus } from '../../lib/audit';
import { Button, ErrorText, Field } from '../../components/ui';
import { CheckBanner } from '../../components/AuditCheckBanner';
import { createAuditStore } from './stores/audit';

const KINDS = [
  ['', 'everything'],
  ['perps', 'perps'],
  ['clob', 'order book'],
  ['grant', 'permissions'],
  ['deadman', 'dead-man'],
  ['panic', 'panic'],
  ['account', 'accounts'],
  ['audit', 'log seals'],
] as const;
/** What a person reads next to an entry that is not plainly sealed. */
const STATUS_TEXT: Record<Exclude<AuditEntryStatus, 'ok'>, string> = {
  locked: 'recorded while locked — not authenticated',
  pending: 'recorded while locked — sealed at the next unlock',
  unauthenticated: 'from before the current seal — not authenticated',
  changed: '⚠ changed or forged',
  unchecked: 'not checked',
};

/** Downloads `parts` as a file named after today's date. */
function download(format: 'csv' | 'json', parts: string[]): void {
  const url = URL.createObjectURL(new Blob(parts, { type: format === 'csv' ? 'text/csv' : 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `countersign-audit-${new Date().toISOString().slice(0, 10)}.${format}`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The Audit tab. */
export function AuditView() {
  const s = useMemo(() => createAuditStore(), []);
  useEffect(() => s.start(), [s]);
  const check = s.check.value;
  const exporting = s.exporting.value;
  const older = s.next.value;
  const exportAs = async (format: 'csv' | 'json') => {
    const parts = await s.exportAll(format);
    if (parts) download(format, parts);
  };
  return (
    <section class="panel audit" aria-label="Audit log">
      {check ? <CheckBanner check={check} /> : null}
      <div class="actions">
        <Button onClick={() => s.runCheck(true)} disabled={check?.state === 'checking'}>
          Check everything
        </Button>
      </div>
      <ErrorText error={s.error.value} />
      <div class="grid3">
        <Field label="Origin">
          <select
            name="audit-origin"
            value={s.origin.value}
            onChange={(e) => void s.filter({ origin: e.currentTarget.value })}
          >
            <option value="">all</option>
            {s.origins.value.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Kind">
          <select
            name="audit-kind"
            value={s.kind.value}
            onChange={(e) => void s.filter({ kind: e.currentTarget.value })}
          >
            {KINDS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </Field>
        <div class="actions">
          <Button onClick={() => void exportAs('csv')} disabled={!!exporting}>
            CSV
          </Button>
          <Button onClick={() => void exportAs('json')} disabled={!!exporting}>
            JSON
          </Button>
        </div>
      </div>
      {exporting ? (
        <p class="muted small" role="status">
          {exporting}
        </p>
      ) : null}
      <ul class="orders small" data-testid="audit-entries">
        {s.entries.value.map((e) => (
          <li key={e.id} data-status={e.status}>
            <span class="num muted">{new Date(e.at).toISOString().slice(5, 19).replace('T', ' ')}</span> ·{' '}
            <strong>{e.origin}</strong> · {e.summary}
            <span class="muted">
              {' '}
              · {e.kind} · {e.result}
              {e.digest ? ` · ${e.digest.slice(0, 10)}…` : ''}
              {e.detail ? ` · ${e.detail}` : ''}
            </span>
            {e.status === 'ok' ? null : (
              <span class={e.status === 'changed' ? 'tag error' : 'tag'}> {STATUS_TEXT[e.status]}</span>
            )}
          </li>
        ))}
      </ul>
      {s.entries.value.length === 0 ? <p class="muted">No entries.</p> : null}
      {older !== null ? <Button onClick={() => void s.load(older)}>Older entries</Button> : null}
    </section>
  );
}
