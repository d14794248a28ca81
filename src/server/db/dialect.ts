import 'server-only';

import { Prisma } from '@/generated/prisma/client';

import { db, engine } from './client';
import type { DatabaseEngine } from './database-url';

/*
 * SQL that is written differently on the two engines but means the same, for the services: each chosen here, by
 * the engine of the open database, so a service writes what it means and not which engine it is on.
 */

/**
 * The one of `choices` for the open database's engine, looked up when called (the engine is known once the
 * database is open): code that differs per engine names each engine's part once, and this chooses it.
 */
export const byEngine = <T>(choices: Readonly<Record<DatabaseEngine, T>>): T => choices[engine];

/**
 * A join that keeps its left side as the outer loop: SQLite's planner reads CROSS JOIN as that order;
 * PostgreSQL plans a JOIN's order itself (and takes no ON after CROSS JOIN).
 */
export const orderedJoin = (): Prisma.Sql => byEngine({ sqlite: Prisma.sql`CROSS JOIN`, postgresql: Prisma.sql`JOIN` });

/** `column` holds `text` (both folded the same way): SQLite's `instr`, PostgreSQL's `strpos`. */
export function containsText(column: Prisma.Sql, text: string): Prisma.Sql {
  return engine === 'sqlite' ? Prisma.sql`instr(${column}, ${text}) > 0` : Prisma.sql`strpos(${column}, ${text}) > 0`;
}

/**
 * Runs a write whose condition reads other rows so that two such writes (those passing the same `lockKey`) never
 * both pass it: on SQLite one UPDATE takes the database's single write lock before it reads anything, in this
 * process and any other, so its subquery sees every committed write and nobody writes until it ends. PostgreSQL
 * lets two transactions each read the other's row as still valid (write skew on different rows), so there the
 * write runs in a transaction behind one transaction-scoped advisory lock. Resolves to the rows it changed.
 */
export async function writeAlone(statement: Prisma.Sql, lockKey: number): Promise<number> {
  if (engine === 'sqlite') return db.$executeRaw(statement);
  const [, changed] = await db.$transaction([db.$executeRaw`SELECT pg_advisory_xact_lock(${lockKey})`, db.$executeRaw(statement)]);
  return changed;
}

/**
 * A read inside a transaction that holds its rows until the transaction ends, so what it read is still what a write
 * of the same transaction changes: PostgreSQL's `FOR UPDATE`; SQLite needs none (one writer at a time, and this
 * client's transactions take turns with every other statement: db/client.ts).
 */
export const LOCKING_READ: Prisma.Sql = engine === 'postgresql' ? Prisma.sql`FOR UPDATE` : Prisma.empty;
