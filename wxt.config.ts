import { defineConfig } from 'wxt';
import preact from '@preact/preset-vite';

/**
 * WXT build configuration (MV3 for Chrome, MV3 for Firefox).
 * `lib/sandbox/` and `lib/release/` are Node-only and must never be imported by an entrypoint.
 *
 * Two kinds of build:
 * - development and test builds (`wxt`, `wxt build`): the local sandbox is the default venue and
 *   loopback (`http://127.0.0.1/*`, `http://localhost/*`) is a host permission granted at install, so
 *   the browser tests and `npm start` need no permission prompt;
 * - release builds (`WXT_COUNTERSIGN_RELEASE=1`, set by `npm run release` and `npm run build:firefox`;
 *   read in code by `lib/settings/build-mode.ts`; output in `.output/<browser>-mv3-release/`): no loopback
 *   host permission and no sandbox default. The person chooses the venue at first run and the browser is asked
 *   then for exactly that venue's hosts (`optional_host_permissions`: https only; a release sends nothing in clear).
 */
/**
 * Whether this is a release build. An environment flag rather than a WXT `--mode`: a mode other than
 * `production` makes Vite compile JSX in development form, with each file's absolute path in the bundle
 * (a build that differs by checkout directory) and Preact's devtools hooks.
 */
const RELEASE = process.env.WXT_COUNTERSIGN_RELEASE === '1';
// A release is a production build whatever NODE_ENV the caller had (vitest sets `test`; WXT keeps a set
// one): Vite reads it after this file loads, for the JSX form and `process.env.NODE_ENV` in libraries.
if (RELEASE) process.env.NODE_ENV = 'production';

export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  publicDir: 'public',
  imports: false,
  outDirTemplate: RELEASE
    ? '{{browser}}-mv{{manifestVersion}}-release'
    : '{{browser}}-mv{{manifestVersion}}{{modeSuffix}}',
  // The site client's package name, for the site developers' examples (lib/dapp/examples/), which import it as a
  // site does; no entrypoint imports it.
  alias: { '@countersign/site-client': 'lib/dapp/index.ts' },
  vite: () => ({ plugins: [preact()] }),
  // `npm run release` writes the sources zip itself (lib/release/archive.ts: tracked files plus the build
  // instructions); WXT zips only the built extension, with fixed timestamps and sorted entries.
  zip: { zipSources: false, artifactTemplate: '{{name}}-{{packageVersion}}-{{browser}}.zip' },
  hooks: {
    // A release injects the page provider only into https pages: the content scripts' loopback matches
    // (the sandbox's demo page in development) would be loopback access the release does not have.
    'build:manifestGenerated': (_wxt, manifest) => {
      if (!RELEASE) return;
      for (const cs of manifest.content_scripts ?? []) cs.matches = cs.matches?.filter((m) => m.startsWith('https://'));
    },
  },
  manifest: ({ browser }) => {
    const release = RELEASE;
    const loopback = ['http://127.0.0.1/*', 'http://localhost/*'];
    return {
      // Firefox: a fixed add-on id (storage and the browser tests address the extension by it), the first
      // versions that read the data-collection declaration Mozilla requires of new add-ons (ESR 140 has MV3
      // main-world content scripts and storage.session too), and that declaration: none (keys, settings and the audit
      // journal stay on this machine; the venue gets only what the person signs and sends).
      ...(browser === 'firefox'
        ? {
            browser_specific_settings: {
              gecko: {
                id: 'countersign@countersign.xyz',
                strict_min_version: '140.0',
                data_collection_permissions: { required: ['none'] },
              },
              // The data-collection declaration needs Firefox 140 (desktop) and 142 (Android).
              gecko_android: { strict_min_version: '142.0' },
            },
          }
        : {}),
      name: 'Countersign',
      description: 'Keeps trading keys encrypted and signs exactly what the venue verifies, only with your approval.',
      permissions: ['storage', 'alarms', 'unlimitedStorage', 'notifications'],
      // Development and test builds reach the sandbox on loopback without asking; a release asks for the
      // chosen venue's https hosts at first run.
      ...(release ? {} : { host_permissions: loopback }),
      // A release sends nothing in clear (lib/http/transport.ts): no loopback, even optional.
      optional_host_permissions: ['https://*/*'],
      // No other extension and no web page may connect to us directly; pages go through the content script.
      externally_connectable: { ids: [] },
      // Opens the popup on the ticket from the keyboard.
      commands: {
        _execute_action: {
          suggested_key: { default: 'Alt+Shift+K' },
          description: 'Open Countersign on the order ticket',
        },
        panic: {
          suggested_key: { default: 'Alt+Shift+X' },
          description: 'Panic: cancel every order, revoke permissions and lock (asks once)',
        },
      },
      content_security_policy: {
        extension_pages:
          "script-src 'self'; object-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      },
    };
  },
});
