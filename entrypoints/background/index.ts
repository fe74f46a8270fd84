import browser from 'webextension-polyfill';
import { defineBackground } from 'wxt/utils/define-background';
import { startBackground } from '../../lib/background';

// The only place keys live. Everything is wired in lib/background; this file stays thin.
export default defineBackground(() => {
  startBackground({ browser });
  void navigator.storage?.persist?.();
});
