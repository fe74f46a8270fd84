/**
 * Which kind of build this is (`wxt.config.ts`): a release build (`WXT_COUNTERSIGN_RELEASE=1`, what
 * `npm run release` ships) or a development / test build (`wxt`, `wxt build`, vitest).
 *
 * - Development and test builds: the sandbox is the default venue and loopback is a host permission
 *   granted at install (`host_permissions`), so nothing asks for it.
 * - Release builds: no loopback host permission, not even optional, and no venue until the person chooses
 *   one at first run (`entrypoints/popup/venue-step.tsx`): a release sends nothing in clear
 *   (`lib/http/transport.ts`), so it never talks to the local sandbox.
 */

/** True in a release build; false in development and test builds (and in unit tests). */
export const RELEASE_BUILD: boolean = import.meta.env?.WXT_COUNTERSIGN_RELEASE === '1';

/** Whether loopback (`http://127.0.0.1/*`, `http://localhost/*`) is granted at install: not in a release. */
export const LOOPBACK_AT_INSTALL: boolean = !RELEASE_BUILD;
