import { defineConfig } from 'vitest/config';

// `npm run test:docker`: the container image end to end with testcontainers (test/docker).
// Not part of `npm test`: it needs a Docker engine, and without one it prints one line and skips.
export default defineConfig({
  test: {
    include: ['test/docker/**/*.docker.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 5 * 60_000,
    hookTimeout: 15 * 60_000,
    // One cluster of containers at a time.
    fileParallelism: false,
  },
});
