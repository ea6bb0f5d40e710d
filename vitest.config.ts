import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The JSON report is what .ci/run reads to print its closing "N passed, N failed" line.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/results.json' },
    testTimeout: 30_000,
    // One test file per core, and at least two. Vitest's default (cores - 1) runs the suite
    // file after file on a 2-core machine, though the cluster tests spend most of their
    // time waiting on their node processes (timers, throttled streams, gossip rounds).
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
