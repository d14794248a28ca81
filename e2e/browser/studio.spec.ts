/**
 * Prisma Studio as people start it, on databases of its own: `npm run studio` (src/tooling/studio.ts: Studio
 * behind the project's guard) and `npx prisma studio` (through prisma.config.ts). The page must work under the
 * guard's CSP, nothing it does may leave this machine (its page calls Prisma's update server on its own,
 * whatever the environment says), it must be reachable on 127.0.0.1 only, and what docs/commands.md ("Prisma
 * Studio") says Studio gets wrong (ids beyond 2^53) must still be what it gets wrong. Above all it must not
 * write unless asked to (`--write`): its edits are made here exactly as its page makes them, by Studio's own
 * adapter (@prisma/studio-core) over the server's /bff, and refused on SQLite and on PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { expect, test } from '@playwright/test';
import { createStudioBFFClient } from '@prisma/studio-core/data/bff';
import { createPostgresAdapter } from '@prisma/studio-core/data/postgres-core';
import { createSQLiteAdapter } from '@prisma/studio-core/data/sqlite-core';
import Database from 'better-sqlite3';

import { applyMigrations } from '../../src/server/db/migrate';
import { childEnv, projectRoot } from '@test-support/build';
import { createPostgresDatabase, type TestDatabase } from '@test-support/database';
import { postgresBinDir, type PrivatePostgres, startPrivatePostgres } from '@test-support/postgres';
import { freePort, waitForExit } from '@test-support/processes';

const BEYOND_2_53 = 9007199254740993n;
const SMALL = 7n;

type Studio = { origin: string; output: () => string; stop: () => Promise<void> };

/**
 * Starts `command` (its own process group, stopped as one) and waits for Studio to say where it answers. tsx,
 * then Prisma's CLI loading Studio: seconds here, more on a busy machine.
 */
async function startStudio(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<Studio> {
  const child: ChildProcess = spawn(command, args, { cwd: projectRoot, env: { ...childEnv(env), CHECKPOINT_DISABLE: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const started = Date.now();
  const origin = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const found = ready.exec(output);
      if (found) resolve(`http://127.0.0.1:${found[1]}`);
      else if (child.exitCode !== null) reject(new Error(`${command} ${args.join(' ')} exited with ${child.exitCode}:\n${output}`));
      else if (Date.now() - started > 120_000) reject(new Error(`${command} ${args.join(' ')} did not say it was ready:\n${output}`));
      else setTimeout(check, 100);
    };
    check();
  }).catch(async (error: unknown) => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    throw error;
  });
  return {
    origin,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
      await waitForExit(child, 15_000);
    },
  };
}

const tsx = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
/** `npm run studio -- --port N [--write]`: the script's command itself, a process tree of our own to stop. */
const npmRunStudio = async (databaseUrl: string, extra: string[] = []) => {
  const port = await freePort();
  return startStudio(process.execPath, [tsx, 'src/tooling/studio.ts', '--port', String(port), ...extra], { DATABASE_URL: databaseUrl }, /Prisma Studio is running at http:\/\/127\.0\.0\.1:(\d+)\//);
};

/** A SQLite file with the app's tables and two plants, one beyond 2^53, as the app would leave it. */
async function sqliteWithPlants(file: string): Promise<void> {
  await applyMigrations({ databaseUrl: `file:${file}`, log: () => {} });
  const database = new Database(file);
  try {
    database.prepare(`INSERT INTO "User" ("name", "role") VALUES ('studio-owner', 'member')`).run();
    const insert = database.prepare(`INSERT INTO "Plant" ("id", "name", "ownerId") VALUES (?, ?, 1)`);
    insert.run(BEYOND_2_53, 'Beyond 2^53');
    insert.run(SMALL, 'Small');
  } finally {
    database.close();
  }
}

const sqliteNames = (file: string) => {
  const database = new Database(file, { readonly: true });
  try {
    return database.prepare(`SELECT CAST("id" AS TEXT) AS id, "name" FROM "Plant" ORDER BY "id"`).all() as { id: string; name: string }[];
  } finally {
    database.close();
  }
};

type StudioAdapter = ReturnType<typeof createSQLiteAdapter>;
type AdapterTable = Parameters<StudioAdapter['update']>[0]['table'];

/**
 * Studio's page, without the page: its adapter for the engine, on its BFF client, against this Studio. The BFF's
 * last answer is kept: Studio's CLI serialises a driver's error without its message (an Error's own fields
 * only: SQLite's `code`, PostgreSQL's `code`), so the page's error says nothing; the answer says why.
 */
async function studioPage(origin: string, engine: 'sqlite' | 'postgresql') {
  let lastAnswer = '';
  const executor = createStudioBFFClient({
    url: `${origin}/bff`,
    fetch: async (...args) => {
      const response = await fetch(...args);
      lastAnswer = await response.clone().text();
      return response;
    },
  });
  const adapter: StudioAdapter = engine === 'sqlite' ? createSQLiteAdapter({ executor }) : createPostgresAdapter({ executor });
  const [introspectionError, introspection] = await adapter.introspect({});
  expect(introspectionError, 'Studio reads the tables').toBeNull();
  const table = introspection!.schemas[engine === 'sqlite' ? 'main' : 'public']!.tables.Plant! as AdapterTable;
  const rows = async () => {
    const [error, result] = await adapter.query({ table, pageIndex: 0, pageSize: 25, sortOrder: [] }, { abortSignal: new AbortController().signal });
    expect(error, 'Studio reads the plants').toBeNull();
    return result!.rows;
  };
  return {
    rows,
    /** Renames the row Studio shows with this name, as its table's cell editor does: why it failed, or null. */
    rename: async (name: string, to: string) => {
      const row = (await rows()).find((shown) => shown.name === name)!;
      const [error] = await adapter.update({ table, row, changes: { name: to } }, {});
      return error ? lastAnswer : null;
    },
    /** What its SQL console sends: why it failed, or null. */
    sql: async (sql: string) => ((await adapter.raw({ sql }, { abortSignal: new AbortController().signal }))[0] ? lastAnswer : null),
  };
}

test.describe('Prisma Studio (npm run studio) on SQLite', () => {
  let dir: string;
  let file: string;
  let studio: Studio;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-studio-'));
    file = path.join(dir, 'plants.db');
    await sqliteWithPlants(file);
    studio = await npmRunStudio(`file:${file}`);
  });

  test.afterAll(async () => {
    await studio?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('works under the CSP, and nothing it does leaves this machine', async ({ page }) => {
    const origin = studio.origin;
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __csp: string[] }).__csp = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    await page.goto(`${origin}/`);
    await page.getByText('Plant', { exact: true }).click();
    await expect(page.getByText('Beyond 2^53', { exact: true })).toBeVisible();
    // The page reports "studio_launched" after it has read the tables; by the time a table's rows show, it has.
    await expect.poll(() => requests.filter((url) => url === `${origin}/telemetry`).length).toBeGreaterThan(0);

    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    // Whatever the page tried beyond that was refused by the browser: its own calls to Prisma, nothing of Studio's own.
    const violations = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
    for (const violation of violations) expect(violation).toMatch(/^connect-src https:\/\/checkpoint\.prisma\.io\//);
  });

  test('shows an id beyond 2^53 rounded, as docs/commands.md warns (9007199254740993 as …992)', async ({ page }) => {
    await page.goto(`${studio.origin}/`);
    await page.getByText('Plant', { exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: 'Beyond 2^53' });
    await expect(row).toContainText('9007199254740992');
    await expect(row).not.toContainText('9007199254740993');
  });

  test('says it is read-only, and refuses an edit made as its page makes one and its SQL console', async () => {
    expect(studio.output()).toMatch(/read-only: its edits are refused \(npm run studio -- --write to edit; docs\/commands\.md, "Prisma Studio"\)/);
    const page = await studioPage(studio.origin, 'sqlite');
    expect(await page.rename('Small', 'Renamed in Studio')).toContain('SQLITE_READONLY');
    expect(await page.sql(`UPDATE "Plant" SET "name" = 'Renamed by SQL' RETURNING "name"`)).toContain('SQLITE_READONLY');
    expect(sqliteNames(file)).toEqual([
      { id: String(SMALL), name: 'Small' },
      { id: String(BEYOND_2_53), name: 'Beyond 2^53' },
    ]);
  });

  test('answers on 127.0.0.1 only', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    test.skip(external === undefined, 'this machine has no address but loopback');
    const port = Number(new URL(studio.origin).port);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: external, port }, () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});

test('npm run studio -- --write edits, and says what an edit can do to ids beyond 2^53', async () => {
  test.setTimeout(180_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-studio-write-'));
  const file = path.join(dir, 'plants.db');
  let studio: Studio | undefined;
  try {
    await sqliteWithPlants(file);
    studio = await npmRunStudio(`file:${file}`, ['--write']);
    expect(studio.output()).toMatch(/can WRITE\. On SQLite it shows ids beyond 2\^53 rounded, and an edit or a delete of such a row changes the plant whose id is the rounded number/);
    const page = await studioPage(studio.origin, 'sqlite');
    expect(await page.rename('Small', 'Renamed in Studio')).toBeNull();
    expect(sqliteNames(file)).toContainEqual({ id: String(SMALL), name: 'Renamed in Studio' });
  } finally {
    await studio?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("npx prisma studio opens the app's database from the app's own DATABASE_URL form (file:./…), read-only", async () => {
  test.setTimeout(180_000);
  // Relative to the project's folder, where `npx prisma` finds prisma.config.ts and the app resolves it.
  const relative = path.join('test-results', `studio-npx-${process.pid}`);
  mkdirSync(path.join(projectRoot, relative), { recursive: true });
  const file = path.join(projectRoot, relative, 'plants.db');
  let studio: Studio | undefined;
  try {
    await sqliteWithPlants(file);
    const port = await freePort();
    studio = await startStudio('npx', ['prisma', 'studio', '--port', String(port), '--browser', 'none'], { DATABASE_URL: `file:./${relative}/plants.db` }, /Prisma Studio is running at:[\s\S]{0,40}?http:\/\/localhost:(\d+)/);
    const page = await studioPage(studio.origin, 'sqlite');
    expect((await page.rows()).map((row) => row.name).sort()).toEqual(['Beyond 2^53', 'Small']);
    expect(await page.rename('Small', 'Renamed in Studio')).toContain('SQLITE_READONLY');
    expect(sqliteNames(file)).toContainEqual({ id: String(SMALL), name: 'Small' });
  } finally {
    await studio?.stop();
    rmSync(path.join(projectRoot, relative), { recursive: true, force: true });
  }
});

test.describe('Prisma Studio (npm run studio) on PostgreSQL', () => {
  const binaries = postgresBinDir();
  let postgres: PrivatePostgres | undefined;
  let database: TestDatabase | undefined;
  let studio: Studio | undefined;

  test.skip(binaries === undefined, 'PostgreSQL is not installed here (no initdb on PATH or in /usr/lib/postgresql/*/bin)');

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    postgres = await startPrivatePostgres();
    database = await createPostgresDatabase(postgres.url, 'plant_store_studio_');
    await applyMigrations({ databaseUrl: database.url, log: () => {} });
    await database.execute(`INSERT INTO "User" ("name", "role") VALUES ('studio-owner', 'member')`);
    await database.execute(`INSERT INTO "Plant" ("id", "name", "ownerId") VALUES (?, 'Beyond 2^53', 1), (?, 'Small', 1)`, [BEYOND_2_53, SMALL]);
    studio = await npmRunStudio(database.url);
  });

  test.afterAll(async () => {
    await studio?.stop();
    await database?.drop();
    postgres?.stop();
  });

  test('refuses an edit made as its page makes one, and shows int8 exactly', async () => {
    const page = await studioPage(studio!.origin, 'postgresql');
    expect((await page.rows()).map((row) => String(row.id)).sort()).toEqual([String(SMALL), String(BEYOND_2_53)].sort());
    // SQLSTATE 25006, read_only_sql_transaction: "cannot execute UPDATE in a read-only transaction".
    expect(await page.rename('Small', 'Renamed in Studio')).toContain('"25006"');
    const names = await database!.query<{ name: string }>(`SELECT "name" FROM "Plant" ORDER BY "id"`);
    expect(names.map((row) => row.name)).toEqual(['Small', 'Beyond 2^53']);
  });
});
