/**
 * What the bench runs, built where it never replaces another build:
 *
 * - a checkout of the compiled kind (src/server/main.ts; `npm start` = node dist/server.mjs): the full build
 *   of src/tooling/build.ts into `<checkout>/.bench-build/` (BUILD_DIR), rebuilt when a source is newer
 *   than the half of it that BUILD_INFO.json dates (the same rule as test-support/build.ts), or on --rebuild;
 * - a checkout of the older kind (commit 130f597 and before: 130f597:src/cli/start.ts under tsx, Next.js serving the
 *   page): `next build` into `<checkout>/.next-bench/` (NEXT_DIST_DIR) when its BUILD_ID is missing;
 * - the floor (bench/floor.ts), the stack floor (bench/stack-floor.ts) and the ceiling (bench/ceiling.ts),
 *   bundled by esbuild into `.bench-build/bench/` on every run (a second), so they run on plain node like the app.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { build } from 'esbuild';

import { buildInfo, PAGE_INPUTS, SERVER_INPUTS, staleInput } from '@test-support/build';
import { plantFieldFacts } from '@test-support/plant-fields';
import { benchDir, projectRoot, tsxCli } from './paths';
import { childEnv } from './proc';

export const BENCH_BUILD_DIR = '.bench-build';
export const OLD_DIST_DIR = '.next-bench';

export type Checkout = {
  /** Absolute folder of the checkout. */
  dir: string;
  /** `compiled`: node <dir>/.bench-build/server.mjs; `next`: node --import tsx 130f597:src/cli/start.ts with Next.js. */
  kind: 'compiled' | 'next';
};

export function checkoutAt(dir: string): Checkout {
  if (existsSync(path.join(dir, 'src', 'server', 'main.ts'))) return { dir, kind: 'compiled' };
  if (existsSync(path.join(dir, 'src', 'cli', 'start.ts'))) return { dir, kind: 'next' };
  throw new Error(`${dir} is not a Plant Store checkout: it has neither src/server/main.ts nor src/cli/start.ts`);
}

/** Why `<dir>/.bench-build` must be (re)built, or null when it is current. */
function compiledBuildNeeded(dir: string): string | null {
  const info = buildInfo(path.join(dir, BENCH_BUILD_DIR));
  if (!info) return 'no build yet';
  const server = staleInput(dir, SERVER_INPUTS, info.serverBuiltAt);
  const pages = staleInput(dir, PAGE_INPUTS, info.pagesBuiltAt);
  if (pages) return `the pages are older than ${pages}`;
  if (server) return `the server is older than ${server}`;
  if (!existsSync(path.join(dir, BENCH_BUILD_DIR, 'server.mjs'))) return 'server.mjs is missing';
  return null;
}

/**
 * Builds the checkout when it needs it (or always with `rebuild`); returns the seconds spent (0 when reused).
 * The build runs with the checkout's own tools (its node_modules, which may be a link to this one's).
 */
export function ensureBuild(checkout: Checkout, rebuild: boolean): number {
  const { dir } = checkout;
  const relative = path.relative(projectRoot, dir);
  const label = relative === '' ? '.' : relative.startsWith('..') ? dir : relative;
  let reason: string | null;
  let command: string[];
  let env: NodeJS.ProcessEnv;
  if (checkout.kind === 'compiled') {
    reason = rebuild ? '--rebuild' : compiledBuildNeeded(dir);
    command = [tsxCli(dir), 'src/tooling/build.ts'];
    env = childEnv({ BUILD_DIR: BENCH_BUILD_DIR });
  } else {
    reason = rebuild ? '--rebuild' : existsSync(path.join(dir, OLD_DIST_DIR, 'BUILD_ID')) ? null : 'no build yet';
    command = [path.join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'];
    env = childEnv({ NEXT_DIST_DIR: OLD_DIST_DIR });
  }
  if (!reason) return 0;
  const into = checkout.kind === 'compiled' ? BENCH_BUILD_DIR : OLD_DIST_DIR;
  console.log(`building ${label} into ${into}/ (${reason}; a minute or two) …`);
  // `next build` rewrites next-env.d.ts (git-ignored) to point at its own types; others expect it as it was.
  const nextEnvFile = path.join(dir, 'next-env.d.ts');
  const nextEnv = existsSync(nextEnvFile) ? readFileSync(nextEnvFile, 'utf8') : undefined;
  const startedAt = performance.now();
  const result = spawnSync(process.execPath, command, { cwd: dir, env, stdio: 'inherit' });
  if (nextEnv !== undefined && existsSync(nextEnvFile) && readFileSync(nextEnvFile, 'utf8') !== nextEnv) writeFileSync(nextEnvFile, nextEnv);
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`the build of ${label} failed (exit ${result.status ?? `signal ${result.signal}`})`);
  const marker = checkout.kind === 'compiled' ? path.join(dir, BENCH_BUILD_DIR, 'server.mjs') : path.join(dir, OLD_DIST_DIR, 'BUILD_ID');
  if (!existsSync(marker)) throw new Error(`the build of ${label} finished but wrote no ${path.relative(dir, marker)}`);
  return (performance.now() - startedAt) / 1000;
}

/** bench/floor.ts, bench/stack-floor.ts, bench/ceiling.ts and bench/probe.ts as plain ES modules in .bench-build/bench/, for plain node. */
export async function bundleBenchServers(): Promise<{ floor: string; stackFloor: string; ceiling: string; probe: string }> {
  const outdir = path.join(projectRoot, BENCH_BUILD_DIR, 'bench');
  await build({
    absWorkingDir: projectRoot,
    entryPoints: {
      floor: path.join(benchDir, 'floor.ts'),
      'stack-floor': path.join(benchDir, 'stack-floor.ts'),
      ceiling: path.join(benchDir, 'ceiling.ts'),
      probe: path.join(benchDir, 'probe.ts'),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3'],
    // The declared plant fields as plain data (bench/wire.ts): the floors follow the declaration without its zod schemas.
    define: { 'process.env.NODE_ENV': '"production"', PLANT_FIELDS: JSON.stringify(plantFieldFacts()) },
    // So a profile of a floor maps its frames to packages as the app's does (lib/profile.ts).
    sourcemap: true,
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return {
    floor: path.join(outdir, 'floor.mjs'),
    stackFloor: path.join(outdir, 'stack-floor.mjs'),
    ceiling: path.join(outdir, 'ceiling.mjs'),
    probe: path.join(outdir, 'probe.mjs'),
  };
}
