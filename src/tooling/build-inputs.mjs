// What each half of the production build is made from, and whether a build is older than its sources. Plain
// JavaScript, because `npm start`'s pre-step (build-if-missing.mjs) runs it where TypeScript may be gone; the
// test suites and the bench read the same lists, so "stale" means one thing everywhere.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The inputs of the server bundles (a change to one makes them stale). */
export const SERVER_INPUTS = ['src/server', 'src/shared', 'src/cli', 'src/generated', 'prisma', 'package-lock.json', 'src/tooling/build.ts'];
/** The inputs of the exported admin pages. */
export const PAGE_INPUTS = ['src/app', 'src/ui', 'src/shared', 'public', 'next.config.mjs', 'package-lock.json'];

/** The latest modification time of a file, or of anything inside a folder (0 when it does not exist). */
function newestChange(entry) {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce((newest, name) => Math.max(newest, newestChange(path.join(entry, name))), stat.mtimeMs);
}

/**
 * The first of `inputs` (under `root`) changed since `builtAt`, 'never built' without one; undefined when
 * current. Modification times, not contents: `git pull` and `git checkout` stamp every file they write with
 * the time of writing, so a build made before them is stale, and checking costs a few milliseconds.
 */
export function staleInput(root, inputs, builtAt) {
  if (!builtAt) return 'never built';
  return inputs.find((input) => newestChange(path.join(root, input)) > Date.parse(builtAt));
}
