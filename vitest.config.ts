import path from 'node:path';

import { defineConfig } from 'vitest/config';

const alias = {
  '@': path.resolve(import.meta.dirname, 'src'),
  // What unit tests, API tests, browser tests and the bench share (README, "Where things are").
  '@test-support': path.resolve(import.meta.dirname, 'test-support'),
  // The marker package throws outside Next.js's server bundles; tests run server code in plain Node.
  'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
};

/** The unit tests: also what mutation testing runs (stryker.config.mjs, through vitest.mutation.config.ts). */
export const unitProject = {
  resolve: { alias },
  test: {
    name: 'unit',
    include: ['src/**/*.test.ts'],
    environment: 'node' as const,
    setupFiles: ['test-support/unit-setup.ts'],
    sequence: { groupOrder: 0 },
  },
};

export default defineConfig({
  test: {
    projects: [
      unitProject,
      {
        resolve: { alias },
        test: {
          name: 'api',
          include: ['e2e/api/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['e2e/api/global-setup.ts'],
          // Each file starts its own production server; two at a time suits a two-core machine.
          maxWorkers: 2,
          // After the unit tests: a failing unit is found in seconds, before any server is built.
          sequence: { groupOrder: 1 },
          // Bounds against a hang, not expectations of speed: on a busy machine (load 25-30 on these two cores)
          // a test that takes 10 s here takes 40. Tests wait on conditions (README, Testing).
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
