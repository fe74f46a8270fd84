/**
 * The audit log (issue #11 §4, #17): every signature and security action — time, origin or
 * "extension", what in plain words, kind, digest, the gateway's answer — filterable by origin and kind,
 * exported as CSV or JSON. The log is keyed with the vault's audit key: opening the tab checks the
 * entries added since the last check (and the log's start, end and count); "Check everything" runs a
 * full check in the background with a progress bar. Entries load a page at a time (newest first);
 * exports are assembled here from pages, so neither side ever holds more than a page of the log.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AuditCheck, AuditEntryStatus, AuditEntryView } from '../../lib/audit';
import { Button, ErrorText, Field, Notice, ProgressBar } from '../../components/ui';
import { call, messageOf } from './api';

const PAGE = 50;
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
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function CheckBanner({ check }: { check: AuditCheck }) {
  if (check.state === 'checking' && check.progress) {
    const { done, total, full } = check.progress;
    return <ProgressBar value={done} max={total} label={`${full ? 'Checking every entry' : 'Checking new entries'}: ${done.toLocaleString()} of ${total.toLocaleString()}`} />;
  }
  if (check.state === 'locked') return <Notice>Unlock to check the audit log.</Notice>;
  if (!check.ok) {
    return (
      <p class="error" role="alert" data-testid="audit-broken">
        ⚠ The audit log was tampered with{check.brokenAt === undefined ? '' : ` at entry #${check.brokenAt}`}: {check.reason}.
      </p>
    );
  }
  const seal = check.seals[check.seals.length - 1];
  return (
    <>
      <Notice>
        Chain verified: {check.count.toLocaleString()} entries, none removed or changed ({check.checked.toLocaleString()} new checked{check.since ? `; sealed since ${day(check.since)}` : ''}).
      </Notice>
      {check.unauthenticated > 0 && seal ? (
        <p class="warn" role="status">
          {check.unauthenticated.toLocaleString()} older {check.unauthenticated === 1 ? 'entry is' : 'entries are'} kept but not authenticated (
          {seal.reason === 'restore' ? 'sealed by the vault before a restore from backup' : 'recorded before the log was keyed'}).
        </p>
      ) : null}
    </>
  );
}

export function AuditView() {
  const [entries, setEntries] = useState<AuditEntryView[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [origins, setOrigins] = useState<string[]>([]);
  const [origin, setOrigin] = useState('');
  const [kind, setKind] = useState('');
  const [check, setCheck] = useState<AuditCheck>();
  const [error, setError] = useState<string>();
  const [exporting, setExporting] = useState<string>();
  const poll = useRef<ReturnType<typeof setTimeout>>();

  const runCheck = (full: boolean) => {
    clearTimeout(poll.current);
    const step = (first: boolean) =>
      void call<'audit.verify', AuditCheck>('audit.verify', first && full ? { full: true } : {}).then((r) => {
        setCheck(r);
        if (r.state === 'checking') poll.current = setTimeout(() => step(false), 400);
      }, (e) => setError(messageOf(e)));
    step(true);
  };
  useEffect(() => {
    void call<'audit.origins', string[]>('audit.origins', {}).then(setOrigins, () => undefined);
    runCheck(false);
    return () => clearTimeout(poll.current);
  }, []);

  const load = async (before: number | undefined) => {
    try {
      const page = await call<'audit.list', AuditEntryView[]>('audit.list', { limit: PAGE, ...(origin ? { origin } : {}), ...(kind ? { kind } : {}), ...(before === undefined ? {} : { before }) });
      setEntries((old) => (before === undefined ? page : [...old, ...page]));
      setNext(page.length === PAGE ? page[page.length - 1]!.id : null);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => {
    void load(undefined);
  }, [origin, kind]);

  const exportAs = async (format: 'csv' | 'json') => {
    const parts: string[] = [];
    let after: number | undefined;
    try {
      for (let n = 0; ; n++) {
        const page = await call<'audit.export', { text: string; next: number | null }>('audit.export', { format, ...(after === undefined ? {} : { after }) });
        if (format === 'csv') parts.push(n ? `\r\n${page.text}` : page.text);
        else {
          const inner = page.text.trim().slice(1, -1).trim();
          if (inner) parts.push(parts.length ? `,\n${inner}` : inner);
        }
        setExporting(`Exporting… page ${n + 1}`);
        if (page.next === null || (format === 'csv' && !page.text)) break;
        after = page.next;
      }
      const body = format === 'csv' ? parts : ['[\n', ...parts, '\n]'];
      const url = URL.createObjectURL(new Blob(body, { type: format === 'csv' ? 'text/csv' : 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `countersign-audit-${new Date().toISOString().slice(0, 10)}.${format}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setExporting(undefined);
    }
  };

  return (
    <section class="panel audit" aria-label="Audit log">
      {check ? <CheckBanner check={check} /> : null}
      <div class="actions">
        <Button onClick={() => runCheck(true)} disabled={check?.state === 'checking'}>Check everything</Button>
      </div>
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
          <Button onClick={() => void exportAs('csv')} disabled={!!exporting}>CSV</Button>
          <Button onClick={() => void exportAs('json')} disabled={!!exporting}>JSON</Button>
        </div>
      </div>
      {exporting ? <p class="muted small" role="status">{exporting}</p> : null}
      <ul class="orders small" data-testid="audit-entries">
        {entries.map((e) => (
          <li key={e.id} data-status={e.status}>
            <span class="num muted">{new Date(e.at).toISOString().slice(5, 19).replace('T', ' ')}</span> · <strong>{e.origin}</strong> · {e.summary}
            <span class="muted"> · {e.kind} · {e.result}{e.digest ? ` · ${e.digest.slice(0, 10)}…` : ''}{e.detail ? ` · ${e.detail}` : ''}</span>
            {e.status === 'ok' ? null : <span class={e.status === 'changed' ? 'tag error' : 'tag'}> {STATUS_TEXT[e.status]}</span>}
          </li>
        ))}
      </ul>
      {entries.length === 0 ? <p class="muted">No entries.</p> : null}
      {next !== null ? <Button onClick={() => void load(next)}>Older entries</Button> : null}
    </section>
  );
}
