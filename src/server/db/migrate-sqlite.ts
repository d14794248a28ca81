// SQLite's half of the migration runner: applies the migrations with better-sqlite3 and keeps `_prisma_migrations`
// exactly as Prisma's SQLite engine does, so `prisma migrate deploy` can take over any time.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';

import { databaseFilePath } from './database-url';
import {
  assertHistoryContinuable,
  isApplied,
  type MigrationFile,
  type MigrationRecord,
} from './migration-history';

export { databaseFilePath };

/** A second runner waits this long for the first to finish its migration instead of failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 60_000;

// Verbatim from Prisma's SQLite schema engine (sql-schema-connector, flavour/sqlite.rs, create_migrations_table).
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
);
`;

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function ensureMigrationsTable(db: Database.Database): void {
  if (hasTable(db, '_prisma_migrations')) return;
  const userTables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all() as string[];
  // Prisma refuses this too (P3005): the init migration would collide with tables made some other way.
  if (userTables.length > 0) {
    throw new Error(
      `The database is not empty (${userTables.join(', ')}) but has no _prisma_migrations table; ` +
        'baseline it with `prisma migrate resolve --applied <migration>` or start from an empty file',
    );
  }
  db.exec(CREATE_MIGRATIONS_TABLE);
}

function readHistory(db: Database.Database): MigrationRecord[] {
  return db
    .prepare(
      `SELECT migration_name, checksum, started_at, finished_at, rolled_back_at, logs
       FROM "_prisma_migrations" ORDER BY started_at`,
    )
    .all() as MigrationRecord[];
}

/** Runs the script and its bookkeeping row in one transaction, so a failure leaves the database as it was. */
function applyMigration(db: Database.Database, migration: MigrationFile): void {
  const startedAt = Date.now();
  try {
    db.exec(migration.script);
  } catch (error) {
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
  }
  // Foreign keys are off while migrating (see applyMigrations), so table redefinitions must be checked here.
  const violations = db.pragma('foreign_key_check') as unknown[];
  if (violations.length > 0) {
    throw new Error(`Migration ${migration.name} leaves foreign key violations: ${JSON.stringify(violations)}`);
  }
  // Prisma's engine binds DATETIME values as Unix milliseconds on SQLite; its reader expects the same.
  db.prepare(
    `INSERT INTO "_prisma_migrations"
       (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
     VALUES (?, ?, ?, ?, NULL, NULL, ?, 1)`,
  ).run(randomUUID(), migration.checksum, Date.now(), migration.name, startedAt);
}

/**
 * Switching a file to WAL needs a moment alone with it, and SQLite's busy timeout does not cover that
 * switch: a second runner starting at the same instant gets SQLITE_BUSY at once. So it waits and retries,
 * within the same bound as the busy timeout.
 */
function enableWal(db: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}

/**
 * The database holds token hashes, user names, webhook URLs and their encrypted secrets, and kept answers: a
 * file this creates is its owner's alone (0600, and the folders it creates 0700), where SQLite's own default
 * would be readable by every user of the machine (0644 under the usual umask). SQLite gives the -wal and
 * -shm it creates beside the file the file's own mode. A file or folder that exists keeps the mode its
 * operator gave it, and a stricter umask still applies.
 */
function createPrivately(filePath: string): void {
  fs.mkdirSync(path.dirname(filePath), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(filePath, 'wx', 0o600));
  } catch {
    // It exists (a file, another runner's, a folder), or cannot be made here: SQLite, opening it next, meets
    // the same and says why in terms unavailable.ts turns into the start's one line.
  }
}

export function applySqliteMigrations(databaseUrl: string, files: MigrationFile[], log: (line: string) => void): { applied: string[]; history: MigrationRecord[] } {
  const filePath = databaseFilePath(databaseUrl);
  createPrivately(filePath);
  const db = new Database(filePath, { timeout: BUSY_TIMEOUT_MS });
  try {
    // Only a file without tables takes this (on any other it changes nothing): freed pages can then be given
    // back to the file system a batch at a time (returnFreePages in db/sqlite-vacuum.ts) instead of staying in the
    // file for good. An older file keeps reusing its free pages; `VACUUM` once, offline, converts it (docs/api.md, "Safe retries").
    db.pragma('auto_vacuum = INCREMENTAL');
    enableWal(db);
    // Prisma's table redefinitions toggle foreign keys inside the script, which SQLite ignores within a transaction;
    // with them on, dropping the old table would fire ON DELETE CASCADE on its children.
    db.pragma('foreign_keys = OFF');

    // BEGIN IMMEDIATE takes the write lock before reading the history, so a concurrent runner waits and then sees
    // what this one recorded instead of creating the table or applying a migration a second time.
    db.transaction(() => ensureMigrationsTable(db)).immediate();
    const applied: string[] = [];
    for (const migration of files) {
      const appliedNow = db
        .transaction(() => {
          const history = readHistory(db);
          assertHistoryContinuable(history, files);
          if (isApplied(history, migration.name)) return false;
          applyMigration(db, migration);
          return true;
        })
        .immediate();
      if (appliedNow) {
        applied.push(migration.name);
        log(`applied migration ${migration.name}`);
      }
    }
    return { applied, history: readHistory(db) };
  } finally {
    db.close();
  }
}

