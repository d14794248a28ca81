import 'server-only';

import type { Prisma } from '@/generated/prisma/client';
import { db, engine } from '@/server/db/client';

/**
 * Writes that stand alone (one statement each, as a create is) share a commit on SQLite when they arrive
 * together. Every SQLite commit costs the same whatever it holds: with synchronous=FULL the write-ahead log's
 * fsync, and the name search's FTS5 index writes a new segment at each commit (docs/performance.md, "Round
 * six: create"). Under parallel creates most of a create's CPU was that commit: 408 µs per create alone
 * against 134 in groups of 32 (docs/performance.md, "Round seven: create").
 *
 * A statement given here waits for the end of this turn of the event loop (`setImmediate`: the requests
 * that came in the same turn have reached their own statements by then), then those waiting run, in the
 * order they came, in one transaction: each statement's result is its own, and none is answered before the
 * commit that holds it. Should the group fail (one statement refused, the commit refused), SQLite undid
 * all of it, and each statement runs again alone, meeting its own outcome as it would have without the
 * group: no statement's error reaches another's caller. A lone statement runs alone, without BEGIN and
 * COMMIT. On PostgreSQL each statement runs on its own pooled connection at once, as before: there commits
 * of different connections proceed in parallel, and the server groups their log flushes itself.
 *
 * Only for statements whose outcome does not depend on running alone: the group runs them in one
 * transaction, so each sees the rows of those before it (as it would have, run one after the other).
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
  if (group.length === 1) return runAlone(group[0]!);
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
