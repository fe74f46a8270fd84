/**
 * What a person approves: the requesting origin (prominent), the account it acts for, the request in
 * plain words (decoded from the artifact that will be signed), the signing key, risk flags, the binding
 * digest and the EIP-712 digests the key will sign, and Approve / Reject. `armed` is false until the
 * window has had focus for 1 s (and again after any blur), so a click-jacked or hurried click does
 * nothing. Presentational: used by the approval window and by the popup's approval queue.
 */
import { Button } from './ui';
import { shortAddress } from '../lib/format';

/**
 * A pending request as the view shows it (the `approval.list` answer with the artifact reduced to its
 * sign digests): origin, account, plain-words lines, risk flags, signer, binding digest, expiry (Unix ms).
 */
export type ApprovalViewData = {
  id: string;
  origin: string;
  kind: string;
  title: string;
  lines: string[];
  flags: string[];
  signer: string | null;
  digest: string;
  account: { address: string; label: string } | null;
  /** The artifact's EIP-712 digests (what the key signs), when it has any. */
  artifact?: { signDigests: readonly string[] };
  /** The window may offer a standing grant; `markets` are the request's instruments or tokens. */
  grantable?: boolean;
  markets?: string[];
  expiresAt: number;
};

const short = (h: string) => `${h.slice(0, 10)}…${h.slice(-8)}`;

/** The request with Approve (disabled until `armed`) and Reject; `now` (Unix ms) drives the expiry countdown. */
export function ApprovalView(props: { view: ApprovalViewData; armed: boolean; busy?: boolean; queueLength: number; now: number; onApprove: () => void; onReject: () => void }) {
  const { view } = props;
  const left = Math.max(0, Math.ceil((view.expiresAt - props.now) / 1000));
  return (
    <section class="approval" aria-label="Approval request">
      <p class="origin" data-testid="approval-origin">{view.origin}</p>
      <p class="muted small">asks you to</p>
      <h2>{view.title}</h2>
      {view.account ? (
        <p class="muted small" data-testid="approval-account">
          for account {view.account.label ? <strong>{view.account.label} </strong> : null}
          <code title={view.account.address}>{shortAddress(view.account.address)}</code>
        </p>
      ) : null}
      <ul class="lines" data-testid="approval-lines">
        {view.lines.map((l) => <li key={l}>{l}</li>)}
      </ul>
      {view.signer ? <p class="muted">Signed with your <strong>{view.signer}</strong>.</p> : null}
      {view.flags.length ? (
        <div role="alert">
          <ul class="flags">{view.flags.map((f) => <li key={f}>⚠ {f}</li>)}</ul>
        </div>
      ) : null}
      <p class="muted small digest" title={view.digest} data-testid="approval-digest">
        Digest {short(view.digest)} · expires in {left} s{props.queueLength > 1 ? ` · ${props.queueLength - 1} more waiting` : ''}
      </p>
      {view.artifact?.signDigests.length ? (
        <p class="muted small digest" data-testid="approval-sign-digests">Signs {view.artifact.signDigests.map(short).join(', ')}</p>
      ) : null}
      <div class="actions">
        <Button kind="danger" onClick={props.onReject} disabled={props.busy}>Reject</Button>
        <Button kind="primary" onClick={props.onApprove} disabled={!props.armed || props.busy} data-testid="approve" title={props.armed ? 'Approve' : 'Focus this window to arm the button'}>
          Approve
        </Button>
      </div>
    </section>
  );
}
