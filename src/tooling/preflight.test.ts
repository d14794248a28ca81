/**
 * `npm test`'s first step, run as npm runs it (plain node, its real file): it says in seconds what the machine
 * lacks and the one command to run, and lets the suites start when nothing is missing. Here with PostgreSQL given
 * as TEST_POSTGRES_URL (its programs are not looked for) and Chromium named by PLAYWRIGHT_CHROMIUM_EXECUTABLE, so
 * that the answer does not depend on this machine (a machine that lacks them for real takes a mount namespace to
 * make, which a test cannot count on).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const preflight = path.join(import.meta.dirname, 'preflight.mjs');

function run(env: Record<string, string>) {
  const started = performance.now();
  const result = spawnSync(process.execPath, [preflight], {
    encoding: 'utf8',
    env: { ...process.env, TEST_POSTGRES_URL: 'postgresql://plants@127.0.0.1:1/plants', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', ...env },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}`, seconds: (performance.now() - started) / 1000 };
}

describe("npm test's preflight", () => {
  it('lets the suites start when the machine has what they need', () => {
    // node itself prints a version line for --version, as a Chromium does.
    const { code, output } = run({ PLAYWRIGHT_CHROMIUM_EXECUTABLE: process.execPath });
    expect(output).toMatch(/^preflight: this machine can run every suite/);
    expect(output).toContain('ok       PostgreSQL: the server TEST_POSTGRES_URL names');
    expect(output).toContain(`(PLAYWRIGHT_CHROMIUM_EXECUTABLE: ${process.execPath})`);
    expect(code).toBe(0);
  });

  it('stops in seconds, naming what is missing and the one command to run', () => {
    const { code, output, seconds } = run({ PLAYWRIGHT_CHROMIUM_EXECUTABLE: '/nowhere/chromium' });
    expect(output).toContain('MISSING  PLAYWRIGHT_CHROMIUM_EXECUTABLE names /nowhere/chromium, which does not exist');
    expect(output).toMatch(/\nRun: unset PLAYWRIGHT_CHROMIUM_EXECUTABLE, or point it at a Chromium\nthen npm test again\.\n$/);
    expect(code).toBe(1);
    // "Its first seconds": well under what one suite takes, even on a busy machine.
    expect(seconds).toBeLessThan(20);
  });
});
