/**
 * The benchmark's own production build, in `.next-bench/` (next.config.mjs reads NEXT_DIST_DIR), so it never
 * replaces the build a running `npm start` or a test run uses.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot } from './paths';

export const BENCH_DIST_DIR = '.next-bench';

/**
 * `next build` adds its dist folder's type folders to tsconfig.json's `include`. This folder is a benchmark
 * artefact, so exactly those two lines are taken out again when the build added them (the same approach as
 * e2e/global-setup.ts); nothing else in the file is touched.
 */
function restoreTsconfig(before: string): void {
  const file = path.join(projectRoot, 'tsconfig.json');
  const after = readFileSync(file, 'utf8');
  let text = after;
  for (const entry of [`${BENCH_DIST_DIR}/types/**/*.ts`, `${BENCH_DIST_DIR}/dev/types/**/*.ts`]) {
    if (before.includes(`"${entry}"`)) continue;
    const quoted = `"${entry}"`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    text = text.replace(new RegExp(`\\n[ \\t]*${quoted},`), '').replace(new RegExp(`,\\n[ \\t]*${quoted}(?=\\s*\\])`), '');
  }
  if (text === after) return;
  try {
    JSON.parse(text);
    writeFileSync(file, text);
  } catch {
    // Not ours to fix: leave it as the build left it.
  }
}

/** Builds when `.next-bench/BUILD_ID` is missing or `rebuild` is set; returns the seconds spent (0 when reused). */
export function ensureBuild(rebuild: boolean): number {
  const buildId = path.join(projectRoot, BENCH_DIST_DIR, 'BUILD_ID');
  if (!rebuild && existsSync(buildId)) return 0;
  console.log(`building into ${BENCH_DIST_DIR}/ (a minute or two) …`);
  const tsconfig = readFileSync(path.join(projectRoot, 'tsconfig.json'), 'utf8');
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
  restoreTsconfig(tsconfig);
  // next-env.d.ts (git-ignored) now points at this build's types; other builds' users expect it as it was.
  if (nextEnv !== undefined && readFileSync(nextEnvFile, 'utf8') !== nextEnv) writeFileSync(nextEnvFile, nextEnv);
  if (build.error) throw build.error;
  if (build.status !== 0) throw new Error(`next build failed (exit ${build.status ?? `signal ${build.signal}`})`);
  if (!existsSync(buildId)) throw new Error(`next build finished but wrote no ${BENCH_DIST_DIR}/BUILD_ID`);
  return (performance.now() - startedAt) / 1000;
}
