/**
 * `npx tsx src/tooling/openapi-diff.ts [REF]`: whether the OpenAPI document this checkout serves is
 * byte-identical to the one of another commit (default `main`): both serialised exactly as
 * `GET /api/openapi.json` sends them, compared byte for byte, the differences printed as a unified diff.
 * Exits 0 when identical, 1 when not. For a change that must leave the contract as it was (such as the REST door
 * leaving trpc-to-openapi's handler: docs/decisions/0004-rest-door-routes-from-openapi-meta.md).
 *
 * The other commit is exported with `git archive` into a temporary folder beside this checkout's
 * node_modules (hard links), its Prisma clients generated, and the document built there with its own code.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { projectRoot } from '@/server/paths';

const ref = process.argv[2] ?? 'main';
const other = mkdtempSync(path.join(os.tmpdir(), 'plant-store-openapi-'));
/** Builds the document of the checkout in `dir` with that checkout's code, on stdout. */
const PRINT = `
import { stringifyExactJson } from '@/server/http/rest/exact-json';
import { buildOpenApiDocument } from '@/server/http/rest/openapi';
import { appRouter } from '@/server/app-router';
process.stdout.write(stringifyExactJson(buildOpenApiDocument(appRouter)), () => process.exit(0));
`;

function run(command: string, args: string[], cwd: string): string {
  // Loading the router opens the database (db/client.ts): a scratch file in the temporary folder.
  const env = { ...process.env, NODE_ENV: 'production' as const, DATABASE_URL: `file:${path.join(other, 'scratch.db')}` };
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed:\n${result.stderr}`);
  return result.stdout;
}

function documentOf(dir: string): string {
  const script = path.join(dir, 'src', 'tooling', `.print-openapi-${process.pid}.ts`);
  writeFileSync(script, PRINT);
  try {
    return run(process.execPath, [path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '--conditions=react-server', script], dir);
  } finally {
    rmSync(script, { force: true });
  }
}

try {
  run('sh', ['-c', `git -C "${projectRoot}" archive "${ref}" | tar -x -C "${other}"`], projectRoot);
  // Hard links: instant, and no second copy on disk (the temporary folder is on the same file system as a rule).
  run('cp', ['-al', path.join(projectRoot, 'node_modules'), path.join(other, 'node_modules')], projectRoot);
  run(process.execPath, [path.join(other, 'src', 'tooling', 'prisma-cli.mjs'), 'generate'], other);
  const theirs = documentOf(other);
  const ours = documentOf(projectRoot);
  if (theirs === ours) {
    console.log(`The OpenAPI document is byte-identical to ${ref}'s (${Buffer.byteLength(ours)} bytes).`);
    process.exit(0);
  }
  const [a, b] = [path.join(other, `openapi-${ref.replace(/\W/g, '_')}.json`), path.join(other, 'openapi-this.json')];
  // One member per line, so the diff names what changed (the bytes compared above are the exact ones).
  writeFileSync(a, `${JSON.stringify(JSON.parse(theirs), null, 2)}\n`);
  writeFileSync(b, `${JSON.stringify(JSON.parse(ours), null, 2)}\n`);
  console.log(`The OpenAPI document differs from ${ref}'s (${Buffer.byteLength(theirs)} → ${Buffer.byteLength(ours)} bytes):`);
  console.log(spawnSync('diff', ['-u', a, b], { encoding: 'utf8' }).stdout);
  process.exit(1);
} finally {
  rmSync(other, { recursive: true, force: true });
}
