#!/usr/bin/env node
// Runs the Prisma CLI for the commands that need no schema engine (generate; studio has its own wrapper,
// studio.ts). Prisma 7 downloads a native engine at start-up unless PRISMA_SCHEMA_ENGINE_BINARY names one;
// generate never runs it, so any existing file will do where the download is impossible (closed networks,
// this project's CI). `generate` writes both engines' clients (the app picks one at run time from DATABASE_URL).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const prisma = path.join(projectRoot, 'node_modules', 'prisma', 'build', 'index.js');
const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url) };
const schemas = [path.join('prisma', 'schema.prisma'), path.join('prisma', 'postgresql', 'schema.prisma')];

function runPrisma(args) {
  const result = spawnSync(process.execPath, [prisma, ...args], { cwd: projectRoot, stdio: 'inherit', env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const [command, ...rest] = process.argv.slice(2);
// `npm ci --omit=dev` installs no Prisma CLI: the generated clients are only needed to build, which such an
// install does not do (it runs a build made elsewhere), so the postinstall step has nothing to do there.
if (!existsSync(prisma)) {
  console.error(`The Prisma CLI is not installed (a production install?): skipped prisma ${command}.`);
  process.exit(command === 'generate' ? 0 : 1);
}
if (command === 'generate' && !rest.includes('--schema')) {
  for (const schema of schemas) runPrisma(['generate', '--schema', schema, ...rest]);
} else {
  runPrisma([command, ...rest]);
}
