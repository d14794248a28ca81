/**
 * The production build the end-to-end suites run against, in its own folder (.test-build/, through
 * BUILD_DIR) so it never replaces the dist/ a running `npm start` serves. Whichever suite runs first builds;
 * a half is rebuilt only when one of its sources is newer than it (a change to the server alone rebuilds
 * the server bundles in about a second). E2E_REBUILD=1 always rebuilds, E2E_SKIP_BUILD=1 never does.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PAGE_INPUTS, SERVER_INPUTS, staleInput } from '../src/tooling/build-inputs.mjs';

/** The inputs of each half of the build (a change to one makes that half stale); the bench uses them too. */
export { PAGE_INPUTS, SERVER_INPUTS, staleInput };

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEST_BUILD_DIR = '.test-build';
export const testBuildDir = path.join(projectRoot, TEST_BUILD_DIR);

/**
 * The environment for a child process of the suites: ours without the test runner's NODE_ENV=test, with
 * the test build folder. No balancer watches a test server's health, so its SIGTERM skips the drain window
 * (a test about the window sets SHUTDOWN_DRAIN_MS itself): every stop would otherwise take 5 s more.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV');
  return { SHUTDOWN_DRAIN_MS: '0', ...Object.fromEntries(inherited), BUILD_DIR: TEST_BUILD_DIR, NEXT_TELEMETRY_DISABLED: '1', ...extra } as unknown as NodeJS.ProcessEnv;
}

/** When src/tooling/build.ts built each half into `buildDir` (its BUILD_INFO.json); undefined for no build. */
export function buildInfo(buildDir = testBuildDir): { serverBuiltAt?: string; pagesBuiltAt?: string | null } | undefined {
  const file = path.join(buildDir, 'BUILD_INFO.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

const isStale = (inputs: string[], builtAt: string | null | undefined) => staleInput(projectRoot, inputs, builtAt) !== undefined;

/** Both suites run the whole build (the API suite's fuzzing reaches the pages too); only the stale half is rebuilt. */
export function ensureTestBuild(): void {
  const info = buildInfo();
  if (process.env.E2E_SKIP_BUILD === '1') {
    if (!info?.pagesBuiltAt) throw new Error(`E2E_SKIP_BUILD=1 but there is no build in ${TEST_BUILD_DIR}/`);
    return;
  }
  const rebuild = process.env.E2E_REBUILD === '1';
  const pagesNeeded = rebuild || isStale(PAGE_INPUTS, info?.pagesBuiltAt);
  if (!pagesNeeded && !isStale(SERVER_INPUTS, info?.serverBuiltAt)) return;
  const full = pagesNeeded;
  console.log(`[e2e] building ${full ? 'pages and server' : 'the server'} into ${TEST_BUILD_DIR}/ …`);
  const build = spawnSync(process.execPath, [path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'src/tooling/build.ts', ...(full ? [] : ['--server'])], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: childEnv(),
  });
  if (build.error) throw build.error;
  if (build.status !== 0) throw new Error(`the build failed (exit code ${build.status ?? `signal ${build.signal}`})`);
}
