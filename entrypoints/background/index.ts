import browser from 'webextension-polyfill';
import { defineBackground } from 'wxt/utils/define-background';
import { startBackground } from '../../lib/background';
import { benchHooks } from '../../lib/background/bench-hooks';

// The only place keys live. Everything is wired in lib/background; this file stays thin.
export default defineBackground(() => {
  const bg = startBackground({ browser });
  // `wxt build --mode bench` only (npm run bench): production builds drop this line.
  if (import.meta.env.MODE === 'bench') Object.assign(globalThis, { countersignBench: benchHooks(bg) });
  void navigator.storage?.persist?.();
});
