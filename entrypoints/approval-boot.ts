/**
 * The approval window's boot script: an `async` classic script `approval.html` loads in its head, so the
 * window's first questions (`vault.status`, `approval.list`) go to the background while its module
 * graph is still being fetched, compiled and evaluated (`lib/messaging/approval-early-reads.ts`).
 */
import { defineUnlistedScript } from 'wxt/utils/define-unlisted-script';
import { beginApprovalReads } from '../lib/messaging/approval-early-reads';

export default defineUnlistedScript(() => {
  beginApprovalReads();
});
