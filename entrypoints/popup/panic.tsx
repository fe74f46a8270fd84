/**
 * The panic switch in the popup (issue #11 §2): one confirmation (with "also close positions"), then
 * the background cancels everything at both venues, revokes every standing permission, rejects what is
 * pending and locks; the report says what was cancelled per venue and what failed.
 */
import { useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import { call, messageOf } from './api';

type Step = { ok: true; detail: string } | { ok: false; error: string } | { skipped: string };
export type PanicReport = { perps: Step; clob: Step; positions: Step; grants: number; pending: number; locked: boolean };

const line = (s: Step) => ('skipped' in s ? `skipped (${s.skipped})` : s.ok ? `done: ${s.detail}` : `FAILED: ${s.error}`);

export function PanicConfirm({ onCancel, onDone }: { onCancel: () => void; onDone: (r: PanicReport) => void }) {
  const [close, setClose] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const go = async () => {
    setBusy(true);
    try {
      onDone(await call<'panic.run', PanicReport>('panic.run', { closePositions: close }));
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <section class="panel panic" role="alertdialog" aria-label="Panic switch">
      <h2>Stop everything?</h2>
      <p>This cancels every open order at the perps venue and the order book, revokes every standing permission, rejects every pending request and locks Countersign.</p>
      <label class="check"><input type="checkbox" name="close-positions" checked={close} onChange={(e) => setClose(e.currentTarget.checked)} /> Also close every perps position (reduce-only market orders)</label>
      <ErrorText error={error} />
      <div class="actions">
        <Button onClick={onCancel} disabled={busy}>Back</Button>
        <Button kind="danger" onClick={() => void go()} disabled={busy} data-testid="panic-confirm">{busy ? 'Stopping…' : 'Stop everything'}</Button>
      </div>
    </section>
  );
}

export function PanicReportView({ report, onDismiss }: { report: PanicReport; onDismiss: () => void }) {
  return (
    <section class="panel panic" role="status" aria-label="Panic report" data-testid="panic-report">
      <h2>Stopped</h2>
      <dl class="kv">
        <dt>Perps orders</dt><dd>{line(report.perps)}</dd>
        <dt>Order-book orders</dt><dd>{line(report.clob)}</dd>
        <dt>Positions</dt><dd>{line(report.positions)}</dd>
        <dt>Permissions revoked</dt><dd>{report.grants}</dd>
        <dt>Requests rejected</dt><dd>{report.pending}</dd>
        <dt>Locked</dt><dd>{report.locked ? 'yes' : 'no'}</dd>
      </dl>
      <Button kind="primary" onClick={onDismiss}>OK</Button>
    </section>
  );
}
