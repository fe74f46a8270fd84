import { defineConfig } from 'vitest/config';

/** Browser tests: real Chromium with the built extension (see test/e2e/harness.ts). One file at a time. */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts', 'test/firefox/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
