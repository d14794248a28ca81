import 'server-only';

import { createHash } from 'node:crypto';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import type { Database, Statement } from 'better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';

import { PrismaClient } from '@/generated/prisma/client';
import { PrismaClient as PostgresPrismaClient } from '@/generated/prisma-postgresql/client';
import { type DatabaseEngine, databaseEngine, postgresConnection } from '@/server/db/database-url';
import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { applyMigrations } from '@/server/db/migrate';
import { asDatabaseUnavailable } from '@/server/db/unavailable';
import { databaseStatementDuration, type PoolFigures, watchDatabasePool } from '@/server/observability/metrics';

/**
 * The data layer's one door to the database. DATABASE_URL picks the engine: `file:` is SQLite (embedded, one
 * machine), `postgresql://` is PostgreSQL (several instances, several machines). Everything that differs
 * between the two stays in this file and in prisma/.
 *
 * Loading this module opens nothing. The one way to a client is `openDatabase`, which applies the migrations
 * first: the folder of a SQLite file, the file and its tables exist before the client's first connection.
 */

/**
 * How long a write waits for SQLite's single writer lock before it fails. Parallel creates queue up here
 * instead of surfacing SQLITE_BUSY to a client.
 */
const BUSY_TIMEOUT_MS = 10_000;

/** A request waits this long for a pooled connection before it fails (as a 500) instead of hanging. */
const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Prisma gives a transaction 2 s to start by default; under load (100 parallel writes on a pool of 10
 * connections) that is exceeded, and the request fails. A transaction (the webhook worker's, an endpoint's
 * creation) waits for a connection, or on SQLite for its turn, as long as a single statement would.
 */
const transactionOptions = { maxWait: Math.max(POSTGRES_CONNECT_TIMEOUT_MS, BUSY_TIMEOUT_MS), timeout: 10_000 };

/**
 * Named statements are parsed and planned once per connection instead of on every call. The name is the
 * statement's hash, so the same SQL always finds its prepared copy.
 */
const statementNames = new Map<string, string>();
function statementName({ sql }: { sql: string }): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `ps_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    // Statements come from a handful of query shapes; the bound only guards against a surprise.
    if (statementNames.size > 1_000) statementNames.clear();
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * Prisma's SQLite adapter prepares every statement anew on each call (7–8 % of a request's CPU in
 * `npm run bench -- --profile`), though Prisma sends the same few statement texts over and over. Here
 * each text is prepared once per connection, and its result columns read once (better-sqlite3 builds them
 * anew on every `columns()`; a text's columns are fixed by the schema, which migrations set before the
 * server starts). The adapter calls `bind(args)` on what `prepare` returns, which would fix a cached
 * statement's parameters for good, so the wrapper hands the arguments to each call instead. better-sqlite3
 * runs a statement to completion synchronously, so one is never in use twice.
 */
function prepareEachStatementOnce(database: Database): void {
  const prepare = database.prepare.bind(database) as (sql: string) => Statement<unknown[]>;
  type Prepared = ReturnType<typeof preparedOnce>;
  const prepared = new Map<string, Prepared>();
  function preparedOnce(statement: Statement<unknown[]>) {
    let columns: ReturnType<Statement<unknown[]>['columns']> | undefined;
    const readColumns = () => (columns ??= statement.columns());
    const withArguments = (args: unknown[]) => ({
      reader: statement.reader,
      columns: readColumns,
      run: () => statement.run(args),
      raw: () => ({ all: () => statement.raw(true).all(args) }),
    });
    return { ...withArguments([]), bind: withArguments };
  }
  database.prepare = ((sql: string) => {
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = preparedOnce(prepare(sql));
      // Statement texts come from a handful of query shapes; the bound only guards against a surprise.
      if (prepared.size >= 1_000) prepared.clear();
      prepared.set(sql, statement);
    }
    return statement;
  }) as unknown as Database['prepare'];
}

type Release = () => void;

/** A first-come, first-served lock: whoever holds it hands it straight to the next in line. */
function fifoLock() {
  let held = false;
  const waiting: ((release: Release) => void)[] = [];
  const release: Release = () => {
    const next = waiting.shift();
    if (next) next(release);
    else held = false;
  };
  return {
    get held() {
      return held;
    },
    acquire(): Promise<Release> {
      if (!held) {
        held = true;
        return Promise.resolve(release);
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

type SqliteConnection = {
  queryRaw: (query: unknown) => Promise<unknown>;
  executeRaw: (query: unknown) => Promise<unknown>;
  executeScript: (script: string) => Promise<void>;
  startTransaction: (isolationLevel?: unknown) => Promise<{ commit: () => Promise<void>; rollback: () => Promise<void> }>;
};

/**
 * Prisma's SQLite adapter runs every statement on one connection, and only its transactions wait for each
 * other. A statement from another request that came while a transaction was open (between its BEGIN and
 * COMMIT, while it awaited) would run inside that transaction: it would see its uncommitted rows, and its
 * own write would be undone by that transaction's ROLLBACK (a create refused as a duplicate id rolls back).
 * Here a statement outside a transaction waits until none is open, and transactions take turns with them.
 * better-sqlite3 runs each statement synchronously, so a statement that finds the lock free runs at once.
 */
function isolateTransactions(connection: SqliteConnection, database: Database): void {
  const lock = fifoLock();
  for (const method of ['queryRaw', 'executeRaw', 'executeScript'] as const) {
    const run = (connection[method] as (argument: unknown) => Promise<unknown>).bind(connection);
    (connection as Record<string, unknown>)[method] = async (argument: unknown) => {
      if (!lock.held) return run(argument);
      const release = await lock.acquire();
      try {
        return await run(argument);
      } finally {
        release();
      }
    };
  }
  const startTransaction = connection.startTransaction.bind(connection);
  connection.startTransaction = async (isolationLevel) => {
    const release = await lock.acquire();
    try {
      const transaction = await startTransaction(isolationLevel);
      for (const end of ['commit', 'rollback'] as const) {
        const finish = transaction[end].bind(transaction);
        // A COMMIT that SQLite refuses while keeping the transaction (a deferred foreign key; SQLITE_BUSY outside
        // WAL) is followed by Prisma's rollback(), which sends no ROLLBACK: end it before another statement runs in it.
        transaction[end] = () =>
          finish().finally(() => {
            if (database.inTransaction) database.exec('ROLLBACK');
            release();
          });
      }
      return transaction;
    } catch (error) {
      release();
      throw error;
    }
  };
}

/** The SQLite client's connection, for what only a script can do (returnFreePages). */
let sqliteConnection: SqliteConnection | undefined;

type Queryable = { queryRaw: (query: unknown) => Promise<unknown>; executeRaw: (query: unknown) => Promise<unknown> };
/**
 * The part of the configuration the database needs, declared here so the data layer stands below config.ts
 * (which imports db/database-url.ts) instead of in a loop with it; the parsed configuration fits it as it is.
 */
export type DatabaseSettings = { DATABASE_URL: string; DATABASE_POOL_SIZE: number; SQLITE_SYNCHRONOUS: 'full' | 'normal'; METRICS?: 'on' | 'off' };

/**
 * Times every statement the client sends, on the connection and in its transactions, for
 * `plantstore_db_statement_duration_seconds` (METRICS=on). On PostgreSQL a statement outside a transaction
 * includes its wait for a pooled connection: what a request waits for, which is what an operator needs.
 */
function timeStatements<T extends Queryable & { startTransaction?: (isolationLevel?: unknown) => Promise<Queryable> }>(connection: T): T {
  for (const [method, kind] of [['queryRaw', 'query'], ['executeRaw', 'execute']] as const) {
    const run = connection[method].bind(connection);
    const timer = databaseStatementDuration.labels(kind);
    connection[method] = async (query: unknown) => {
      const end = timer.startTimer();
      try {
        return await run(query);
      } finally {
        end();
      }
    };
  }
  const startTransaction = connection.startTransaction?.bind(connection);
  if (startTransaction) connection.startTransaction = async (isolationLevel) => timeStatements(await startTransaction(isolationLevel));
  return connection;
}

/**
 * Each statement of the API reads a few index entries: no parallel workers and no JIT compiling for them. Both
 * start from the planner's cost, which is high when its estimate is (a name search's pair of characters it has
 * no statistics of is 0.5 % of the store): at 10 M plants they added 10–50 ms to a search that reads 0.02 ms
 * (docs/performance.md, "Search at scale"). Set on each new connection before the pool hands
 * it out (pg-pool's `onConnect`, which it awaits), so its first statement waits for the SET instead of being
 * queued behind it on a busy client (pg deprecates that, and pg 9 refuses it). Not as startup `options`: those
 * would replace the operator's PGOPTIONS, and PgBouncer and other poolers refuse startup options they do not
 * know. Should the server refuse the SET, the connection serves as it is: the settings only save time.
 */
async function withoutParallelWorkersOrJit(client: { query: (sql: string) => Promise<unknown> }): Promise<void> {
  await client.query('SET jit = off; SET max_parallel_workers_per_gather = 0').catch(() => {});
}

function createPrismaClient({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE, METRICS }: DatabaseSettings) {
  const metrics = METRICS === 'on';
  if (databaseEngine(databaseUrl) === 'postgresql') {
    const { connectionString, schema } = postgresConnection(databaseUrl);
    const adapter = new PrismaPg(
      {
        connectionString,
        max: DATABASE_POOL_SIZE,
        connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
        application_name: 'plant-store',
        // pg-pool waits for the promise onConnect returns before handing the connection out (its `_promiseTry`);
        // @types/pg types it as returning void.
        // eslint-disable-next-line @typescript-eslint/no-misused-promises
        onConnect: withoutParallelWorkersOrJit,
      },
      { schema, statementNameGenerator: statementName },
    );
    const connect = adapter.connect.bind(adapter);
    adapter.connect = async () => {
      const connection = await connect();
      // The adapter's `client` is its pg.Pool, which opens no connection before its first query.
      if (!metrics) return connection;
      const pool = (connection as unknown as { client: PoolFigures }).client;
      watchDatabasePool(pool, DATABASE_POOL_SIZE);
      return timeStatements(connection as unknown as Queryable) as unknown as typeof connection;
    };
    // Both clients are generated from the same models (src/tooling/postgres-schema.test.ts holds them equal), so their
    // APIs match; the SQLite client's type stands for both.
    return new PostgresPrismaClient({ adapter, transactionOptions }) as unknown as PrismaClient;
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
    sqliteConnection = connection as unknown as SqliteConnection;
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

const AUTO_VACUUM_INCREMENTAL = 2;
/** At most this many pages in one slice: 4 MB written to the WAL, about what SQLite checkpoints at once. */
const FREE_PAGES_SLICE_MAX = 1_024;

const pragmaNumber = async (name: string) => Number(Object.values((await db.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0] ?? {})[0] ?? 0);

/**
 * Gives at most `size` of the SQLite file's free pages back to the file system, in one statement and one
 * commit. SQLite keeps the pages of deleted rows in the file and reuses them for later writes, so without
 * this the file stays as large as it ever was (an expired day of idempotency keys, a week of delivered
 * webhooks, deleted plants). `PRAGMA incremental_vacuum(N)` gives back N pages only when stepped to its end,
 * which the adapter's statements never do (they step once: one page each), so it runs as a script on the
 * client's connection, taking its turn with transactions like any statement (isolateTransactions).
 */
export async function returnFreePages(size: number): Promise<SliceResult> {
  const before = await pragmaNumber('freelist_count');
  if (before === 0 || sqliteConnection === undefined) return { done: 0, more: false };
  // Never 0 or less: that would give back every free page at once.
  await sqliteConnection.executeScript(`PRAGMA incremental_vacuum(${Math.max(1, Math.min(Math.floor(size), before))})`);
  const after = await pragmaNumber('freelist_count');
  return { done: Math.max(0, before - after), more: after > 0 && after < before };
}

/** The SQLite file's free pages: a number in its header, read at once. */
export function countFreePages(): Promise<number> {
  return pragmaNumber('freelist_count');
}

/**
 * Gives the SQLite file's free pages back at the start and then every `everyMs` (a minute), in slices
 * (background/slices.ts), whoever freed them. Needs `auto_vacuum = INCREMENTAL`, which the migration runner
 * gives every new file; on an older file (its free pages are reused, never given back) and on PostgreSQL
 * (whose own vacuum keeps freed space for reuse) there is no such job: resolves to undefined.
 */
export async function startReturningFreePages(options: { everyMs?: number; onError: (error: unknown) => void }): Promise<BackgroundJob | undefined> {
  if (engine !== 'sqlite' || (await pragmaNumber('auto_vacuum')) !== AUTO_VACUUM_INCREMENTAL) return undefined;
  return startBackgroundJob({
    name: 'sqlite-free-pages',
    everyMs: options.everyMs ?? 60_000,
    step: returnFreePages,
    sizes: { initial: 64, max: FREE_PAGES_SLICE_MAX },
    backlog: countFreePages,
    onError: options.onError,
  });
}

/** True when the error is the database refusing a second row with the same unique key. */
export function isUniqueViolation(error: unknown): boolean {
  return prismaCode(error) === 'P2002';
}

/** True when the database refuses a row whose reference (foreign key) points at no row. */
export function isForeignKeyViolation(error: unknown): boolean {
  return prismaCode(error) === 'P2003';
}

/** True when the row an update or delete names does not exist. */
export function isRecordMissing(error: unknown): boolean {
  return prismaCode(error) === 'P2025';
}

function prismaCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}
