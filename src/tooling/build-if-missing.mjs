#!/usr/bin/env node
// Runs before `npm start`, `npm run token`, `npm run db:migrate` and `npm run db:backup`: on a fresh clone
// there is no build yet, so it makes one (a minute, once); after `git pull` (or any edit) the build is older
// than its sources, so the half that changed is rebuilt rather than the old code started. Plain JavaScript,
// so it runs where the devDependencies are gone too; there a missing or stale build can only be reported.
// Its output goes to stderr: stdout is the command's own (the token).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PAGE_INPUTS, SERVER_INPUTS, staleInput } from './build-inputs.mjs';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const buildDir = path.resolve(projectRoot, process.env.BUILD_DIR ?? 'dist');
const shownDir = path.relative(projectRoot, buildDir) || '.';
const infoFile = path.join(buildDir, 'BUILD_INFO.json');
const info = existsSync(infoFile) ? JSON.parse(readFileSync(infoFile, 'utf8')) : undefined;

const pagesStale = info && staleInput(projectRoot, PAGE_INPUTS, info.pagesBuiltAt);
const serverStale = info && staleInput(projectRoot, SERVER_INPUTS, info.serverBuiltAt);
if (info && !pagesStale && !serverStale) process.exit(0);

const staleBecause = pagesStale ?? serverStale;
const why = !info ? `No build in ${shownDir} yet` : staleBecause === 'never built' ? `The build in ${shownDir} has no admin pages` : `The build in ${shownDir} is older than ${staleBecause}`;
const tsx = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
if (!existsSync(tsx)) {
  // A production install (`npm run build && npm prune --omit=dev`): prune rewrites package-lock.json after the
  // build, so there only the sources can say the build is old.
  const sourcesOnly = (inputs) => inputs.filter((input) => input !== 'package-lock.json');
  const staleSources = info && (staleInput(projectRoot, sourcesOnly(PAGE_INPUTS), info.pagesBuiltAt) ?? staleInput(projectRoot, sourcesOnly(SERVER_INPUTS), info.serverBuiltAt));
  if (info && !staleSources) process.exit(0);
  console.error(`${why}, and the tools to make one are not installed: run npm ci && npm run build.`);
  process.exit(1);
}
// A change to the server alone rebuilds its bundles in seconds; the pages take the minute.
const serverOnly = Boolean(info && !pagesStale);
console.error(`${why}: building ${serverOnly ? 'the server (seconds)' : '(a minute)'}.`);
const build = spawnSync(process.execPath, [tsx, 'src/tooling/build.ts', ...(serverOnly ? ['--server'] : [])], { cwd: projectRoot, stdio: ['ignore', 2, 2] });
process.exit(build.status ?? 1);
