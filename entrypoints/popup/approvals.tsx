/**
 * The approval queue wired to its store (`stores/approvals.ts`): used by the approval window
 * (`reportShown`) and by the popup while approvals are pending.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { ApprovalQueue } from '../../components/ApprovalQueue';
import { createApprovalStore } from './stores/approvals';
import type { Call } from './stores/perps';

/** Creates the store once, starts it while shown, and renders the presentational queue. */
export function ApprovalQueueScreen({ call, onEmpty, reportShown = false }: { call: Call; onEmpty: () => void; reportShown?: boolean }) {
  const s = useMemo(() => createApprovalStore({ call, onEmpty, reportShown }), []);
  useEffect(() => s.start(), [s]);
  return (
    <ApprovalQueue
      queue={s.queue.value} armed={s.armed.value} busy={s.busy.value} error={s.error.value} now={s.now.value} granting={s.granting.value} granted={s.granted.value}
      onApprove={() => void s.decide(true)} onReject={() => void s.decide(false)} onOffer={() => void s.offer()} onGrant={(l, m) => void s.grant(l, m)}
    />
  );
}
