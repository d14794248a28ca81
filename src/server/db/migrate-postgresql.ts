// PostgreSQL's half of the migration runner: applies the migrations with pg and keeps `_prisma_migrations` as
// Prisma's PostgreSQL engine does (same table, same advisory lock), so `prisma migrate deploy` can take over.
import { randomUUID } from 'node:crypto';

import pg from 'pg';

import { postgresConnection } from './database-url';

import {
  assertHistoryContinuable,
  isApplied,
  type MigrationFile,
  type MigrationRecord,
  PRISMA_ADVISORY_LOCK_ID,
} from './migration-history';

// As Prisma's PostgreSQL schema engine creates it (sql-schema-connector, flavour/postgres, create_migrations_table).
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function tablesInSchema(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((row) => row.table_name);
}

async function ensureMigrationsTable(client: pg.Client): Promise<void> {
  const tables = await tablesInSchema(client);
  if (tables.includes('_prisma_migrations')) return;
  // Prisma refuses this too (P3005): the init migration would collide with tables made some other way.
  if (tables.length > 0) {
    throw new Error(
      `The database schema is not empty (${tables.join(', ')}) but has no _prisma_migrations table; ` +
        'baseline it with `prisma migrate resolve --applied <migration>` or start from an empty schema',
    );
  }
  await client.query(CREATE_MIGRATIONS_TABLE);
}

async function readHistory(client: pg.Client): Promise<MigrationRecord[]> {
  const { rows } = await client.query<MigrationRecord>(
    'SELECT migration_name, checksum, started_at, finished_at, rolled_back_at, logs FROM _prisma_migrations ORDER BY started_at',
  );
  return rows;
}

/**
 * Prisma writes `BEGIN;` … `COMMIT;` into some PostgreSQL migrations (changing an enum's values). Inside the
 * runner's own transaction that `COMMIT` would end it early, and a failure after it would leave half a
 * migration with no record. The runner's transaction already makes the whole script atomic, so those lines
 * are left out when it runs (the checksum is still the file's). Only whole lines of their own: a function
 * body's `BEGIN` (no semicolon) or `END;` is not touched.
 */
const TRANSACTION_CONTROL_LINE = /^[ \t]*(BEGIN|COMMIT|START TRANSACTION)[ \t]*;[ \t]*(--[^\n]*)?$/gim;

export function withoutTransactionControl(script: string): string {
  return script.replace(TRANSACTION_CONTROL_LINE, '-- (run inside the migration runner\'s transaction) $&');
}

/**
 * The script and its bookkeeping row commit together, so a failure leaves the database as it was (Prisma runs
 * the script without a transaction of its own and records the failure instead). A script is sent as one
 * simple-protocol query, as Prisma sends it, so it may hold many statements.
 */
async function applyMigration(client: pg.Client, migration: MigrationFile): Promise<void> {
  const startedAt = new Date();
  try {
    await client.query(withoutTransactionControl(migration.script));
  } catch (error) {
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
  }
  await client.query(
    `INSERT INTO _prisma_migrations
       (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
     VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, $4, 1)`,
    [randomUUID(), migration.checksum, migration.name, startedAt],
  );
}

export async function applyPostgresMigrations(
  databaseUrl: string,
  files: MigrationFile[],
  log: (line: string) => void,
): Promise<{ applied: string[]; history: MigrationRecord[] }> {
  const { connectionString, schema } = postgresConnection(databaseUrl);
  // A server that never answers (a dropped packet, a wrong address) stops the start after 10 s, with its reason.
  const client = new pg.Client({ connectionString, application_name: 'plant-store migrate', connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    // Several instances starting at once, or `prisma migrate deploy` beside them, take turns here; the one that
    // waited then finds the migrations recorded and applies nothing.
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [PRISMA_ADVISORY_LOCK_ID]);
    if (!rows[0]!.locked) {
      log(`waiting for the migration lock (PostgreSQL advisory lock ${PRISMA_ADVISORY_LOCK_ID}): another instance or prisma migrate holds it`);
      await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_ID]);
    }
    // The app's queries name their schema: `?schema=`, else "public" (as Prisma's client does), whatever the
    // role's own search_path would pick. Prisma creates a named schema on first migrate, so do we.
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    await client.query(`SET search_path TO ${quoteIdentifier(schema ?? 'public')}`);
    await ensureMigrationsTable(client);
    const applied: string[] = [];
    for (const migration of files) {
      await client.query('BEGIN');
      try {
        const history = await readHistory(client);
        assertHistoryContinuable(history, files);
        if (isApplied(history, migration.name)) {
          await client.query('COMMIT');
          continue;
        }
        await applyMigration(client, migration);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      applied.push(migration.name);
      log(`applied migration ${migration.name}`);
    }
    return { applied, history: await readHistory(client) };
  } finally {
    // Ending the session releases the advisory lock, also after an error.
    await client.end();
  }
}
