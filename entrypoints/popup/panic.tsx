/**
 * The panic switch in the popup: one confirmation (with "also close positions"), then the background
 * stops every signature, revokes every standing permission, rejects what is pending, cancels at both
 * venues for every account in Countersign, in parallel, and locks — within `panicBoundMs()` (25 s at
 * most). The report says per account and venue, in plain words, what was cancelled, what failed, and for
 * a venue that was not cancelled which kill switch will cancel its orders and when.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Button, ErrorText } from '../../components/ui';
import type { PanicAccountReport, PanicReport, PanicStep } from '../../lib/background/panic';
import { panicBoundMs } from '../../lib/background/panic-timing';
import { shortAddress } from '../../lib/format';
import { call, messageOf } from './api';

export type { PanicReport };

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.');
/** One venue's outcome in plain words. */
const line = (s: PanicStep) =>
  'skipped' in s
    ? `Nothing to do (${s.skipped}).`
    : s.ok
      ? sentence(s.detail)
      : 'noAnswer' in s
        ? sentence(s.error)
        : `Failed: ${sentence(s.error)}`;
const tone = (s: PanicStep) => ('skipped' in s || s.ok ? undefined : 'error');
/** When a kill switch that will cancel fires (or has been due since), in local time (`firesAt` Unix ms), or nothing. */
function firesAt(s: PanicStep): string {
  if (!('firesAt' in s) || s.firesAt === undefined || s.killSwitch === 'none') return '';
  const at = new Date(s.firesAt).toLocaleTimeString();
  return s.cancelWithinS === 0 ? ` (due since ${at})` : ` (fires at ${at})`;
}
const BOUND_S = Math.ceil(panicBoundMs() / 1000);

/** The confirmation (with "also close positions"); `onDone` receives the background's report. */
export function PanicConfirm({ onCancel, onDone }: { onCancel: () => void; onDone: (r: PanicReport) => void }) {
  const [close, setClose] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const dialog = useRef<HTMLElement>(null);
  // The dialog takes focus (on its safe choice, Back) and Escape closes it.
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
    <section
      ref={dialog}
      class="panel panic"
      role="alertdialog"
      aria-modal="true"
      aria-labelledby="panic-title"
      aria-describedby="panic-what"
    >
      <h2 id="panic-title">Stop everything?</h2>
      <p id="panic-what">
        This stops every signature at once, revokes every standing permission, rejects every pending request, cancels
        every open order at the perps venue and the order book for every account in Countersign, and locks Countersign.
        It takes at most {BOUND_S} s. A venue that does not answer is left to its kill switch, and the report says when
        it will cancel.
      </p>
      <label class="check">
        <input
          type="checkbox"
          name="close-positions"
          checked={close}
          onChange={(e) => setClose(e.currentTarget.checked)}
        />{' '}
        Also close every perps position (reduce-only market orders)
      </label>
      <ErrorText error={error} />
      <div class="actions">
        <Button onClick={onCancel} disabled={busy} data-autofocus>
          Back
        </Button>
        <Button kind="danger" onClick={() => void go()} disabled={busy} data-testid="panic-confirm">
          {busy ? `Stopping… (at most ${BOUND_S} s)` : 'Stop everything'}
        </Button>
      </div>
    </section>
  );
}

/**
 * One account's lines: each venue's cancels (with the kill switch of a venue not cancelled) and, when asked, its
 * closes.
 */
function AccountLines({ a, many }: { a: PanicAccountReport; many: boolean }) {
  const asked = !('skipped' in a.positions && a.positions.skipped === 'not asked');
  return (
    <section
      class="panic-account"
      data-testid="panic-account"
      data-account={a.account.toLowerCase()}
      aria-label={`Account ${a.label || a.account}`}
    >
      {many ? (
        <h3 class="small">
          {a.label ? (
            <>
              {a.label} <span class="muted">{shortAddress(a.account)}</span>
            </>
          ) : (
            shortAddress(a.account)
          )}
          {a.active ? <span class="muted"> · active</span> : null}
        </h3>
      ) : null}
      <dl class="kv panic-report">
        <dt>Perps orders</dt>
        <dd class={tone(a.perps)} data-testid="panic-perps">
          {line(a.perps)}
          {firesAt(a.perps)}
        </dd>
        <dt>Order-book orders</dt>
        <dd class={tone(a.clob)} data-testid="panic-clob">
          {line(a.clob)}
          {firesAt(a.clob)}
        </dd>
        {asked ? (
          <>
            <dt>Positions</dt>
            <dd class={tone(a.positions)} data-testid="panic-positions">
              {line(a.positions)}
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

/**
 * The report per account and venue in plain words, what was revoked and rejected, and whether Countersign is locked.
 */
export function PanicReportView({ report, onDismiss }: { report: PanicReport; onDismiss: () => void }) {
  const many = report.accounts.length > 1;
  return (
    <section class="panel panic" role="status" aria-label="Panic report" data-testid="panic-report">
      <h2 data-testid="panic-outcome">{report.ok ? 'Stopped' : 'Stopped — read what needs checking'}</h2>
      {report.accounts.length ? (
        report.accounts.map((a) => <AccountLines key={a.account} a={a} many={many} />)
      ) : (
        <p class="muted small">No account in Countersign: nothing to cancel.</p>
      )}
      <dl class="kv panic-report panic-summary">
        <dt>Permissions revoked</dt>
        <dd>{report.grants}</dd>
        <dt>Requests rejected</dt>
        <dd>{report.pending}</dd>
        <dt>Locked</dt>
        <dd class={report.locked ? undefined : 'error'} data-testid="panic-locked">
          {report.locked ? 'Yes' : 'No — lock Countersign now'}
        </dd>
      </dl>
      {report.problems.length ? (
        <ul class="panic-problems" aria-label="Problems">
          {report.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : null}
      <Button kind="primary" onClick={onDismiss}>
        OK
      </Button>
    </section>
  );
}
