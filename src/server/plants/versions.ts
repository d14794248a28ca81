import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { databaseFilePath } from '@/server/db/migrate-sqlite';

import { plantScope, type PlantScope } from './scope';
import { scopeVersion, type SqliteVersionWatch, watchSqliteVersions } from './version-watch';

export { scopeVersion };

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
 * Read before the list's rows or in the same statement, never after: a change that commits between the two
 * makes the ETag older than the answer, which costs the next poll a 200, never a stale 304; read after, it
 * could name a change the answer lacks, and the next poll would get a stale 304.
 *
 * Two ways to read it: `plantListVersion` before the procedure (at once on SQLite, below; a query otherwise),
 * and, where that would be a query and no `If-None-Match` could spare the procedure, a member's list reads it
 * in its own statement, beside the rows (`ownerVersionColumn`, service.ts listPlants): one snapshot with them
 * on both engines, and one round trip fewer (docs/performance.md, "Where the time goes"). Not where the watch answers:
 * its answer costs ~1 µs, the column more than that.
 *
 * On SQLite the versions are kept in the process (version-watch.ts) and the answer is a string, at once: no
 * query, no turn of the event loop. On PostgreSQL, and on SQLite when the watch cannot read the file, the
 * answer is the read to run (on the request's turn): the caller's row through the app's client. PostgreSQL has no synchronous way to learn that another
 * instance committed: a LISTEN/NOTIFY cache would answer from memory until the notification arrives, and a
 * client that changed a plant on one instance and polls another at once could get a stale 304.
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
    return scopeVersion(scope, row?.version);
  }
  const [row] = await db.$queryRaw<{ version: string }[]>`SELECT CAST("version" AS TEXT) AS version FROM "PlantListVersion" WHERE "ownerId" = ${scope.ownerId}`;
  return scopeVersion(scope, row?.version);
}

/** The version, now: at once when the watch keeps it, else read through the app's client. */
export async function plantListVersionNow(actor: Actor): Promise<string> {
  const version = plantListVersion(actor);
  return typeof version === 'string' ? version : version();
}

/**
 * A member's version as a column of the statement that reads their list's rows (`listVersion`, the count as
 * text or null): a scalar subquery of the primary key, which both engines run once per statement (SQLite
 * once-only, PostgreSQL an InitPlan), in the statement's snapshot. Members only: an admin's version is a sum
 * over every owner's row, which would cost every admin list a read per owner; theirs is read before
 * (listPlants), from the watch on SQLite.
 */
export function ownerVersionColumn(ownerId: number): Prisma.Sql {
  return Prisma.sql`(SELECT CAST(v."version" AS TEXT) FROM "PlantListVersion" v WHERE v."ownerId" = ${ownerId}) AS "listVersion"`;
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
