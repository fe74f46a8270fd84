import browser from 'webextension-polyfill';
import { defineBackground } from 'wxt/utils/define-background';
import { startBackground } from '../../lib/background';
import { benchHooks, BENCH_WEIGHT_BUDGETS } from '../../lib/background/bench-hooks';

// The only place keys live. Everything is wired in lib/background; this file stays thin.
export default defineBackground(() => {
  // `wxt build --mode bench` only (npm run bench): it measures latency, so the client-side weight budgets are
  // lifted as the bench's sandbox lifts its own; production builds drop both lines.
  const bench = import.meta.env.MODE === 'bench';
  const bg = startBackground(bench ? { browser, weightBudgets: BENCH_WEIGHT_BUDGETS } : { browser });
  if (bench) Object.assign(globalThis, { countersignBench: benchHooks(bg) });
  void navigator.storage?.persist?.();
});
