import 'server-only';

import type { Prisma } from '@/generated/prisma/client';
import { db, engine } from '@/server/db/client';

/**
 * Writes that stand alone (one statement each, as a create is) share a commit on SQLite when enough of them
 * arrive together. Every SQLite commit costs about the same whatever it holds: with synchronous=FULL the
 * write-ahead log's fsync, and the name search's FTS5 index writes a new segment at each commit
 * (docs/decisions/0017-creates-share-a-commit.md). Under parallel creates most of a create's CPU is its commit:
 * 406 µs per create alone against 234 in groups of 8 and 138 in groups of 32, in process (the same record).
 * Over HTTP a group holds at most the calls the work queue lets run at once (ten:
 * http/guards/work-queue.ts); only a tRPC batch brings more.
 *
 * A statement given here waits for the end of this turn of the event loop (`setImmediate`: the statements
 * of the requests whose turn came in the same turn of the loop are waiting by then; one still reading its
 * body joins a later group); then those waiting run, in the order they came, in one transaction, each with
 * its own result, none answered before the commit that holds it. Fewer than COMMIT_GROUP_MIN run alone,
 * each its own commit, as without this. Should a group fail (one statement refused, or the commit), all of
 * it is undone (by Prisma's ROLLBACK, by SQLite itself, or where SQLite keeps a refused COMMIT's transaction
 * open, by db/sqlite-isolation.ts before another statement runs), and each statement runs again alone and meets its
 * own outcome: no statement's error reaches another's caller. On PostgreSQL each statement runs
 * at once on a pooled connection, as before: commits of different connections proceed in parallel there.
 *
 * Only for statements whose outcome does not depend on running alone: in a group each sees the rows of
 * those before it, as it would have run one after the other.
 */
export function commitTogether<T>(statement: () => Prisma.PrismaPromise<T>): Promise<T> {
  if (engine !== 'sqlite') return statement();
  return new Promise<T>((resolve, reject) => {
    waiting.push({ statement, resolve, reject } as Waiting);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  });
}

/** The most statements one commit holds: the write lock is held for about this many statements' time. */
export const COMMIT_GROUP_MAX = 64;

/**
 * Fewer statements than this run alone, each its own commit: Prisma's transaction costs more than a commit
 * (~880 µs of CPU per transaction against ~300 for the implicit commit of a lone statement with
 * synchronous=FULL, ~650 against ~110 with NORMAL, in process), so a group pays only from about 4 (FULL) or
 * 6 (NORMAL) statements on (docs/decisions/0017-creates-share-a-commit.md).
 */
export const COMMIT_GROUP_MIN = 6;

type Waiting = { statement: () => Prisma.PrismaPromise<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void };

let waiting: Waiting[] = [];
let flushScheduled = false;

function flush(): void {
  flushScheduled = false;
  const group = waiting.length > COMMIT_GROUP_MAX ? waiting.splice(0, COMMIT_GROUP_MAX) : waiting;
  if (group === waiting) waiting = [];
  else {
    flushScheduled = true;
    setImmediate(flush);
  }
  if (group.length < COMMIT_GROUP_MIN) return group.forEach(runAlone);
  let statements: Prisma.PrismaPromise<unknown>[];
  try {
    statements = group.map(({ statement }) => statement());
  } catch {
    return group.forEach(runAlone);
  }
  db.$transaction(statements).then(
    (results) => group.forEach(({ resolve }, index) => resolve(results[index])),
    () => group.forEach(runAlone),
  );
}

function runAlone({ statement, resolve, reject }: Waiting): void {
  let running: Prisma.PrismaPromise<unknown>;
  try {
    running = statement();
  } catch (error) {
    return reject(error);
  }
  running.then(resolve, reject);
}
