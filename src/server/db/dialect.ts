import 'server-only';

import { Prisma } from '@/generated/prisma/client';

import { engine } from './client';

/**
 * A read inside a transaction that holds its rows until the transaction ends, so what it read is still what a write
 * of the same transaction changes: PostgreSQL's `FOR UPDATE`; SQLite needs none (one writer at a time, and this
 * client's transactions take turns with every other statement: db/client.ts).
 */
export const LOCKING_READ: Prisma.Sql = engine === 'postgresql' ? Prisma.sql`FOR UPDATE` : Prisma.empty;
