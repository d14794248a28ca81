/**
 * Clients generated from the served document keep ids exact (docs/api.md, "Generated clients: ids stay
 * exact"). The set-ups are read from docs/api.md itself, so the text a user copies is the text tested:
 * openapi-typescript + openapi-fetch, @hey-api/openapi-ts and orval each generate a client from
 * `GET /api/openapi.json` of a real built server, `tsc --strict` compiles it with docs/api.md's files and the
 * adapters in generated-clients/ (which also pin the types: an int64 is a bigint or `number | bigint`,
 * never a plain number), and each client makes the round trip in plain Node: 9007199254740993 and both
 * int64 extremes created, listed by following `Link`, patched as merge patches and deleted, exactly, and
 * the API's errors read as {error, message}. The clients' JSON does not depend on the database, so the
 * PostgreSQL run of the suite skips this file (e2e/api/int64.test.ts holds the extremes on both engines).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { setupServer } from '@test-support/api-fixture';
import { childEnv, projectRoot } from '@test-support/build';

const run = promisify(execFile);
const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);
const CLIENTS = ['openapi-fetch', 'hey-api', 'orval'] as const;
const DOCUMENTED_FILES = [
  'plant-store-json.ts',
  'plant-store-types.mjs',
  'plant-store-openapi-fetch.ts',
  'openapi-ts.config.ts',
  'plant-store-hey-api-setup.ts',
  'orval.config.ts',
  'plant-store-orval-fetch.ts',
];

/** docs/api.md's code blocks marked with a file name: ```ts file=plant-store-json.ts */
function documentedFiles(): Map<string, string> {
  const apiDoc = readFileSync(path.join(projectRoot, 'docs', 'api.md'), 'utf8');
  return new Map([...apiDoc.matchAll(/^```[a-z]+ file=(\S+)\n([\s\S]*?)^```$/gm)].map((match) => [match[1]!, match[2]!]));
}

/** Runs a command in the clients' folder; a failure shows what it printed. */
async function inFolder(folder: string, command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: folder, env: childEnv(), maxBuffer: 16 * 1024 * 1024 });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(command)} ${args.join(' ')} failed:\n${stdout}\n${stderr}`.slice(0, 20_000));
  }
}

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('clients generated from the served document', () => {
  const server = setupServer();

  it('generates openapi-fetch, hey-api and orval clients from the served document that compile under --strict and keep ids exact', { timeout: 240_000 }, async () => {
    const files = documentedFiles();
    expect([...files.keys()].sort(), 'the set-up files docs/api.md shows').toEqual([...DOCUMENTED_FILES].sort());

    const folder = path.join(projectRoot, 'test-results', `generated-clients-${process.env.TEST_DATABASE ?? 'sqlite'}`);
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    for (const [name, text] of files) writeFileSync(path.join(folder, name), text.replaceAll('http://localhost:3000', server.baseUrl));
    const adapters = path.join(import.meta.dirname, 'generated-clients');
    for (const name of readdirSync(adapters)) cpSync(path.join(adapters, name), path.join(folder, name));

    // Generated as docs/api.md says, from the served document, all three at once.
    const timings: string[] = [];
    const timed = async (what: string, work: Promise<unknown>) => {
      const started = performance.now();
      await work;
      timings.push(`${what} ${Math.round(performance.now() - started)} ms`);
    };
    await Promise.all([
      timed('openapi-typescript', inFolder(folder, process.execPath, ['plant-store-types.mjs'])),
      timed('hey-api', inFolder(folder, bin('openapi-ts'), [])),
      timed('orval', inFolder(folder, bin('orval'), ['--config', 'orval.config.ts'])),
    ]);
    await timed('tsc --strict', inFolder(folder, bin('tsc'), ['-p', '.']));

    // One after another: ids are unique across the store, and every client creates the same three.
    for (const client of CLIENTS) {
      const { token } = await server.createToken(`generated-${client}`);
      await timed(`${client} round trip`, inFolder(folder, bin('tsx'), ['run.mts', client, token]));
    }
    console.log(`[generated clients] ${timings.join(', ')}`);
  });
});
