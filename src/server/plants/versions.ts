import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { databaseFilePath } from '@/server/db/migrate-sqlite';
import { type ChangedOwners, onDatabaseSignal, onHeardChange, signalsHeard } from '@/server/db/signals';

import { onPlantsCommitted } from './events';
import { plantScope, type PlantScope } from './scope';
import { scopeVersion, type SqliteVersionWatch, watchSqliteVersions } from './version-watch';

export { scopeVersion };

/**
 * The version of everything a plant list could show its caller: it changes with every committed change the
 * caller can see, and only then. The REST list's ETag is made from it (http/rest/conditional.ts), so a
 * client polling with `If-None-Match` is answered 304 without the list's query running.
 *
 * PlantListVersion counts the committed changes of each owner's plants; triggers on Plant bump it in the
 * statement that makes the change (their SQL: src/tooling/plant-field-triggers.ts), whichever door, process or
 * instance made it, so the version is right across processes on SQLite and across instances on PostgreSQL.
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
 * The versions are kept in the process where every commit is heard, so a conditional list's version costs no
 * query. On SQLite (version-watch.ts) the answer is a string, at once, checked against the file on every request.
 * On PostgreSQL a version read is kept until the database signals a change of plants (db/signals.ts: NOTIFY at
 * every commit, any instance's) or this process commits one, and only while those signals are heard: the
 * listening connection up and its last heartbeat answered. Lost, nothing kept is trusted, and every version is
 * read again (the read to run, on the request's turn: the caller's row through the app's client) until the
 * connection is back. A version kept on one instance trails another instance's commit by the notification's
 * delivery (a few milliseconds, docs/scaling.md): a client that changes a plant through one instance and polls
 * another at that very moment can get one 304 that the next poll corrects.
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
  if (heard !== undefined && signalsHeard()) {
    const kept = heard.kept.get(keyOf(scope));
    if (kept !== undefined) return kept;
    return () => readAndKeep(scope);
  }
  return () => readPlantListVersion(scope);
}

const keyOf = (scope: PlantScope) => (scope.everyOwner ? 'all' : `owner ${scope.ownerId}`);

/**
 * Where versions are kept as they are heard (PostgreSQL), a mark taken before a read: a version that read then
 * returns (a list's own statement) is kept with `keepReadVersion` only if nothing was dropped since the mark.
 */
export function keptVersionsMark(): number | undefined {
  return heard === undefined ? undefined : heard.generation;
}

export function keepReadVersion(scope: PlantScope, version: string, mark: number | undefined): void {
  if (heard === undefined || mark !== heard.generation || !signalsHeard()) return;
  if (heard.kept.size >= KEPT_SCOPES) heard.kept.clear();
  heard.kept.set(keyOf(scope), version);
}

/**
 * Read, and kept unless something may have committed since the read began: a signal or a commit of this process
 * in between (the generation moved), or the signals no longer heard.
 */
async function readAndKeep(scope: PlantScope): Promise<string> {
  const mark = keptVersionsMark();
  const version = await readPlantListVersion(scope);
  keepReadVersion(scope, version, mark);
  return version;
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
/** PostgreSQL's kept versions, by scope; `generation` moves whenever they are dropped. */
let heard: { kept: Map<string, string>; generation: number } | undefined;
/** Scopes whose version a process keeps at once; past it the map starts over (a read refills an entry). */
const KEPT_SCOPES = 10_000;

/**
 * Keeps the versions in this process, from now until `stop`: SQLite's watched from its file, PostgreSQL's while
 * the database's signals are heard. Called once by the composition root after the database is open and its
 * signals started (main.ts); without it every version is read.
 */
export function keepPlantListVersions(databaseUrl: string): { stop: () => void } {
  if (!databaseUrl.startsWith('file:')) {
    const started = { kept: new Map<string, string>(), generation: 0 };
    // Those of the owners whose plants changed, and the sum every admin's list names; all when that is not said.
    const drop = (owners: ChangedOwners = 'all') => {
      started.generation += 1;
      if (owners === 'all') return started.kept.clear();
      started.kept.delete(keyOf({ everyOwner: true }));
      for (const owner of owners) started.kept.delete(keyOf({ everyOwner: false, ownerId: owner }));
    };
    // A commit of this process drops them at once, before its answer goes out; another's when it is heard.
    const stops = [onPlantsCommitted(() => drop()), onDatabaseSignal('plants', drop), onHeardChange(() => drop())];
    heard = started;
    return {
      stop() {
        for (const stop of stops) stop();
        if (heard === started) heard = undefined;
      },
    };
  }
  const started = watchSqliteVersions(databaseFilePath(databaseUrl));
  watch = started;
  return {
    stop() {
      if (watch === started) watch = undefined;
      started.close();
    },
  };
}
