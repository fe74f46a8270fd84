import { defineConfig } from 'wxt';
import preact from '@preact/preset-vite';

/**
 * WXT build configuration (MV3 for Chrome, MV2/MV3 for Firefox).
 * `lib/sandbox/` is Node-only and must never be imported by an entrypoint.
 */
export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  publicDir: 'public',
  imports: false,
  vite: () => ({ plugins: [preact()] }),
  manifest: ({ browser }) => ({
    // Firefox: a fixed add-on id (storage and the browser tests address the extension by it) and the
    // first ESR with MV3 main-world content scripts and storage.session.
    ...(browser === 'firefox' ? { browser_specific_settings: { gecko: { id: 'countersign@countersign.xyz', strict_min_version: '128.0' } } } : {}),
    name: 'Countersign',
    description: 'Keeps trading keys encrypted and signs exactly what the venue verifies, only with your approval.',
    permissions: ['storage', 'alarms', 'unlimitedStorage', 'notifications'],
    // The background talks to the sandbox on loopback; other gateways are asked for when configured.
    host_permissions: ['http://127.0.0.1/*', 'http://localhost/*'],
    optional_host_permissions: ['https://*/*'],
    // No other extension and no web page may connect to us directly; pages go through the content script.
    externally_connectable: { ids: [] },
    // Opens the popup on the ticket from the keyboard (issue #10 §4).
    commands: {
      _execute_action: { suggested_key: { default: 'Alt+Shift+K' }, description: 'Open Countersign on the order ticket' },
      panic: { suggested_key: { default: 'Alt+Shift+X' }, description: 'Panic: cancel every order, revoke permissions and lock (asks once)' },
    },
    content_security_policy: {
      extension_pages: "script-src 'self'; object-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    },
  }),
});
