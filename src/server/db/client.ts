import 'server-only';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import type { Database } from 'better-sqlite3';

import { PrismaClient } from '@/generated/prisma/client';
import { PrismaClient as PostgresPrismaClient } from '@/generated/prisma-postgresql/client';
import { type DatabaseEngine, databaseEngine } from '@/server/db/database-url';
import { applyMigrations } from '@/server/db/migrate';
import { asDatabaseUnavailable } from '@/server/db/unavailable';

import { POSTGRES_CONNECT_TIMEOUT_MS, postgresqlAdapter } from './postgresql-pool';
import { isolateTransactions, type SqliteConnection } from './sqlite-isolation';
import { prepareEachStatementOnce } from './sqlite-statements';
import { type Queryable, timeStatements } from './statement-timing';

/**
 * The data layer's one door to the database. DATABASE_URL picks the engine, here and once: `file:` is SQLite
 * (embedded, one machine), `postgresql://` is PostgreSQL (several instances, several machines). What each engine's
 * client needs lives beside this file, one job a file: the PostgreSQL pool's tuning (postgresql-pool.ts), SQLite's
 * statements prepared once (sqlite-statements.ts) and its transactions isolated (sqlite-isolation.ts), statement
 * timing (statement-timing.ts), giving SQLite's free pages back (sqlite-vacuum.ts), and the error codes the
 * services ask about (error-codes.ts).
 *
 * Loading this module opens nothing. The one way to a client is `openDatabase`, which applies the migrations
 * first: the folder of a SQLite file, the file and its tables exist before the client's first connection.
 */

/**
 * How long a write waits for SQLite's single writer lock before it fails. Parallel creates queue up here
 * instead of surfacing SQLITE_BUSY to a client.
 */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Prisma gives a transaction 2 s to start by default; under load (100 parallel writes on a pool of 10
 * connections) that is exceeded, and the request fails. A transaction (the webhook worker's, an endpoint's
 * creation) waits for a connection, or on SQLite for its turn, as long as a single statement would.
 */
const transactionOptions = { maxWait: Math.max(POSTGRES_CONNECT_TIMEOUT_MS, BUSY_TIMEOUT_MS), timeout: 10_000 };

/** The SQLite client's connection, for what only a script can do (sqlite-vacuum.ts). */
let openSqliteConnection: SqliteConnection | undefined;
export const sqliteConnection = () => openSqliteConnection;

/**
 * The part of the configuration the database needs, declared here so the data layer stands below config.ts
 * (which imports db/database-url.ts) instead of in a loop with it; the parsed configuration fits it as it is.
 */
export type DatabaseSettings = { DATABASE_URL: string; DATABASE_POOL_SIZE: number; SQLITE_SYNCHRONOUS: 'full' | 'normal'; METRICS?: 'on' | 'off' };

function createPrismaClient({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE, METRICS }: DatabaseSettings) {
  const metrics = METRICS === 'on';
  if (databaseEngine(databaseUrl) === 'postgresql') {
    // Both clients are generated from the same models (src/tooling/postgres-schema.test.ts holds them equal), so their
    // APIs match; the SQLite client's type stands for both.
    return new PostgresPrismaClient({ adapter: postgresqlAdapter(databaseUrl, DATABASE_POOL_SIZE, metrics), transactionOptions }) as unknown as PrismaClient;
  }
  // The journal mode (WAL) is set on the file by the migration runner and persists with it.
  const adapter = new PrismaBetterSqlite3({ url: databaseUrl, timeout: BUSY_TIMEOUT_MS });
  const connect = adapter.connect.bind(adapter);
  adapter.connect = async () => {
    const connection = await connect();
    prepareEachStatementOnce((connection as unknown as { client: Database }).client);
    // Timed inside the turn-taking below: the statement's own time, not its wait for a transaction to end.
    if (metrics) timeStatements(connection as unknown as Queryable);
    isolateTransactions(connection as unknown as SqliteConnection, (connection as unknown as { client: Database }).client);
    openSqliteConnection = connection as unknown as SqliteConnection;
    return connection;
  };
  return new PrismaClient({ adapter, transactionOptions });
}

/** What `db` is until `openDatabase` has run: any use says so, instead of opening a database too early. */
const notOpenYet = new Proxy({} as PrismaClient, {
  get(_target, property) {
    throw new Error(`the database was used (db.${String(property)}) before openDatabase() applied the migrations and opened it`);
  },
});

/**
 * The client of this process, for the services. An ES module binding that `openDatabase` sets once: modules
 * that import it see the open client from then on.
 */
export let db: PrismaClient = notOpenYet;

/** The engine of the open database (set by `openDatabase`, with `db`). */
export let engine: DatabaseEngine;

/**
 * Applies pending migrations, then creates the client and sends its first statement, then makes it `db`. A
 * database that cannot be used (a folder that cannot be created, a file that is not SQLite or is read-only, a
 * PostgreSQL server that does not answer) rejects with a DatabaseUnavailableError whose one line names
 * DATABASE_URL and the path or host.
 *
 * SQLite durability: better-sqlite3 builds SQLite with synchronous=NORMAL for WAL, which survives a crashed
 * process but can lose the last commits when the machine loses power. FULL syncs the log on every commit,
 * so a 200 means the plant is on disk. `SQLITE_SYNCHRONOUS=normal` trades that for write speed. The
 * setting is per connection: it is the first statement sent.
 *
 * PostgreSQL: one round trip, so a wrong URL or an unreachable server stops the start with its reason.
 */
export async function openDatabase(settings: DatabaseSettings, { log }: { log?: (line: string) => void } = {}): Promise<PrismaClient> {
  if (db !== notOpenYet) throw new Error('openDatabase() runs once per process');
  const databaseUrl = settings.DATABASE_URL;
  await applyMigrations({ databaseUrl, log });
  const client = createPrismaClient(settings);
  const openedEngine = databaseEngine(databaseUrl);
  try {
    if (openedEngine === 'sqlite') await client.$executeRawUnsafe(`PRAGMA synchronous = ${settings.SQLITE_SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL'}`);
    else await client.$queryRaw`SELECT 1`;
  } catch (error) {
    await client.$disconnect().catch(() => {});
    throw asDatabaseUnavailable(error, databaseUrl) ?? error;
  }
  db = client;
  engine = openedEngine;
  return client;
}
