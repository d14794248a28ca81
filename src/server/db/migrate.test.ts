import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PrismaClient } from '@/generated/prisma/client';
import { applyMigrationsInProcesses } from '@test-support/migrations-in-parallel';

import { applyMigrations, databaseFilePath } from './migrate';

const committedMigrationsDir = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));
const initMigration = fs.readdirSync(committedMigrationsDir).find((name) => name.endsWith('_init'));
if (!initMigration) throw new Error(`no *_init migration in ${committedMigrationsDir}`);
/** Every committed migration, in the order the runner applies them. */
const committedMigrations = fs
  .readdirSync(committedMigrationsDir)
  .filter((name) => fs.existsSync(path.join(committedMigrationsDir, name, 'migration.sql')))
  .sort();
const checksumOf = (name: string) => createHash('sha256').update(fs.readFileSync(path.join(committedMigrationsDir, name, 'migration.sql'))).digest('hex');

// What the engine writes for `role Role @default(admin)`: SQLite cannot alter a default, so Prisma redefines the
// table that ApiToken (ON DELETE CASCADE) and Plant (RESTRICT) reference.
const REDEFINE_USER_MIGRATION = `-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_User" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'admin',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_User" ("createdAt", "id", "name", "role") SELECT "createdAt", "id", "name", "role" FROM "User";
DROP TABLE "User";
ALTER TABLE "new_User" RENAME TO "User";
CREATE UNIQUE INDEX "User_name_key" ON "User"("name");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
`;

let tempDir: string;
let databasePath: string;
let databaseUrl: string;
let logLines: string[];
const log = (line: string) => logLines.push(line);

beforeEach(() => {
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-migrate-'));
  // A folder that does not exist yet: the runner creates it, as on a first deploy.
  databasePath = path.join(tempDir, 'data', 'plants.db');
  databaseUrl = `file:${databasePath}`;
  logLines = [];
});

afterEach(() => {
  fs.rmSync(tempDir, { recursive: true, force: true });
});

function withDatabase<T>(query: (db: Database.Database) => T): T {
  const db = new Database(databasePath);
  try {
    return query(db);
  } finally {
    db.close();
  }
}

function migrationRows() {
  return withDatabase((db) => db.prepare('SELECT * FROM "_prisma_migrations"').all()) as Array<Record<string, unknown>>;
}

/** A private copy of the committed migrations that a test may edit. */
function copyOfMigrations(): string {
  const copy = path.join(tempDir, 'migrations');
  fs.cpSync(committedMigrationsDir, copy, { recursive: true });
  return copy;
}

function addMigration(migrationsDir: string, name: string, script: string): void {
  fs.mkdirSync(path.join(migrationsDir, name));
  fs.writeFileSync(path.join(migrationsDir, name, 'migration.sql'), script);
}

describe('applyMigrations', () => {
  it('applies the committed migrations to a fresh file', async () => {
    const { applied } = await applyMigrations({ databaseUrl, log });

    expect(applied).toEqual(committedMigrations);
    expect(logLines).toEqual(committedMigrations.map((name) => `applied migration ${name}`));
    const tables = withDatabase((db) =>
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all(),
    );
    expect(tables).toEqual(expect.arrayContaining(['User', 'ApiToken', 'Plant', '_prisma_migrations']));
  });

  it('records the migrations in _prisma_migrations as Prisma does', async () => {
    await applyMigrations({ databaseUrl, log });

    const columns = withDatabase((db) => db.pragma('table_info(_prisma_migrations)')) as Array<{
      name: string;
      type: string;
    }>;
    expect(columns.map(({ name, type }) => `${name} ${type}`)).toEqual([
      'id TEXT',
      'checksum TEXT',
      'finished_at DATETIME',
      'migration_name TEXT',
      'logs TEXT',
      'rolled_back_at DATETIME',
      'started_at DATETIME',
      'applied_steps_count INTEGER UNSIGNED',
    ]);
    expect(migrationRows()).toEqual(
      committedMigrations.map((name) => ({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        checksum: checksumOf(name),
        finished_at: expect.any(Number),
        migration_name: name,
        logs: null,
        rolled_back_at: null,
        started_at: expect.any(Number),
        applied_steps_count: 1,
      })),
    );
  });

  it('applies nothing on a second run', async () => {
    await applyMigrations({ databaseUrl, log });
    logLines = [];

    const { applied } = await applyMigrations({ databaseUrl, log });

    expect(applied).toEqual([]);
    expect(logLines).toEqual(['database is up to date']);
    expect(migrationRows()).toHaveLength(committedMigrations.length);
  });

  it('leaves the file in WAL mode', async () => {
    await applyMigrations({ databaseUrl, log });

    expect(withDatabase((db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
  });

  it('refuses to run when an applied migration.sql was modified', async () => {
    const migrationsDir = copyOfMigrations();
    await applyMigrations({ databaseUrl, migrationsDir, log });
    fs.appendFileSync(path.join(migrationsDir, initMigration, 'migration.sql'), '\n-- edited after deploy\n');

    await expect(applyMigrations({ databaseUrl, migrationsDir, log })).rejects.toThrow(
      new RegExp(`Migration ${initMigration} was modified after it was applied`),
    );
  });

  it('accepts a migration.sql whose line endings changed, as Prisma does', async () => {
    const migrationsDir = copyOfMigrations();
    await applyMigrations({ databaseUrl, migrationsDir, log });
    const scriptPath = path.join(migrationsDir, initMigration, 'migration.sql');
    fs.writeFileSync(scriptPath, fs.readFileSync(scriptPath, 'utf8').replaceAll('\n', '\r\n'));

    await expect(applyMigrations({ databaseUrl, migrationsDir, log })).resolves.toEqual({ applied: [] });
  });

  it('refuses to run when a failed migration is recorded', async () => {
    await applyMigrations({ databaseUrl, log });
    withDatabase((db) =>
      db.prepare('UPDATE "_prisma_migrations" SET finished_at = NULL, logs = ?').run('near "TABLE": syntax error'),
    );

    await expect(applyMigrations({ databaseUrl, log })).rejects.toThrow(
      new RegExp(`Migration ${initMigration} is recorded as failed[^]*syntax error`),
    );
  });

  it('rolls a failing migration back entirely and applies it once fixed', async () => {
    const migrationsDir = copyOfMigrations();
    await applyMigrations({ databaseUrl, migrationsDir, log });
    addMigration(
      migrationsDir,
      '29991231000000_add_rating',
      'ALTER TABLE "Plant" ADD COLUMN "rating" INTEGER;\nCREATE TABLE "Plant" ("id" INTEGER);\n',
    );

    await expect(applyMigrations({ databaseUrl, migrationsDir, log })).rejects.toThrow(
      /Migration 29991231000000_add_rating failed: table "Plant" already exists/,
    );
    expect(migrationRows()).toHaveLength(committedMigrations.length);
    const plantColumns = () =>
      withDatabase((db) => db.prepare("SELECT name FROM pragma_table_info('Plant')").pluck().all());
    expect(plantColumns()).not.toContain('rating');

    fs.writeFileSync(
      path.join(migrationsDir, '29991231000000_add_rating', 'migration.sql'),
      'ALTER TABLE "Plant" ADD COLUMN "rating" INTEGER;\n',
    );
    await expect(applyMigrations({ databaseUrl, migrationsDir, log })).resolves.toEqual({
      applied: ['29991231000000_add_rating'],
    });
    expect(plantColumns()).toContain('rating');
  });

  it("keeps child rows when a migration redefines their parent table (Prisma's RedefineTables)", async () => {
    const migrationsDir = copyOfMigrations();
    await applyMigrations({ databaseUrl, migrationsDir, log });
    withDatabase((db) => {
      db.prepare('INSERT INTO "User" (id, name) VALUES (1, ?)').run('ada');
      db.prepare('INSERT INTO "ApiToken" (userId, hash, prefix) VALUES (1, ?, ?)').run('hash', 'pst_');
      db.prepare('INSERT INTO "Plant" (id, name, ownerId) VALUES (1, ?, 1)').run('fern');
    });
    addMigration(migrationsDir, '29991231000000_admin_by_default', REDEFINE_USER_MIGRATION);

    await applyMigrations({ databaseUrl, migrationsDir, log });

    withDatabase((db) => {
      expect(db.prepare('SELECT count(*) FROM "ApiToken"').pluck().get()).toBe(1);
      expect(db.prepare('SELECT count(*) FROM "Plant"').pluck().get()).toBe(1);
      expect(db.prepare("SELECT dflt_value FROM pragma_table_info('User') WHERE name = 'role'").pluck().get()).toBe(
        "'admin'",
      );
    });
  });

  it('warns about applied migrations that are missing from the folder', async () => {
    const migrationsDir = copyOfMigrations();
    await applyMigrations({ databaseUrl, migrationsDir, log });
    fs.rmSync(path.join(migrationsDir, initMigration), { recursive: true });
    logLines = [];

    await expect(applyMigrations({ databaseUrl, migrationsDir, log })).resolves.toEqual({ applied: [] });
    expect(logLines).toContain(`warning: applied migration ${initMigration} is not in ${migrationsDir}`);
  });

  it('refuses a non-empty database that has no migration history', async () => {
    fs.mkdirSync(path.dirname(databasePath));
    withDatabase((db) => db.exec('CREATE TABLE "Plant" ("id" INTEGER)'));

    await expect(applyMigrations({ databaseUrl, log })).rejects.toThrow(/not empty \(Plant\)/);
  });

  it('applies a migration once when two calls start together', async () => {
    const results = await Promise.all([applyMigrations({ databaseUrl, log }), applyMigrations({ databaseUrl, log })]);

    expect(results.map((result) => result.applied).sort()).toEqual([[], committedMigrations]);
    expect(migrationRows()).toHaveLength(committedMigrations.length);
  });

  it('applies a migration once when several processes start together', { timeout: 120_000 }, async () => {
    // All of them race for the fresh file at one instant. Which process applies which migration is up to the
    // scheduler; what matters is that each is applied exactly once, in order, and the history is complete.
    const appliedByProcess = await applyMigrationsInProcesses(databaseUrl, 4);

    expect(appliedByProcess.flat().sort()).toEqual(committedMigrations);
    for (const applied of appliedByProcess) expect(applied).toEqual(committedMigrations.filter((name) => applied.includes(name)));
    const rows = migrationRows();
    expect(rows.map((row) => row.migration_name).sort()).toEqual(committedMigrations);
    for (const row of rows) {
      expect(row.checksum).toBe(checksumOf(String(row.migration_name)));
      expect(row.finished_at).not.toBeNull();
      expect(row.rolled_back_at).toBeNull();
    }
    // The schema is exactly what one runner alone makes.
    const schemaOf = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name != '_prisma_migrations' ORDER BY type, name").all();
      } finally {
        db.close();
      }
    };
    const alone = path.join(tempDir, 'alone.db');
    await applyMigrations({ databaseUrl: `file:${alone}`, log });
    expect(schemaOf(databasePath)).toEqual(schemaOf(alone));
  });

  it('gives a schema the generated Prisma client can use, int64 ids included', async () => {
    await applyMigrations({ databaseUrl, log });
    const prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: databaseUrl }) });
    try {
      const owner = await prisma.user.create({ data: { name: 'ada' } });
      const largestId = 9223372036854775807n;
      const smallestId = -9223372036854775808n;
      await prisma.plant.create({ data: { id: largestId, name: 'Monstera', ownerId: owner.id } });
      await prisma.plant.create({ data: { id: smallestId, name: 'Fern', tag: 'shade', ownerId: owner.id } });

      expect(owner.role).toBe('member');
      expect(await prisma.plant.findUnique({ where: { id: largestId } })).toMatchObject({
        id: largestId,
        name: 'Monstera',
        tag: null,
        ownerId: owner.id,
      });
      const ids = (await prisma.plant.findMany({ orderBy: { id: 'asc' } })).map((plant) => plant.id);
      expect(ids).toEqual([smallestId, largestId]);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe('databaseFilePath', () => {
  it('resolves file: URLs to the file the Prisma adapter opens', () => {
    expect(databaseFilePath('file:./data/plants.db')).toBe(path.resolve('data/plants.db'));
    expect(databaseFilePath('file:data/plants.db')).toBe(path.resolve('data/plants.db'));
    expect(databaseFilePath('file:/srv/plants.db')).toBe('/srv/plants.db');
    expect(databaseFilePath('file:///srv/plants.db')).toBe('/srv/plants.db');
  });

  it('rejects URLs that are not SQLite files', () => {
    expect(() => databaseFilePath('postgresql://localhost/plants')).toThrow(/file: URL/);
  });
});
