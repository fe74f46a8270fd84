/**
 * The panic switch in the popup (issue #11 §2; issue #17 "Panic is total and bounded"): one
 * confirmation (with "also close positions"), then the background stops every signature, revokes every
 * standing permission, rejects what is pending, cancels at both venues in parallel and locks — within
 * `panicBoundMs()` (25 s at most). The report says per venue, in plain words, what was cancelled, what
 * failed, and for a venue that did not answer which kill switch will cancel its orders and when.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import type { PanicReport, PanicStep } from '../../lib/background/panic';
import { panicBoundMs } from '../../lib/background/panic-timing';
import { call, messageOf } from './api';

export type { PanicReport };

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.');
/** One venue's outcome in plain words. */
const line = (s: PanicStep) => ('skipped' in s ? `Nothing to do (${s.skipped}).` : s.ok ? sentence(s.detail) : 'noAnswer' in s ? sentence(s.error) : `Failed: ${sentence(s.error)}`);
const tone = (s: PanicStep) => ('skipped' in s || s.ok ? undefined : 'error');
const BOUND_S = Math.ceil(panicBoundMs() / 1000);

/** The confirmation (with "also close positions"); `onDone` receives the background's report. */
export function PanicConfirm({ onCancel, onDone }: { onCancel: () => void; onDone: (r: PanicReport) => void }) {
  const [close, setClose] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const dialog = useRef<HTMLElement>(null);
  // The dialog takes focus (on its safe choice, Back) and Escape closes it (issue #19).
  useEffect(() => dialog.current?.querySelector<HTMLElement>('[data-autofocus]')?.focus(), []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || busy) return;
      e.preventDefault();
      onCancel();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [busy, onCancel]);
  const go = async () => {
    setBusy(true);
    try {
      onDone(await call('panic.run', { closePositions: close }));
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <section ref={dialog} class="panel panic" role="alertdialog" aria-modal="true" aria-labelledby="panic-title" aria-describedby="panic-what">
      <h2 id="panic-title">Stop everything?</h2>
      <p id="panic-what">This stops every signature at once, revokes every standing permission, rejects every pending request, cancels every open order at the perps venue and the order book, and locks Countersign. It takes at most {BOUND_S} s. A venue that does not answer is left to its kill switch, and the report says when it will cancel.</p>
      <label class="check"><input type="checkbox" name="close-positions" checked={close} onChange={(e) => setClose(e.currentTarget.checked)} /> Also close every perps position (reduce-only market orders)</label>
      <ErrorText error={error} />
      <div class="actions">
        <Button onClick={onCancel} disabled={busy} data-autofocus>Back</Button>
        <Button kind="danger" onClick={() => void go()} disabled={busy} data-testid="panic-confirm">{busy ? `Stopping… (at most ${BOUND_S} s)` : 'Stop everything'}</Button>
      </div>
    </section>
  );
}

/** The report per venue in plain words, what was revoked and rejected, and whether Countersign is locked. */
export function PanicReportView({ report, onDismiss }: { report: PanicReport; onDismiss: () => void }) {
  const clean = [report.perps, report.clob, report.positions].every((s) => 'skipped' in s || s.ok) && report.problems.length === 0;
  return (
    <section class="panel panic" role="status" aria-label="Panic report" data-testid="panic-report">
      <h2>{clean ? 'Stopped' : 'Stopped — read what needs checking'}</h2>
      <dl class="kv panic-report">
        <dt>Perps orders</dt><dd class={tone(report.perps)} data-testid="panic-perps">{line(report.perps)}</dd>
        <dt>Order-book orders</dt><dd class={tone(report.clob)} data-testid="panic-clob">{line(report.clob)}</dd>
        <dt>Positions</dt><dd class={tone(report.positions)}>{line(report.positions)}</dd>
        <dt>Permissions revoked</dt><dd>{report.grants}</dd>
        <dt>Requests rejected</dt><dd>{report.pending}</dd>
        <dt>Locked</dt><dd class={report.locked ? undefined : 'error'} data-testid="panic-locked">{report.locked ? 'Yes' : 'No — lock Countersign now'}</dd>
      </dl>
      {report.problems.length ? (
        <ul class="panic-problems" aria-label="Problems">
          {report.problems.map((p) => <li key={p}>{p}</li>)}
        </ul>
      ) : null}
      <Button kind="primary" onClick={onDismiss}>OK</Button>
    </section>
  );
}
