import { defineConfig } from 'vitest/config';

/**
 * Browser tests: real Chromium (test/e2e, see test/e2e/harness.ts) and Firefox ESR (test/firefox) with the
 * built extension. Files run in parallel: each launches its own browser with a fresh profile (mkdtemp)
 * and its own in-process sandbox on an ephemeral port (startSandbox(0)), so nothing is shared between
 * them; screenshots have distinct names. `E2E_WORKERS` sets how many files run at once (default 2, the
 * cores of the CI machine; 1 runs them one at a time). The Firefox files run one at a time (`npm test`,
 * `npm run test:e2e` set `E2E_WORKERS=1` for them): the event-page tests time Firefox's 3 s idle timeout.
 */
export default defineConfig({
  test: {
    include: [
      'test/e2e/**/*.test.ts',
      'test/firefox/**/*.test.ts',
      'test/release/**/*.test.ts',
      'test/crash/**/*.test.ts',
    ],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: Number(process.env.E2E_WORKERS ?? 2),
  },
});
