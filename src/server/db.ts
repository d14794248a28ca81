import 'server-only';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';

import { PrismaClient } from '@/generated/prisma/client';

export const DEFAULT_DATABASE_URL = 'file:./data/plants.db';

/**
 * How long a write waits for SQLite's single writer lock before it fails. Parallel creates queue up here
 * instead of surfacing SQLITE_BUSY to a client.
 */
const BUSY_TIMEOUT_MS = 10_000;

function createPrismaClient(databaseUrl: string) {
  // The journal mode (WAL) is set on the file by the migration runner and persists with it.
  const adapter = new PrismaBetterSqlite3({ url: databaseUrl, timeout: BUSY_TIMEOUT_MS });
  return new PrismaClient({ adapter });
}

type Db = ReturnType<typeof createPrismaClient>;

// One client per process: Next.js dev reloads modules, and each reload would otherwise open the file again.
const globalForDb = globalThis as unknown as { plantStoreDb?: Db };

export const db: Db = (globalForDb.plantStoreDb ??= createPrismaClient(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL));

/**
 * Durability: better-sqlite3 builds SQLite with synchronous=NORMAL for WAL, which survives a crashed
 * process but can lose the last commits when the machine loses power. FULL syncs the log on every commit,
 * so a 200 means the plant is on disk. `SQLITE_SYNCHRONOUS=normal` trades that for write speed. The
 * setting is per connection: it is the first statement sent, and `npm start` awaits it before serving.
 */
export const databaseReady: Promise<void> = db
  .$executeRawUnsafe(`PRAGMA synchronous = ${process.env.SQLITE_SYNCHRONOUS?.toLowerCase() === 'normal' ? 'NORMAL' : 'FULL'}`)
  // Prisma's promises run when first awaited; `then` sends the statement now, ahead of any query.
  .then(() => undefined);

/** True when the error is the database refusing a second row with the same unique key. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'P2002';
}
