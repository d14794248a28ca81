/**
 * The database a test server runs on, on the engine the suite was started for: SQLite (a temp file, the
 * default) or PostgreSQL (TEST_DATABASE=postgresql: a fresh database on the server TEST_POSTGRES_URL names,
 * which the integration suite's global setup starts privately when none is given). Tests reach behind the
 * app's back only through this: to age a token, break a table, or read what is stored.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import Database from 'better-sqlite3';
import pg from 'pg';

import { foldForSearch } from '@/shared/plants';

export type TestEngine = 'sqlite' | 'postgresql';

export const testEngine: TestEngine = process.env.TEST_DATABASE === 'postgresql' ? 'postgresql' : 'sqlite';

export type TestDatabase = {
  engine: TestEngine;
  /** DATABASE_URL for the app. */
  url: string;
  /** Runs one statement; `?` placeholders on both engines. Resolves to the number of rows changed. */
  execute: (sql: string, params?: unknown[]) => Promise<number>;
  /** Runs one query; integers come back as bigint on both engines. */
  query: <Row extends Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<Row[]>;
  /** The app's tables (and Prisma's bookkeeping table). */
  tables: () => Promise<string[]>;
  /** A DateTime value as this engine stores Prisma's DateTime, for UPDATEs behind the app's back. */
  dateTime: (at: Date) => Promise<unknown>;
  /** The files that hold this database's data on disk (SQLite: the file and its WAL; PostgreSQL: its relation files and the server's WAL). */
  filesOnDisk: () => Promise<string[]>;
  /** Deletes the database. */
  drop: () => Promise<void>;
};

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const entry = path.join(dir, name);
    return statSync(entry).isDirectory() ? filesUnder(entry) : [entry];
  });
}

function sqliteDatabase(file: string, ownedDir: string | undefined): TestDatabase {
  const withFile = <T>(work: (database: Database.Database) => T): T => {
    const database = new Database(file);
    try {
      database.pragma('busy_timeout = 10000');
      database.defaultSafeIntegers(true);
      return work(database);
    } finally {
      database.close();
    }
  };
  return {
    engine: 'sqlite',
    url: `file:${file}`,
    execute: async (sql, params = []) => withFile((database) => database.prepare(sql).run(...params).changes),
    query: async <Row,>(sql: string, params: unknown[] = []) => withFile((database) => database.prepare(sql).all(...params) as Row[]),
    tables: async () =>
      withFile((database) => database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").pluck().all() as string[]),
    // Prisma's SQLite adapter writes DateTimes as ISO text (…+00:00) or, from older tools, Unix milliseconds:
    // learn which from a stored row and keep its zone suffix.
    dateTime: async (at) =>
      withFile((database) => {
        const sample = database.prepare('SELECT "createdAt" AS value, typeof("createdAt") AS type FROM "ApiToken" LIMIT 1').get() as
          | { value: string | bigint; type: string }
          | undefined;
        if (sample?.type === 'integer') return at.getTime();
        const suffix = /(Z|[+-]\d\d:\d\d)$/.exec(String(sample?.value ?? 'Z'))?.[1] ?? 'Z';
        return at.toISOString().replace('Z', suffix);
      }),
    filesOnDisk: async () => [file, `${file}-wal`].filter((candidate) => existsSync(candidate)),
    drop: async () => {
      if (ownedDir) rmSync(ownedDir, { recursive: true, force: true });
    },
  };
}

// BIGINT and COUNT(*) as bigint, as better-sqlite3 gives them with safe integers: tests compare ids exactly.
const bigintTypes = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format as 'text')) };

function postgresDatabase(serverUrl: string, name: string): TestDatabase {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const withClient = async <T,>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url.toString(), types: bigintTypes as pg.CustomTypesConfig });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const numbered = (sql: string) => {
    let index = 0;
    return sql.replace(/\?/g, () => `$${++index}`);
  };
  return {
    engine: 'postgresql',
    url: url.toString(),
    execute: (sql, params = []) => withClient(async (client) => (await client.query(numbered(sql), params)).rowCount ?? 0),
    query: <Row extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
      withClient(async (client) => (await client.query<Row>(numbered(sql), params)).rows),
    tables: () =>
      withClient(async (client) => {
        const { rows } = await client.query<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        );
        return rows.map((row) => row.name);
      }),
    // Prisma keeps DateTimes as UTC in TIMESTAMP(3) (no zone). pg would send a Date with the machine's own
    // offset, which PostgreSQL drops when it stores into a zoneless column; UTC text stores what Prisma reads.
    dateTime: async (at) => at.toISOString().replace('Z', ''),
    filesOnDisk: () =>
      withClient(async (client) => {
        // What is committed may still sit in the WAL or in shared buffers: write it all out first.
        await client.query('CHECKPOINT');
        const { rows } = await client.query<{ data_directory: string; oid: number }>(
          "SELECT current_setting('data_directory') AS data_directory, oid FROM pg_database WHERE datname = current_database()",
        );
        const { data_directory: dataDir, oid } = rows[0]!;
        return [...filesUnder(path.join(dataDir, 'base', String(oid))), ...filesUnder(path.join(dataDir, 'pg_wal')).filter((file) => /\/[0-9A-F]{24}$/.test(file))];
      }),
    drop: async () => {
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A new, empty database on the suite's engine. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (testEngine === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-test-'));
    return sqliteDatabase(path.join(dir, 'test.db'), dir);
  }
  const serverUrl = process.env.TEST_POSTGRES_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE=postgresql needs TEST_POSTGRES_URL (the integration suite’s global setup sets it)');
  return createPostgresDatabase(serverUrl);
}

/** A new, empty database on the PostgreSQL server `serverUrl` names (the bench's too); drop() removes it. */
export async function createPostgresDatabase(serverUrl: string, prefix = 'plant_store_test_'): Promise<TestDatabase> {
  const name = `${prefix}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return postgresDatabase(serverUrl, name);
}

/**
 * Plants written straight into a server's table as `owner`'s, many at a time, as another process would write
 * them (the triggers keep the search index and the events): the API tests that need a store past a cap or a
 * walk budget fill it in seconds.
 */
export async function insertPlantsOf(database: TestDatabase, owner: string, rows: { id: bigint; name: string; tag?: string | null }[]): Promise<void> {
  const [user] = await database.query<{ id: bigint }>('SELECT id FROM "User" WHERE name = ?', [owner]);
  if (!user) throw new Error(`no user ${owner}`);
  const now = await database.dateTime(new Date());
  for (let start = 0; start < rows.length; start += 1_000) {
    const batch = rows.slice(start, start + 1_000);
    await database.execute(
      `INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
      batch.flatMap((row) => [row.id, row.name, foldForSearch(row.name), row.tag ?? null, user.id, now]),
    );
  }
}
