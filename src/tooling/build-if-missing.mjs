#!/usr/bin/env node
// Runs before `npm start`, `npm run token` and `npm run db:migrate`: on a fresh clone there is no build yet,
// so it makes one (a minute, once). Plain JavaScript, so it runs where the devDependencies are gone too; there
// a missing build can only be reported. Its output goes to stderr: stdout is the command's own (the token).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const buildDir = path.resolve(projectRoot, process.env.BUILD_DIR ?? 'dist');
if (existsSync(path.join(buildDir, 'BUILD_INFO.json'))) process.exit(0);

const tsx = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
if (!existsSync(tsx)) {
  console.error(`There is no build in ${buildDir}, and the tools to make one are not installed: run npm ci && npm run build.`);
  process.exit(1);
}
console.error(`No build in ${path.relative(projectRoot, buildDir) || '.'} yet: building (a minute, once).`);
const build = spawnSync(process.execPath, [tsx, 'src/tooling/build.ts'], { cwd: projectRoot, stdio: ['ignore', 2, 2] });
process.exit(build.status ?? 1);
