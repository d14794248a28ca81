import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import type { PlantFilters } from '@/shared/plants';

import { viewOf } from './tags';

/**
 * Exact totals of the views that have an index (every plant, one owner's, a tag's, an owner's tag), read from the
 * counts the database keeps in the statement that writes a plant (PlantOwnerCount and PlantTagCount, by triggers
 * on both engines: migrations *_plant_owner_counts and *_plant_tag_counts), so a total costs one or a few index
 * rows whatever the store holds, and holds for rows written by any tool. A name search has no kept count: its
 * total is counted (counts.ts, countWhere).
 */
export async function keptTotal(actor: Actor, filters: PlantFilters): Promise<number | null> {
  if (filters.q !== undefined) return null;
  const view = await viewOf(actor, filters.owner);
  if (view === null) return 0;
  const ownerId = view === 'everyOwner' ? undefined : view.ownerId;
  const [row] =
    filters.tag === undefined
      ? ownerId === undefined
        ? // One row per owner: an admin's whole store.
          await db.$queryRaw<Total[]>`SELECT SUM(plants) AS plants FROM "PlantOwnerCount"`
        : await db.$queryRaw<Total[]>`SELECT plants FROM "PlantOwnerCount" WHERE "ownerId" = ${ownerId}`
      : ownerId === undefined
        ? // One row per owner who uses the tag, by the tag's index.
          await db.$queryRaw<Total[]>`SELECT SUM(plants) AS plants FROM "PlantTagCount" WHERE tag = ${filters.tag}`
        : await db.$queryRaw<Total[]>`SELECT plants FROM "PlantTagCount" WHERE "ownerId" = ${ownerId} AND tag = ${filters.tag}`;
  return Number(row?.plants ?? 0);
}

type Total = { plants: bigint | number | string | null };
