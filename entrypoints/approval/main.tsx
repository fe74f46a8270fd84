/** The approval window: the approval queue (shared with the popup), reporting which request it shows. */
import { render } from 'preact';
import browser from 'webextension-polyfill';
import { createCaller } from '../../lib/messaging/client';
import { ApprovalQueueScreen } from '../popup/approvals';
import '../popup/style.css';

const call = createCaller((m) => browser.runtime.sendMessage(m));
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
if (root) render(<ApprovalQueueScreen call={call} onEmpty={onEmpty} reportShown />, root);
