/**
 * The approval queue view: "Loading…", "Nothing is waiting", or the oldest pending request (with how
 * many more wait) with Approve / Reject, the error, and — when the request may become a standing grant —
 * "Allow this site within limits…" and then the grant form. Presentational: the queue's state comes in
 * as props (from the approval store), decisions go out as events. Used by the approval window and by
 * the popup while approvals are pending.
 */
import { ApprovalView, type ApprovalViewData } from './ApprovalView';
import { ErrorText, Notice } from './ui';
import { GrantForm, type GrantFormLimits } from './GrantForm';
import type { GrantOffer } from '../lib/grants/offer';

/** Props: `queue` undefined while loading; `armed` false until the window has had focus for 1 s. */
export type ApprovalQueueProps = {
  queue: readonly ApprovalViewData[] | undefined;
  armed: boolean;
  busy: boolean;
  error: string | undefined;
  /** The clock (Unix ms) of the expiry countdown. */
  now: number;
  /** The grant offer being filled in, if the person asked for one. */
  granting: GrantOffer | undefined;
  /** The notice after a grant was saved. */
  granted: string | undefined;
  onApprove: () => void;
  onReject: () => void;
  onOffer: () => void;
  onGrant: (limits: GrantFormLimits, minutes: number) => void;
};

/** The queue's `<main>`. */
export function ApprovalQueue(props: ApprovalQueueProps) {
  const head = props.queue?.[0];
  if (!props.queue) return <main class="panel">Loading…</main>;
  if (!head)
    return (
      <main class="panel">
        <Notice>Nothing is waiting for your approval.</Notice>
      </main>
    );
  return (
    <main class="panel">
      <ApprovalView
        view={head}
        armed={props.armed}
        busy={props.busy}
        queueLength={props.queue.length}
        now={props.now}
        onApprove={props.onApprove}
        onReject={props.onReject}
      />
      <ErrorText error={props.error} />
      {props.granted ? <Notice>{props.granted}</Notice> : null}
      {head.grantable && !props.granted ? (
        props.granting ? (
          <GrantForm offer={props.granting} onSubmit={props.onGrant} />
        ) : (
          <button type="button" class="link" onClick={props.onOffer}>
            Allow this site within limits…
          </button>
        )
      ) : null}
    </main>
  );
}
