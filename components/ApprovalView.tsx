/**
 * What a person approves: the requesting origin (prominent), the request in plain words, the signing
 * key, risk flags, the digest that will be signed, and Approve / Reject. `armed` is false until the
 * window has had focus for 1 s (and again after any blur), so a click-jacked or hurried click does
 * nothing. Presentational: used by the approval window and by the popup's approval queue.
 */
import { Button } from './ui';

export type ApprovalViewData = {
  id: string;
  origin: string;
  kind: string;
  title: string;
  lines: string[];
  flags: string[];
  signer: string | null;
  digest: string;
  expiresAt: number;
};

export function ApprovalView(props: { view: ApprovalViewData; armed: boolean; busy?: boolean; queueLength: number; now: number; onApprove: () => void; onReject: () => void }) {
  const { view } = props;
  const left = Math.max(0, Math.ceil((view.expiresAt - props.now) / 1000));
  return (
    <section class="approval" aria-label="Approval request">
      <p class="origin" data-testid="approval-origin">{view.origin}</p>
      <p class="muted small">asks you to</p>
      <h2>{view.title}</h2>
      <ul class="lines" data-testid="approval-lines">
        {view.lines.map((l) => <li key={l}>{l}</li>)}
      </ul>
      {view.signer ? <p class="muted">Signed with your <strong>{view.signer}</strong>.</p> : null}
      {view.flags.length ? (
        <ul class="flags" role="alert">
          {view.flags.map((f) => <li key={f}>⚠ {f}</li>)}
        </ul>
      ) : null}
      <p class="muted small digest" title={view.digest}>Digest {view.digest.slice(0, 10)}…{view.digest.slice(-8)} · expires in {left} s{props.queueLength > 1 ? ` · ${props.queueLength - 1} more waiting` : ''}</p>
      <div class="actions">
        <Button kind="danger" onClick={props.onReject} disabled={props.busy}>Reject</Button>
        <Button kind="primary" onClick={props.onApprove} disabled={!props.armed || props.busy} data-testid="approve" title={props.armed ? 'Approve' : 'Focus this window to arm the button'}>
          Approve
        </Button>
      </div>
    </section>
  );
}
