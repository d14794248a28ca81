import type { Database } from 'better-sqlite3';

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

/** What Prisma's SQLite adapter hands out as its connection, as far as the turn-taking below wraps it. */
export type SqliteConnection = {
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
export function isolateTransactions(connection: SqliteConnection, database: Database): void {
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
