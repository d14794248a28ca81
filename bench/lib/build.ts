/**
 * The benchmark's own production build, in `.next-bench/` (next.config.mjs reads NEXT_DIST_DIR), so it never
 * replaces the build a running `npm start` or a test run uses.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot } from './paths';

// tsconfig.json already lists this folder's type folders, so `next build` leaves that file alone.
export const BENCH_DIST_DIR = '.next-bench';

/** Builds when `.next-bench/BUILD_ID` is missing or `rebuild` is set; returns the seconds spent (0 when reused). */
export function ensureBuild(rebuild: boolean): number {
  const buildId = path.join(projectRoot, BENCH_DIST_DIR, 'BUILD_ID');
  if (!rebuild && existsSync(buildId)) return 0;
  console.log(`building into ${BENCH_DIST_DIR}/ (a minute or two) …`);
  const nextEnvFile = path.join(projectRoot, 'next-env.d.ts');
  const nextEnv = existsSync(nextEnvFile) ? readFileSync(nextEnvFile, 'utf8') : undefined;
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV')),
    NEXT_DIST_DIR: BENCH_DIST_DIR,
    NEXT_TELEMETRY_DISABLED: '1',
  } as unknown as NodeJS.ProcessEnv;
  const startedAt = performance.now();
  const build = spawnSync(process.execPath, [path.join(projectRoot, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
    cwd: projectRoot,
    env,
    stdio: 'inherit',
  });
  // next-env.d.ts (git-ignored) now points at this build's types; other builds' users expect it as it was.
  if (nextEnv !== undefined && readFileSync(nextEnvFile, 'utf8') !== nextEnv) writeFileSync(nextEnvFile, nextEnv);
  if (build.error) throw build.error;
  if (build.status !== 0) throw new Error(`next build failed (exit ${build.status ?? `signal ${build.signal}`})`);
  if (!existsSync(buildId)) throw new Error(`next build finished but wrote no ${BENCH_DIST_DIR}/BUILD_ID`);
  return (performance.now() - startedAt) / 1000;
}
