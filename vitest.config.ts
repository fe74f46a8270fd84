import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

export default defineConfig({
  plugins: [WxtVitest()],
  test: {
    include: [
      'lib/**/*.test.ts',
      'components/**/*.test.ts',
      'entrypoints/**/*.test.ts',
      'test/unit/**/*.test.ts',
      'test/conformance/**/*.test.ts',
      'test/structure/**/*.test.ts',
      'test/compat/**/*.test.ts',
    ],
    environment: 'node',
    testTimeout: 20_000,
  },
});
