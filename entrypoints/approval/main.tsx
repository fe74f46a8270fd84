/**
 * The approval window: the unlock form while the vault is locked, then the approval queue (shared with the popup),
 * reporting which request it shows.
 */
import { render } from 'preact';
import browser from 'webextension-polyfill';
import { createCaller } from '../../lib/messaging/client';
import { earlyAnswers } from '../../lib/messaging/approval-early-reads';
import { ApprovalQueueScreen } from '../popup/approvals';
import { createApprovalStore } from '../popup/stores/approvals';
import { lockedFrom, UnlockFirst } from './unlock-first';
import '../popup/style.css';

// The first `vault.status` and `approval.list` were asked by the boot script while this module loaded.
const call = createCaller(earlyAnswers((m) => browser.runtime.sendMessage(m)));
// When the queue is empty the background closes this window (forgetting it first, so a request that
// arrives now gets a new window), unless a request arrived meanwhile: then it stays and shows it.
const onEmpty = () =>
  void call('approval.empty', {}).then(
    (r) => {
      if (r.closed) window.close();
    },
    () => window.close(),
  );
const root = document.getElementById('app');
if (root) {
  render(<main class="panel">Loading…</main>, root);
  // The lock state and the queue are read before the request's first render (not each after a paint), so the
  // window shows the request as soon as its modules have run. A request made while the vault was locked: the unlock
  // form first, then the queue.
  const queue = createApprovalStore({ call, onEmpty, reportShown: true });
  const known = lockedFrom(call('vault.status', {}));
  void Promise.all([known, queue.load().catch(() => undefined)]).then(([locked]) =>
    render(
      <UnlockFirst call={call} onEmpty={onEmpty} known={locked}>
        <ApprovalQueueScreen call={call} onEmpty={onEmpty} reportShown store={queue} />
      </UnlockFirst>,
      root,
    ),
  );
}
