import { defineConfig } from 'vitest/config';

// The JSON report is what .ci/run reads to print its closing "N passed, N failed" line.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/results.json' },
    testTimeout: 30_000,
  },
});
