import 'server-only';

import Database from 'better-sqlite3';

import type { PlantScope } from './scope';

/**
 * A scope's version as every reader names it (this watch, the read through the app's client, a list's own
 * statement: plants/versions.ts): the ETag hashes it, so a 200's ETag and a later 304's are the same only if
 * each spells it alike. `count` is PlantListVersion's (a member's row, or the sum of all), absent when none.
 */
export function scopeVersion(scope: PlantScope, count: string | null | undefined): string {
  return scope.everyOwner ? `all:${count ?? '0'}` : `owner ${scope.ownerId}:${count ?? '0'}`;
}

/** Scopes whose version a process keeps at once; past it the map starts over (a read refills an entry). */
const KEPT_SCOPES = 10_000;

/**
 * How long a read waits for a lock (in WAL mode only while a log is recovered or reset). Short, since a wait
 * holds the event loop: past it the read falls back to the app's client (plants/versions.ts).
 */
const BUSY_TIMEOUT_MS = 100;

/**
 * The plant list versions of a SQLite file, kept in the process and invalidated instead of read per request,
 * so a conditional list's 304 needs no query and no turn of the event loop.
 *
 * It has a read-only connection of its own, never the app's: the app's connection runs Prisma's
 * transactions, and a statement on it while one is open (between BEGIN and COMMIT, across awaits) would read
 * uncommitted versions; a transaction rolled back after that would leave a version number that a later,
 * different change takes again, and a 304 for it would be stale. On its own connection `PRAGMA data_version`
 * changes whenever any other connection commits: the app's own, another process's on the same file, a
 * `sqlite3` shell's. It is one synchronous call that looks at the file's shared memory (WAL) or change
 * counter, so every version kept is dropped at the first request after any commit anywhere, with nothing to
 * hear and nothing to miss. (The events seam, plants/events.ts, would only tell this process's commits, and
 * only those a service remembers to announce.)
 *
 * A version is read after data_version, so what is kept is never older than the data_version it is kept
 * under: a commit between the two makes the next request's data_version differ, which drops it again.
 */
export function watchSqliteVersions(file: string) {
  const connection = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  const ownerVersion = connection.prepare('SELECT CAST("version" AS TEXT) FROM "PlantListVersion" WHERE "ownerId" = ?').pluck();
  const allVersions = connection.prepare('SELECT CAST(COALESCE(SUM("version"), 0) AS TEXT) FROM "PlantListVersion"').pluck();
  const kept = new Map<string, string>();
  let keptAt: unknown;

  return {
    /** The scope's version as plants/versions.ts names it (`owner 7:12`, `all:40`); throws when the file cannot be read. */
    version(scope: PlantScope): string {
      const now = dataVersion.get();
      if (now !== keptAt) {
        kept.clear();
        keptAt = now;
      }
      const key = scope.everyOwner ? 'all' : `owner ${scope.ownerId}`;
      let version = kept.get(key);
      if (version === undefined) {
        version = scopeVersion(scope, (scope.everyOwner ? allVersions.get() : ownerVersion.get(scope.ownerId)) as string | undefined);
        if (kept.size >= KEPT_SCOPES) kept.clear();
        kept.set(key, version);
      }
      return version;
    },
    close: () => connection.close(),
  };
}

export type SqliteVersionWatch = ReturnType<typeof watchSqliteVersions>;
