/**
 * The popup's boot script (issue #19, popup open → ticket interactive): an `async` classic script
 * `popup.html` loads in its head, so it runs while the popup's module graph is still being fetched,
 * compiled and evaluated.
 * It only begins the start hint's `storage.session` read, which the popup then takes instead of
 * starting its own (`lib/messaging/start-hint-keys.ts`).
 */
import { defineUnlistedScript } from 'wxt/utils/define-unlisted-script';
import { beginEarlyRead } from '../lib/messaging/start-hint-keys';

export default defineUnlistedScript(() => beginEarlyRead());
