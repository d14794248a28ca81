import 'server-only';

import { can, type Actor } from '@/server/auth/permissions';
import { db, isUniqueViolation } from '@/server/db/client';
import { changeCommitted } from '@/server/webhooks/outbox';
import { AppError } from '@/shared/errors';

import type { NewPlant, Plant } from '@/shared/plants';

/** The only columns that leave the data layer: owner and timestamps stay inside. */
const plantColumns = { id: true, name: true, tag: true } as const;

/** Members reach their own plants, admins every plant; everything else is "not found". */
function accessibleBy(actor: Actor) {
  return can(actor, 'plants:any') ? {} : { ownerId: actor.userId };
}

function toPlant(row: { id: bigint; name: string; tag: string | null }): Plant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

export async function createPlant(actor: Actor, plant: NewPlant): Promise<Plant> {
  try {
    const row = await db.plant.create({
      data: { id: plant.id, name: plant.name, tag: plant.tag ?? null, ownerId: actor.userId },
      select: plantColumns,
    });
    // The webhook event was written with the row, by the database (the outbox trigger); this wakes the sender.
    changeCommitted();
    return toPlant(row);
  } catch (error) {
    // Ids are unique across the store, so this tells a member that an id is taken, and nothing more.
    if (isUniqueViolation(error)) throw new AppError('plantIdTaken', `a plant with id ${plant.id} already exists`, 'id');
    throw error;
  }
}

export type PlantPage = { plants: Plant[]; nextAfter: bigint | null };

/** Keyset paging by id: a deep page costs what the first one does. */
export async function listPlants(actor: Actor, { limit, after }: { limit: number; after?: bigint }): Promise<PlantPage> {
  const rows = await db.plant.findMany({
    where: { ...accessibleBy(actor), ...(after === undefined ? {} : { id: { gt: after } }) },
    orderBy: { id: 'asc' },
    take: limit + 1,
    select: plantColumns,
  });
  const plants = rows.slice(0, limit).map(toPlant);
  return { plants, nextAfter: rows.length > limit ? plants[plants.length - 1]!.id : null };
}

export async function deletePlant(actor: Actor, id: bigint): Promise<void> {
  const { count } = await db.plant.deleteMany({ where: { id, ...accessibleBy(actor) } });
  if (count === 0) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  changeCommitted();
}
