#!/usr/bin/env node
// Runs the Prisma CLI for the commands that need no schema engine (generate, studio). Prisma 7 downloads
// a native engine at start-up unless PRISMA_SCHEMA_ENGINE_BINARY names one; generate never runs it, so any
// existing file will do where the download is impossible (closed networks, this project's CI).
// `npm run studio` also gets an absolute file:/// URL, which Studio needs to find the same database.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...rest] = process.argv.slice(2);
const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url) };
const args = [command, ...rest];
if (command === 'studio') {
  const url = process.env.DATABASE_URL ?? 'file:./data/plants.db';
  const file = url.replace(/^file:(\/\/)?/, '');
  args.push('--url', pathToFileURL(path.resolve(projectRoot, file)).href);
}
const prisma = path.join(projectRoot, 'node_modules', 'prisma', 'build', 'index.js');
const result = spawnSync(process.execPath, [prisma, ...args], { cwd: projectRoot, stdio: 'inherit', env });
process.exit(result.status ?? 1);
