import browser from 'webextension-polyfill';
import { defineContentScript } from 'wxt/utils/define-content-script';
import { startContentRelay, type RelayPort } from '../lib/bridge/content';

// Isolated-world relay between the page and the background (over a port).
export default defineContentScript({
  matches: ['https://*/*', 'http://localhost/*', 'http://127.0.0.1/*'],
  runAt: 'document_start',
  main() {
    startContentRelay((name) => browser.runtime.connect({ name }) as unknown as RelayPort, window);
  },
});
