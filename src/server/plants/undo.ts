import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db, isUniqueViolation } from '@/server/db/client';
import { foldForSearch, PLANT_FIELD_NAMES, type PlantFieldName } from '@/shared/plants';

import { plantsCommitted } from './events';

/**
 * Undo of a delete made from the admin page: the page deletes with `keepForUndo`, which keeps each plant as
 * it was (a tombstone); for UNDO_WINDOW_MS its deleter may put it back, with the same id, owner and creation
 * time. To the rest of the world that is a new plant: REST lists show it again, and webhooks get a new
 * `plant.created` event (the delete's `plant.deleted` was sent already and is not taken back).
 */
export const UNDO_WINDOW_MS = 5 * 60 * 1000;

export type RestoreOutcome = {
  restored: bigint[];
  /** Taken meanwhile: someone created a plant with that id. */
  taken: bigint[];
  /** Not restorable: undo came too late, or the plant was not deleted by this user from the page. */
  missing: bigint[];
};

/** The tombstone's columns a restore puts back: the declared fields (shared/plants.ts), owner and creation time. */
const restored = Object.fromEntries([...PLANT_FIELD_NAMES, 'id', 'ownerId', 'createdAt'].map((column) => [column, true])) as Record<
  PlantFieldName | 'id' | 'ownerId' | 'createdAt',
  true
>;

export async function restorePlants(actor: Actor, ids: bigint[]): Promise<RestoreOutcome> {
  const wanted = [...new Set(ids)];
  const since = BigInt(Date.now() - UNDO_WINDOW_MS);
  const kept = await db.plantTombstone.findMany({
    where: { id: { in: wanted }, deletedById: actor.userId, deletedAtMs: { gt: since } },
    select: restored,
  });
  const outcome: RestoreOutcome = { restored: [], taken: [], missing: [] };
  const found = new Set(kept.map((row) => String(row.id)));
  outcome.missing = wanted.filter((id) => !found.has(String(id)));
  for (const row of kept) {
    try {
      await db.$transaction([
        // plant scope: puts back a plant this actor deleted (the tombstone's deletedById above), as it was.
        db.plant.create({ data: { ...row, nameFolded: foldForSearch(row.name) }, select: { id: true } }),
        db.plantTombstone.delete({ where: { id: row.id }, select: { id: true } }),
      ]);
      outcome.restored.push(row.id);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      outcome.taken.push(row.id);
    }
  }
  if (outcome.restored.length > 0) {
    plantsCommitted({ outboxEvents: true });
  }
  return outcome;
}

/** Tombstones past their window go; called after deletes that keep them, so the table stays small. */
export async function sweepTombstones(beforeMs: number): Promise<void> {
  await db.plantTombstone.deleteMany({ where: { deletedAtMs: { lt: BigInt(beforeMs) } } });
}
