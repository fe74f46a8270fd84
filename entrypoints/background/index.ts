import browser from 'webextension-polyfill';
import { defineBackground } from 'wxt/utils/define-background';
import { startBackground, type BackgroundBrowser } from '../../lib/background';

// The only place keys live. Everything is wired in lib/background; this file stays thin.
export default defineBackground(() => {
  startBackground({ browser: browser as unknown as BackgroundBrowser });
  void navigator.storage?.persist?.();
});
