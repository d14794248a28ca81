/**
 * Clients generated from the served document keep ids exact (docs/api.md, "Generated clients: ids stay
 * exact"), made the way a user makes them: each recipe in a new folder outside the project, its lines and files
 * read from docs/api.md itself (the folder's `sh run=client-folder` lines and tsconfig.json, the shared
 * exact-JSON file, the recipe's `sh run=<recipe>` lines and files, then `sh run=client-check`), installing
 * from the npm registry at the versions the lines name (npm's cache makes a second run quick) and generating
 * from `GET /api/openapi.json` of a real built server. The user's program is the adapter in
 * generated-clients/ (which also pins the types: an int64 is a bigint or `number | bigint`, never a plain
 * number), compiled with the rest by the recipe's `npx tsc`, then run by `npx tsx`: 9007199254740993 and both
 * int64 extremes created, listed by following `Link`, patched as merge patches and deleted, exactly, and the
 * API's errors read as {error, message}. The clients' JSON does not depend on the database, so the PostgreSQL
 * run of the suite skips this file (e2e/api/int64.test.ts holds the extremes on both engines).
 */
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { setupServer } from '@test-support/api-fixture';
import { documentedCommands, documentedFiles, runLines, userEnv } from '@test-support/documented';

const RECIPES = ['openapi-fetch', 'hey-api', 'orval'] as const;
type Recipe = (typeof RECIPES)[number];
/** What every recipe's folder gets, and the files of each recipe, as docs/api.md shows them. */
const SHARED_FILES = ['tsconfig.json', 'plant-store-json.ts'];
const RECIPE_FILES: Record<Recipe, string[]> = {
  'openapi-fetch': ['plant-store-types.mjs', 'plant-store-openapi-fetch.ts'],
  'hey-api': ['openapi-ts.config.ts', 'plant-store-hey-api-setup.ts'],
  orval: ['orval.config.ts', 'plant-store-orval-fetch.ts'],
};
const DOC = 'docs/api.md';
const FOLDER = 'plant-store-client';

// The user's own settings, not the commands': npm's cache before the network, and no notices.
const env = userEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('clients generated as docs/api.md says, in a new folder outside the project', () => {
  const server = setupServer();

  // Three folders installed at once (~1 minute here with npm's cache warm; a cold cache downloads ~150 MB).
  it('openapi-fetch, hey-api and orval clients compile under --strict and keep ids exact', { timeout: 600_000 }, async () => {
    const files = documentedFiles(DOC);
    expect([...files.keys()].sort(), 'the files docs/api.md shows').toEqual([...SHARED_FILES, ...Object.values(RECIPE_FILES).flat()].sort());
    const lines = (name: string) => documentedCommands(DOC, name);
    const adapters = path.join(import.meta.dirname, 'generated-clients');
    const timings: string[] = [];
    const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await work();
      timings.push(`${what} ${Math.round(performance.now() - started)} ms`);
      return result;
    };

    const parents: string[] = [];
    try {
      // Every recipe to its end before any failure is reported, so that no folder is removed under a running npm.
      const settled = await Promise.allSettled(
        RECIPES.map(async (recipe) => {
          const parent = mkdtempSync(path.join(os.tmpdir(), `plant-store-${recipe}-`));
          parents.push(parent);
          await timed(`${recipe}: folder`, () => runLines(lines('client-folder'), { cwd: parent, env }));
          const folder = path.join(parent, FOLDER);
          expect(existsSync(path.join(folder, 'package.json')), `the lines make ${FOLDER}/`).toBe(true);
          for (const name of [...SHARED_FILES, ...RECIPE_FILES[recipe]]) writeFileSync(path.join(folder, name), files.get(name)!.replaceAll('http://localhost:3000', server.baseUrl));
          for (const name of ['round-trip.ts', 'run.mts', `${recipe}.client.ts`]) cpSync(path.join(adapters, name), path.join(folder, name));
          await timed(`${recipe}: install and generate`, () => runLines(lines(recipe), { cwd: folder, env }));
          await timed(`${recipe}: tsc --strict`, () => runLines(lines('client-check'), { cwd: folder, env }));
          return [recipe, folder] as const;
        }),
      );
      const failed = settled.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      const folders = settled.map((result) => (result as PromiseFulfilledResult<readonly [Recipe, string]>).value);
      // One after another: ids are unique across the store, and every client creates the same three.
      for (const [recipe, folder] of folders) {
        const { token } = await server.createToken(`generated-${recipe}`);
        await timed(`${recipe}: round trip`, () => runLines(`npx tsx run.mts ${recipe} ${token}`, { cwd: folder, env }));
      }
    } finally {
      console.log(`[generated clients] ${timings.join(', ')}`);
      for (const parent of parents) rmSync(parent, { recursive: true, force: true });
    }
  });
});
