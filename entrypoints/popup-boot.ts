/**
 * The popup's boot script (popup open): an `async` classic script `popup.html` loads in its
 * head, so it runs while the popup's module graph is still being fetched, compiled and evaluated.
 * It starts a stopped background (`wakeBackground`), begins the start hint's `storage.session` read and, once read, the
 * ticket's first `streams.watch`; the popup takes both instead of asking again (`lib/messaging/early-reads.ts`).
 */
import { defineUnlistedScript } from 'wxt/utils/define-unlisted-script';
import { beginEarlyRead, beginEarlyWatch, wakeBackground } from '../lib/messaging/early-reads';

export default defineUnlistedScript(() => {
  wakeBackground(); // a stopped worker starts while the hint is read
  beginEarlyWatch(beginEarlyRead());
});
