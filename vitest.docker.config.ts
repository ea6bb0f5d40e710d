import { defineConfig } from 'vitest/config';

// `npm run test:docker` (scripts/test-docker.sh, also the second half of `npm test`): the
// image and docker-compose.yml end to end (test/docker). Its JSON report is the second one
// .ci/run counts.
export default defineConfig({
  test: {
    include: ['test/docker/**/*.docker.ts'],
    setupFiles: ['test/setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/docker-results.json' },
    testTimeout: 5 * 60_000,
    hookTimeout: 15 * 60_000,
    // One cluster of containers at a time.
    fileParallelism: false,
  },
});
