/**
 * The production build the end-to-end suites run against, in its own folder (next.config.mjs reads
 * NEXT_DIST_DIR) so it never replaces the `.next` a running `npm start` serves. Both suites share it:
 * whichever runs first builds, the other finds it fresh. It is rebuilt when a source is newer than it;
 * E2E_REBUILD=1 always rebuilds, E2E_SKIP_BUILD=1 never does.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TEST_DIST_DIR = '.next-test';

const BUILD_INPUTS = ['src', 'public', 'prisma', 'next.config.mjs', 'package.json', 'package-lock.json', 'tsconfig.json'];

function newestChange(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce((newest, name) => Math.max(newest, newestChange(path.join(entry, name))), stat.mtimeMs);
}

function buildIsStale(buildId: string): boolean {
  if (!existsSync(buildId)) return true;
  const builtAt = statSync(buildId).mtimeMs;
  return BUILD_INPUTS.some((input) => newestChange(path.join(projectRoot, input)) > builtAt);
}

/**
 * The environment for a child process of the suites: ours without the test runner's NODE_ENV=test, which
 * Next.js must not see, with the test build folder.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV');
  return { ...Object.fromEntries(inherited), NEXT_DIST_DIR: TEST_DIST_DIR, NEXT_TELEMETRY_DISABLED: '1', ...extra } as unknown as NodeJS.ProcessEnv;
}

export function ensureTestBuild(): void {
  const buildId = path.join(projectRoot, TEST_DIST_DIR, 'BUILD_ID');
  if (process.env.E2E_SKIP_BUILD === '1') {
    if (!existsSync(buildId)) throw new Error(`E2E_SKIP_BUILD=1 but there is no build in ${TEST_DIST_DIR}/`);
    return;
  }
  if (process.env.E2E_REBUILD !== '1' && !buildIsStale(buildId)) return;
  console.log(`[e2e] building into ${TEST_DIST_DIR}/ …`);
  const build = spawnSync(process.execPath, [path.join(projectRoot, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: childEnv(),
  });
  if (build.error) throw build.error;
  if (build.status !== 0) throw new Error(`next build failed (exit code ${build.status ?? `signal ${build.signal}`})`);
}
