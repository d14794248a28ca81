import { defineConfig, devices } from '@playwright/test';

import { chromiumExecutable } from './src/tooling/machine.mjs';

/**
 * End-to-end tests of the admin page against a production build (`.next-e2e`, never the `.next` a
 * running server uses) on a fresh temporary database: see e2e/browser/global-setup.ts.
 *
 *   npx playwright test                 # build when the sources are newer than the build, then test
 *   E2E_REBUILD=1 npx playwright test   # always build first
 *
 * The browser (src/tooling/machine.mjs, as `npm test`'s preflight finds it): PLAYWRIGHT_CHROMIUM_EXECUTABLE
 * when set (a path that names nothing fails at launch, not quietly), else Debian's /usr/bin/chromium, else
 * Playwright's own Chromium (`npx playwright install chromium` where downloads are possible).
 */
const chromium = chromiumExecutable();
const executablePath = chromium && 'problem' in chromium ? process.env.PLAYWRIGHT_CHROMIUM_EXECUTABLE : chromium?.path;

export default defineConfig({
  testDir: './e2e/browser',
  testMatch: '**/*.spec.ts',
  outputDir: 'test-results/e2e',
  globalSetup: './e2e/browser/global-setup.ts',
  // Test files share one server and database, and each makes its own users and ids; 2 cores: 2 workers.
  workers: Number(process.env.E2E_WORKERS ?? 2),
  fullyParallel: false,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  // A bound against a hang, not an expectation of speed: the longest view tests take 40-60 s on a busy machine.
  timeout: 180_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      ...(executablePath ? { executablePath } : {}),
      args: [
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], headless: true } }],
});
