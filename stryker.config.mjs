// @ts-check
/**
 * Mutation testing of the pure modules: `npm run test:mutation` (not part of `npm test`: it runs the unit tests
 * once per mutant: 12-34 minutes on two cores, by their load). Each mutant is a small change to the code (a condition
 * inverted, a bound moved by one, a statement removed); a mutant no test fails on is a change the suite cannot
 * see. The report says which survived: reports/mutation/index.html, and the table in the terminal. The modules are
 * the ones whose unit tests are their checks (no server, no HTTP); docs/testing.md has the scores.
 */
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const options = {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/server/plants/scope.ts',
    'src/server/webhooks/delivery/retry-schedule.ts',
    'src/server/idempotency/fingerprint.ts',
    'src/shared/csv.ts',
    'src/server/http/guards/json-depth.ts',
    'src/server/http/guards/rate-limit.ts',
    'src/server/http/guards/client-address.ts',
    'src/server/http/guards/work-queue.ts',
  ],
  // Build outputs are large and no unit test reads them.
  ignorePatterns: ['dist', '.next', '.next-*', '.test-build', '.bench-build', 'bench/results', 'data', 'test-results', 'playwright-report', 'scratch', 'reports'],
  concurrency: 2,
  timeoutMS: 60_000,
  // The first run measures every test's coverage; on a busy machine it takes minutes.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  clearTextReporter: { logTests: false },
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};

export default options;
