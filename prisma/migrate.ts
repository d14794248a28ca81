// The project's migration runner (`npm start`, `npm run db:migrate`): applies prisma/migrations/*/migration.sql with
// better-sqlite3, because Prisma 7's CLI needs a native schema engine that not every machine can download. It keeps
// `_prisma_migrations` exactly as Prisma's SQLite engine does, so `prisma migrate deploy` can take over any time.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

export interface ApplyMigrationsOptions {
  /** A `file:` URL, resolved the way the app's Prisma adapter resolves it. */
  databaseUrl: string;
  migrationsDir?: string;
  log?: (line: string) => void;
}

interface MigrationFile {
  name: string;
  script: string;
  checksum: string;
}

interface MigrationRecord {
  migration_name: string;
  checksum: string;
  started_at: number | string;
  finished_at: number | string | null;
  rolled_back_at: number | string | null;
  logs: string | null;
}

const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

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

/**
 * The file the app's adapter opens for this URL: `@prisma/adapter-better-sqlite3` strips `file:` and hands the rest
 * to SQLite, so `file:./x.db` is relative to the working directory and `file:/abs` and `file:///abs` are absolute.
 */
export function databaseFilePath(databaseUrl: string): string {
  if (!databaseUrl.startsWith('file:')) {
    throw new Error(`DATABASE_URL must be a SQLite file: URL, got "${databaseUrl}"`);
  }
  return path.resolve(databaseUrl.slice('file:'.length));
}

function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Like Prisma, a checkout that only changed line endings (git on Windows) still matches. */
function matchesChecksum(script: string, checksum: string): boolean {
  const lineEndingVariants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return lineEndingVariants.some((variant) => sha256Hex(variant) === checksum);
}

function readMigrationFiles(migrationsDir: string): MigrationFile[] {
  if (!fs.existsSync(migrationsDir)) throw new Error(`No migrations folder at ${migrationsDir}`);
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const scriptPath = path.join(migrationsDir, name, 'migration.sql');
      if (!fs.existsSync(scriptPath)) throw new Error(`Migration ${name} has no migration.sql`);
      const bytes = fs.readFileSync(scriptPath);
      return { name, script: bytes.toString('utf8'), checksum: sha256Hex(bytes) };
    });
}

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

/** Prisma's engine writes Unix milliseconds; rows from other tools may hold SQLite's text timestamps. */
function formatTimestamp(value: number | string): string {
  return typeof value === 'number' ? new Date(value).toISOString() : value;
}

/** Throws, as Prisma does, when the recorded history cannot be continued safely. */
function assertHistoryContinuable(history: MigrationRecord[], files: MigrationFile[]): void {
  const failed = history.find((record) => record.finished_at === null && record.rolled_back_at === null);
  if (failed) {
    throw new Error(
      `Migration ${failed.migration_name} is recorded as failed (started at ${formatTimestamp(failed.started_at)})` +
        (failed.logs ? ` with:\n${failed.logs.trim()}\n` : '. ') +
        `Resolve it with \`prisma migrate resolve --rolled-back ${failed.migration_name}\` (or --applied) first.`,
    );
  }
  for (const record of history) {
    if (record.rolled_back_at !== null) continue;
    const file = files.find((candidate) => candidate.name === record.migration_name);
    if (file && !matchesChecksum(file.script, record.checksum)) {
      throw new Error(
        `Migration ${record.migration_name} was modified after it was applied ` +
          `(checksum in database ${record.checksum}, file ${file.checksum}). Restore the applied migration.sql.`,
      );
    }
  }
}

function isApplied(history: MigrationRecord[], name: string): boolean {
  return history.some((record) => record.migration_name === name && record.rolled_back_at === null);
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

export async function applyMigrations(options: ApplyMigrationsOptions): Promise<{ applied: string[] }> {
  const { databaseUrl, migrationsDir = DEFAULT_MIGRATIONS_DIR, log = console.log } = options;
  const files = readMigrationFiles(migrationsDir);

  const filePath = databaseFilePath(databaseUrl);
  fs.mkdirSync(path.dirname(filePath), { recursive: true });
  const db = new Database(filePath, { timeout: BUSY_TIMEOUT_MS });
  try {
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
    for (const record of readHistory(db)) {
      if (!files.some((file) => file.name === record.migration_name)) {
        log(`warning: applied migration ${record.migration_name} is not in ${migrationsDir}`);
      }
    }
    if (applied.length === 0) log('database is up to date');
    return { applied };
  } finally {
    db.close();
  }
}

const isRunDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isRunDirectly) {
  try {
    await applyMigrations({ databaseUrl: process.env.DATABASE_URL ?? 'file:./data/plants.db' });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
