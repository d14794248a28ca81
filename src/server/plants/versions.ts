import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';

import { plantScope } from './scope';

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
 */
export async function plantListVersion(actor: Actor): Promise<string> {
  const scope = plantScope(actor);
  if (scope.everyOwner) {
    const [row] = await db.$queryRaw<{ version: string }[]>`SELECT CAST(COALESCE(SUM("version"), 0) AS TEXT) AS version FROM "PlantListVersion"`;
    return `all:${row?.version ?? '0'}`;
  }
  const [row] = await db.$queryRaw<{ version: string }[]>`SELECT CAST("version" AS TEXT) AS version FROM "PlantListVersion" WHERE "ownerId" = ${scope.ownerId}`;
  return `owner ${scope.ownerId}:${row?.version ?? '0'}`;
}
