/**
 * The migration runner on the suite's engine, held against Prisma's own schema engine (compiled to
 * WebAssembly, the same engine `prisma migrate deploy` runs): what the runner records, Prisma reads as a
 * clean history, and what Prisma records, the runner continues. SQLite's finer cases (table redefinitions,
 * WAL, line endings) are unit tests in src/server/db/migrate.test.ts; PostgreSQL's are here, on a real server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PrismaClient } from '@/generated/prisma-postgresql/client';
import { postgresConnection } from '@/server/db/database-url';
import { applyMigrationsInProcesses } from '@test-support/migrations-in-parallel';

import { engineLayouts, externalTablesFor } from '@/server/db/engines';
import { applyMigrations } from '@/server/db/migrate';
import { PRISMA_ADVISORY_LOCK_ID } from '@/server/db/migration-history';
import { committedMigrations, startSchemaEngine } from '@/tooling/schema-engine';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';

const { migrationsDir } = engineLayouts[testEngine];
const committed = fs
  .readdirSync(migrationsDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
// The tables no Prisma schema can declare (the name search's FTS5 tables on SQLite, the shared rate-limit budget
// on PostgreSQL) are left to the migrations.
const filtersFor = (databaseUrl: string) => ({ externalTables: externalTablesFor(databaseUrl), externalEnums: [] });
const silent = () => {};

const databases: TestDatabase[] = [];
async function emptyDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

/** `_prisma_migrations`' columns as the engine's catalog describes them. */
async function bookkeepingColumns(database: TestDatabase): Promise<string[]> {
  const rows =
    database.engine === 'sqlite'
      ? await database.query<{ name: string; type: string; notnull: bigint; dflt_value: string | null }>("SELECT * FROM pragma_table_info('_prisma_migrations')")
      : await database.query<{ name: string; type: string; notnull: string; dflt_value: string | null }>(
          `SELECT column_name AS name, data_type || coalesce('(' || character_maximum_length || ')', '') AS type,
                  is_nullable AS notnull, column_default AS dflt_value
           FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
        );
  return rows.map((row) => `${row.name} ${row.type} ${String(row.notnull)} ${row.dflt_value}`);
}

describe(`the runner and Prisma's schema engine (${testEngine})`, () => {
  it('applies every committed migration to an empty database, and Prisma reads the history as clean', async () => {
    const database = await emptyDatabase();
    const { applied } = await applyMigrations({ databaseUrl: database.url, log: silent });
    expect(applied).toEqual(committed);

    const { engine, close } = await startSchemaEngine(database.url);
    try {
      const diagnosis = await engine.diagnoseMigrationHistory({
        migrationsList: committedMigrations(database.url),
        optInToShadowDatabase: false,
        filters: filtersFor(database.url),
      });
      expect(diagnosis).toEqual({ hasMigrationsTable: true, history: null, failedMigrationNames: [], editedMigrationNames: [] });
    } finally {
      await close();
    }
  });

  it('leaves nothing of prisma/schema.prisma out: the committed migrations build exactly the model (no drift)', async () => {
    // What `npm run db:new-migration` asks the engine; a branch merge that kept both sides' migrations but
    // lost a change of the model, or the other way round, fails here.
    const database = await emptyDatabase();
    const { schemaPath } = engineLayouts[testEngine];
    const { engine, close } = await startSchemaEngine(database.url);
    try {
      const { exitCode, stdout } = await engine.diff({
        from: { tag: 'migrations', ...committedMigrations(database.url) },
        to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: fs.readFileSync(schemaPath, 'utf8') }] },
        script: true,
        exitCode: true,
        filters: filtersFor(database.url),
      });
      expect(stdout?.trim() ?? '', 'the SQL a new migration would need').toMatch(/^(-- This is an empty migration\.)?$/);
      expect(exitCode).toBe(0);
    } finally {
      await close();
    }
  });

  it("continues a history Prisma's engine wrote, and keeps the same bookkeeping table", async () => {
    const byPrisma = await emptyDatabase();
    const { engine, close } = await startSchemaEngine(byPrisma.url);
    try {
      const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList: committedMigrations(byPrisma.url), filters: filtersFor(byPrisma.url) });
      expect(appliedMigrationNames).toEqual(committed);
    } finally {
      await close();
    }
    if (testEngine === 'postgresql') {
      // Prisma's engine holds the migration lock for its session, which the server ends a moment after close()
      // returns: until then the runner would rightly say it waits for the lock.
      const holders = async () =>
        Number(
          (await byPrisma.query<{ n: bigint | number }>(
            `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [PRISMA_ADVISORY_LOCK_ID],
          ))[0]!.n,
        );
      await expect.poll(holders, { timeout: 30_000, interval: 50 }).toBe(0);
    }
    const lines: string[] = [];
    expect((await applyMigrations({ databaseUrl: byPrisma.url, log: (line) => lines.push(line) })).applied).toEqual([]);
    expect(lines).toEqual(['database is up to date']);

    const byRunner = await emptyDatabase();
    await applyMigrations({ databaseUrl: byRunner.url, log: silent });
    expect(await bookkeepingColumns(byRunner)).toEqual(await bookkeepingColumns(byPrisma));
    expect(await byRunner.tables()).toEqual(expect.arrayContaining(await byPrisma.tables()));
  });

  it('applies each migration once when four processes start on one empty database together', { timeout: 120_000 }, async () => {
    const database = await emptyDatabase();
    // All of them race for the empty database at one instant.
    const appliedByProcess = await applyMigrationsInProcesses(database.url, 4);
    expect(appliedByProcess.flat().sort()).toEqual(committed);
    expect(await database.query('SELECT migration_name FROM _prisma_migrations')).toHaveLength(committed.length);
  });
});

describe.runIf(testEngine === 'postgresql')('PostgreSQL specifics', () => {
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-pg-migrations-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  function migrationsWith(name: string, script: string): string {
    const dir = path.join(scratch, 'migrations');
    fs.cpSync(migrationsDir, dir, { recursive: true });
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, 'migration.sql'), script);
    return dir;
  }

  it('rolls a failing migration back entirely, records nothing, and applies it once fixed', async () => {
    const database = await emptyDatabase();
    await applyMigrations({ databaseUrl: database.url, log: silent });
    const name = '29990101000000_add_probe';
    const failing = migrationsWith(name, 'ALTER TABLE "Plant" ADD COLUMN "migrationProbe" TEXT;\nSELECT no_such_function();\n');

    await expect(applyMigrations({ databaseUrl: database.url, migrationsDir: failing, log: silent })).rejects.toThrow(`Migration ${name} failed`);
    const columns = await database.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'Plant' AND column_name = 'migrationProbe'");
    expect(columns, 'the first statement of the failed migration is rolled back too').toEqual([]);
    expect(await database.query('SELECT migration_name FROM _prisma_migrations WHERE migration_name = ?', [name])).toEqual([]);

    fs.writeFileSync(path.join(failing, name, 'migration.sql'), 'ALTER TABLE "Plant" ADD COLUMN "migrationProbe" TEXT;\n');
    expect((await applyMigrations({ databaseUrl: database.url, migrationsDir: failing, log: silent })).applied).toEqual([name]);
  });

  it("keeps a script with Prisma's own BEGIN; … COMMIT; atomic: a failure after its COMMIT still undoes it all", async () => {
    const database = await emptyDatabase();
    await applyMigrations({ databaseUrl: database.url, log: silent });
    const name = '29990101000000_change_role';
    // The shape Prisma writes when an enum loses a value, with a failing statement after the COMMIT.
    const script = [
      '-- AlterEnum',
      'BEGIN;',
      'CREATE TYPE "Role_new" AS ENUM (\'admin\', \'member\', \'guest\');',
      'COMMIT;',
      'SELECT no_such_function();',
      '',
    ].join('\n');
    const migrations = migrationsWith(name, script);

    await expect(applyMigrations({ databaseUrl: database.url, migrationsDir: migrations, log: silent })).rejects.toThrow(`Migration ${name} failed`);
    expect(await database.query("SELECT typname FROM pg_type WHERE typname = 'Role_new'"), 'the statements before the COMMIT are undone too').toEqual([]);
    expect(await database.query('SELECT migration_name FROM _prisma_migrations WHERE migration_name = ?', [name])).toEqual([]);

    fs.writeFileSync(path.join(migrations, name, 'migration.sql'), script.replace('SELECT no_such_function();\n', ''));
    expect((await applyMigrations({ databaseUrl: database.url, migrationsDir: migrations, log: silent })).applied).toEqual([name]);
    expect(await database.query("SELECT typname FROM pg_type WHERE typname = 'Role_new'")).toHaveLength(1);
  });

  it('puts the tables in "public" without ?schema=, where the app looks, whatever the role\'s search_path says', async () => {
    const database = await emptyDatabase();
    // A role whose own schema comes first on its search_path (common since PostgreSQL 15): "$user", public.
    await database.execute('CREATE SCHEMA postgres');
    await applyMigrations({ databaseUrl: database.url, log: silent });
    const bySchema = await database.query<{ table_schema: string }>("SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name = 'Plant'");
    expect(bySchema).toEqual([{ table_schema: 'public' }]);
  });

  it('refuses to run when an applied migration.sql was modified', async () => {
    const database = await emptyDatabase();
    await applyMigrations({ databaseUrl: database.url, log: silent });
    const edited = path.join(scratch, 'edited');
    fs.cpSync(migrationsDir, edited, { recursive: true });
    fs.appendFileSync(path.join(edited, committed[0]!, 'migration.sql'), '\n-- edited\n');
    await expect(applyMigrations({ databaseUrl: database.url, migrationsDir: edited, log: silent })).rejects.toThrow(/was modified after it was applied/);
  });

  it('refuses a schema that holds tables but no migration history', async () => {
    const database = await emptyDatabase();
    await database.execute('CREATE TABLE "Plant" (id BIGINT PRIMARY KEY)');
    await expect(applyMigrations({ databaseUrl: database.url, log: silent })).rejects.toThrow(/not empty \(Plant\)/);
  });

  describe("the name search's pg_trgm index", () => {
    const searchMigration = committed.findIndex((name) => name.endsWith('_plant_name_search'));
    const migrationsBefore = () => {
      const dir = path.join(scratch, 'before-search');
      fs.mkdirSync(dir);
      for (const name of committed.slice(0, searchMigration)) fs.cpSync(path.join(migrationsDir, name), path.join(dir, name), { recursive: true });
      fs.copyFileSync(path.join(migrationsDir, 'migration_lock.toml'), path.join(dir, 'migration_lock.toml'));
      return dir;
    };

    it('refuses, changing nothing, when the role may not install pg_trgm, and goes on once someone who may has', async () => {
      const database = await emptyDatabase();
      // A role that owns its tables but may not create in the database itself (so no extension).
      const role = `weak_${path.basename(scratch).replace(/\W/g, '').toLowerCase()}`;
      const databaseName = new URL(database.url).pathname.slice(1);
      await database.execute(`CREATE ROLE ${role} LOGIN`);
      try {
        await database.execute(`GRANT CONNECT ON DATABASE "${databaseName}" TO ${role}`);
        await database.execute(`REVOKE CREATE ON DATABASE "${databaseName}" FROM PUBLIC`);
        await database.execute(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
        const url = new URL(database.url);
        url.username = role;
        await applyMigrations({ databaseUrl: url.toString(), migrationsDir: migrationsBefore(), log: silent });
        await expect(applyMigrations({ databaseUrl: url.toString(), log: silent })).rejects.toThrow(/needs the pg_trgm extension, and this role \(weak_\w+\) may not install it/);
        expect(await database.query("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).toEqual([]);
        expect(await database.query('SELECT migration_name FROM _prisma_migrations WHERE migration_name = ?', [committed[searchMigration]])).toEqual([]);

        // What the README tells the database's owner to run once.
        await database.execute('CREATE EXTENSION pg_trgm');
        expect((await applyMigrations({ databaseUrl: url.toString(), log: silent })).applied).toEqual(committed.slice(searchMigration));
        expect(await database.query(`SELECT indexname FROM pg_indexes WHERE indexname = 'Plant_nameFolded_trgm_idx'`)).toHaveLength(1);
      } finally {
        await database.execute(`REASSIGN OWNED BY ${role} TO CURRENT_USER`);
        await database.execute(`DROP OWNED BY ${role}`);
        await database.execute(`DROP ROLE ${role}`);
      }
    });

    it('uses pg_trgm where it is installed already, in another schema, and an index built beforehand', async () => {
      const database = await emptyDatabase();
      await applyMigrations({ databaseUrl: database.url, migrationsDir: migrationsBefore(), log: silent });
      await database.execute('CREATE SCHEMA extensions');
      await database.execute('CREATE EXTENSION pg_trgm SCHEMA extensions');
      // Built beforehand, as the README suggests for a large table (CONCURRENTLY cannot run in a transaction).
      await database.execute('CREATE INDEX CONCURRENTLY "Plant_nameFolded_trgm_idx" ON "Plant" USING GIN ("nameFolded" extensions.gin_trgm_ops)');
      expect((await applyMigrations({ databaseUrl: database.url, log: silent })).applied).toEqual(committed.slice(searchMigration));
      const [index] = await database.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'Plant_nameFolded_trgm_idx'`);
      expect(index?.indexdef).toContain('extensions.gin_trgm_ops');
    });
  });

  it('creates and uses the schema named by ?schema=, as Prisma does, with int64 ids intact', async () => {
    const database = await emptyDatabase();
    const url = `${database.url}?schema=plant_store`;
    expect((await applyMigrations({ databaseUrl: url, log: silent })).applied).toEqual(committed);
    const inSchema = await database.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'plant_store' ORDER BY table_name");
    expect(inSchema.map((row) => row.table_name)).toEqual([
      'AccessVersion',
      'ApiToken',
      'IdempotencyKey',
      'Plant',
      'PlantChange',
      'PlantImport',
      'PlantImportRow',
      'PlantListVersion',
      'PlantOwnerCount',
      'PlantTagCount',
      'PlantTombstone',
      'RateBudget',
      'SharedKey',
      'User',
      'WebhookDelivery',
      'WebhookEndpoint',
      '_prisma_migrations',
    ]);
    expect(await database.tables(), 'nothing in public').toEqual([]);

    const { connectionString, schema } = postgresConnection(url);
    const prisma = new PrismaClient({ adapter: new PrismaPg(connectionString, { schema }) });
    // The triggers announce their schema (src/server/db/signals.ts hears only its own).
    const listener = new pg.Client({ connectionString });
    const heard: string[] = [];
    await listener.connect();
    listener.on('notification', ({ channel, payload }) => heard.push(`${channel} ${payload}`));
    await listener.query('LISTEN plant_store_plants');
    await listener.query('LISTEN plant_store_access');
    try {
      const owner = await prisma.user.create({ data: { name: 'ada' } });
      for (const id of [9223372036854775807n, -9223372036854775808n]) await prisma.plant.create({ data: { id, name: 'Fern', ownerId: owner.id } });
      const ids = (await prisma.plant.findMany({ orderBy: { id: 'asc' } })).map((plant) => plant.id);
      expect(ids).toEqual([-9223372036854775808n, 9223372036854775807n]);
      await prisma.user.update({ where: { id: owner.id }, data: { role: 'admin' } });
      await listener.query('SELECT 1');
      // The plants' payload names the owners whose list versions moved.
      expect([...new Set(heard)].sort()).toEqual(['plant_store_access plant_store', `plant_store_plants plant_store ${owner.id}`]);
      // A statement that changes 2,000 owners' plants would name more than a payload holds (8,000 bytes, past
      // which pg_notify fails the writing transaction): it says `*`, every owner.
      heard.length = 0;
      await listener.query('SET search_path TO plant_store');
      await listener.query(`INSERT INTO "User" (name) SELECT 'many ' || i FROM generate_series(1, 2000) AS i`);
      await listener.query(`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId") SELECT u.id + 1000, 'Fern', 'fern', u.id FROM "User" u WHERE u.name LIKE 'many %'`);
      expect(heard).toEqual(['plant_store_plants plant_store *']);
    } finally {
      await prisma.$disconnect();
      await listener.end();
    }
  });
});
