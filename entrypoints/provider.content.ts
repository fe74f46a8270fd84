import { defineContentScript } from 'wxt/utils/define-content-script';
import { installProvider } from '../lib/bridge/provider';

// Main-world provider: in place before the page's own scripts run. Framing only, no secrets.
export default defineContentScript({
  matches: ['https://*/*', 'http://localhost/*', 'http://127.0.0.1/*'],
  world: 'MAIN',
  runAt: 'document_start',
  main() {
    installProvider(window);
  },
});
