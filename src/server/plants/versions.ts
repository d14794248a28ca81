import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { databaseFilePath } from '@/server/db/migrate-sqlite';

import { plantScope, type PlantScope } from './scope';
import { type SqliteVersionWatch, watchSqliteVersions } from './version-watch';

/**
 * The version of everything a plant list could show its caller: it changes with every committed change the
 * caller can see, and only then. The REST list's ETag is made from it (http/rest/conditional.ts), so a
 * client polling with `If-None-Match` is answered 304 without the list's query running.
 *
 * PlantListVersion counts the committed changes of each owner's plants; triggers on Plant bump it in the
 * statement that makes the change (migrations *_plant_list_versions), whichever door, process or instance
 * made it, so the version is right across processes on SQLite and across instances on PostgreSQL.
 * - A member sees their own plants: their row's count. Another owner's change does not touch it.
 * - An admin sees every plant: the sum of all rows. Every change raises it and rows are never deleted, so a
 *   sum never comes back; one row per owner that ever had a plant is read (a hot row bumped by every write
 *   would queue all writers on PostgreSQL).
 * Read before the list's query: a change that commits between the two makes the ETag older than the answer,
 * which costs the next poll a 200, never a stale 304.
 *
 * On SQLite the versions are kept in the process (version-watch.ts) and the answer is a string, at once: no
 * query, no turn of the event loop. On PostgreSQL, and on SQLite when the watch cannot read the file, the
 * answer is the read to run (on the request's turn): the caller's row through the app's client. PostgreSQL has no synchronous way to learn that another
 * instance committed: a LISTEN/NOTIFY cache would answer from memory until the notification arrives, and a
 * client that changed a plant on one instance and polls another at once could get a stale 304
 * (docs/performance.md, "Conditional lists without a query").
 */
export function plantListVersion(actor: Actor): string | (() => Promise<string>) {
  const scope = plantScope(actor);
  if (watch !== undefined) {
    try {
      return watch.version(scope);
    } catch {
      // The file could not be read on the watch's connection (a lock held past its timeout, the file gone):
      // the app's connection answers, as on PostgreSQL; the next request tries the watch again.
    }
  }
  return () => readPlantListVersion(scope);
}

/** The scope's version read through the app's client: one query. */
export async function readPlantListVersion(scope: PlantScope): Promise<string> {
  if (scope.everyOwner) {
    const [row] = await db.$queryRaw<{ version: string }[]>`SELECT CAST(COALESCE(SUM("version"), 0) AS TEXT) AS version FROM "PlantListVersion"`;
    return `all:${row?.version ?? '0'}`;
  }
  const [row] = await db.$queryRaw<{ version: string }[]>`SELECT CAST("version" AS TEXT) AS version FROM "PlantListVersion" WHERE "ownerId" = ${scope.ownerId}`;
  return `owner ${scope.ownerId}:${row?.version ?? '0'}`;
}

let watch: SqliteVersionWatch | undefined;

/**
 * Keeps the versions in this process where the engine allows it (SQLite), from now until `stop`. Called
 * once by the composition root after the database is open (main.ts); without it every version is read.
 */
export function keepPlantListVersions(databaseUrl: string): { stop: () => void } {
  if (!databaseUrl.startsWith('file:')) return { stop: () => {} };
  const started = watchSqliteVersions(databaseFilePath(databaseUrl));
  watch = started;
  return {
    stop() {
      if (watch === started) watch = undefined;
      started.close();
    },
  };
}
