/**
 * The approval queue wired to its store (`stores/approvals.ts`): used by the approval window
 * (`reportShown`) and by the popup while approvals are pending.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { ApprovalQueue } from '../../components/ApprovalQueue';
import { createApprovalStore, type ApprovalStore } from './stores/approvals';
import type { Call } from './stores/perps';

/**
 * Creates the store once (or takes `store`, made and first loaded before the first render: the approval
 * window), starts it while shown, and renders the presentational queue.
 */
export function ApprovalQueueScreen({
  call,
  onEmpty,
  reportShown = false,
  store,
}: {
  call: Call;
  onEmpty: () => void;
  reportShown?: boolean;
  store?: ApprovalStore;
}) {
  const s = useMemo(() => store ?? createApprovalStore({ call, onEmpty, reportShown }), []);
  useEffect(() => s.start(), [s]);
  return (
    <ApprovalQueue
      queue={s.queue.value}
      armed={s.armed.value}
      busy={s.busy.value}
      error={s.error.value}
      now={s.now.value}
      granting={s.granting.value}
      granted={s.granted.value}
      onApprove={() => void s.decide(true)}
      onReject={() => void s.decide(false)}
      onOffer={() => void s.offer()}
      onGrant={(l, m) => void s.grant(l, m)}
    />
  );
}
