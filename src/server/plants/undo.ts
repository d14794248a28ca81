import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { Prisma } from '@/generated/prisma/client';
import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { db } from '@/server/db/client';
import { foldForSearch, PLANT_FIELD_NAMES } from '@/shared/plants';

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

/** The tombstone's columns a restore copies back: the declared fields (shared/plants.ts), owner and creation time. */
const COPIED = [...PLANT_FIELD_NAMES, 'ownerId', 'createdAt'];
const copiedColumns = Prisma.raw(COPIED.map((column) => `"${column}"`).join(', '));
const copiedValues = Prisma.raw(COPIED.map((column) => `t."${column}"`).join(', '));

/**
 * Puts back the plants this actor deleted from the page within UNDO_WINDOW_MS, in one transaction of three
 * statements whatever the count (up to BULK_MAX ids, charged as a bulk delete of as many): the kept rows' names,
 * for their folded form; one INSERT … SELECT of them all, which leaves out an id taken meanwhile; one DELETE of
 * the tombstones restored. A restore one plant at a time held the event loop ~2 ms a plant: 500 took seconds.
 */
export async function restorePlants(actor: Actor, ids: bigint[]): Promise<RestoreOutcome> {
  const wanted = [...new Set(ids)];
  const since = BigInt(Date.now() - UNDO_WINDOW_MS);
  const restorable = Prisma.sql`t.id IN (${Prisma.join(wanted)}) AND t."deletedById" = ${actor.userId} AND t."deletedAtMs" > ${since}`;
  const { kept, back } = await db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: bigint; name: string }[]>`SELECT t.id, t.name FROM "PlantTombstone" t WHERE ${restorable}`;
    if (rows.length === 0) return { kept: rows, back: [] };
    // The app folds names (shared/plants.ts, foldForSearch): each kept name's folded form, by id.
    const folded = Prisma.sql`CASE t.id ${Prisma.join(
      rows.map((row) => Prisma.sql`WHEN ${row.id} THEN ${foldForSearch(row.name)}`),
      ' ',
    )} END`;
    // plant scope: puts back plants this actor deleted (the tombstone's deletedById), as they were.
    const inserted = await tx.$queryRaw<{ id: bigint | number }[]>`
      INSERT INTO "Plant" ("id", ${copiedColumns}, "nameFolded")
      SELECT t.id, ${copiedValues}, ${folded} FROM "PlantTombstone" t WHERE ${restorable}
      ON CONFLICT ("id") DO NOTHING RETURNING "id"`;
    const restoredIds = inserted.map((row) => BigInt(row.id));
    if (restoredIds.length > 0) await tx.$executeRaw`DELETE FROM "PlantTombstone" WHERE "id" IN (${Prisma.join(restoredIds)})`;
    return { kept: rows, back: restoredIds };
  });
  const found = new Set(kept.map((row) => String(row.id)));
  const done = new Set(back.map(String));
  const outcome: RestoreOutcome = {
    restored: wanted.filter((id) => done.has(String(id))),
    taken: wanted.filter((id) => found.has(String(id)) && !done.has(String(id))),
    missing: wanted.filter((id) => !found.has(String(id))),
  };
  if (outcome.restored.length > 0) plantsCommitted({ outboxEvents: true });
  return outcome;
}

/** How often the expiry runs: a tombstone outlives its window by at most this (restore checks the window itself). */
export const EXPIRY_EVERY_MS = 60_000;
/** At most this many tombstones in one slice's delete. */
const EXPIRY_SLICE_MAX = 1_024;
/** The backlog shown in /api/metrics is counted up to this: a scrape reads no more of the index than that. */
export const EXPIRED_COUNTED_UP_TO = 10_000;

const expired = (now: number) => ({ deletedAtMs: { lt: BigInt(now - UNDO_WINDOW_MS) } });

/** Deletes at most `size` tombstones whose window has closed, oldest first: one statement. */
export async function expireTombstones(size: number, now = Date.now()): Promise<SliceResult> {
  const done = await db.$executeRaw`
    DELETE FROM "PlantTombstone" WHERE "id" IN (
      SELECT "id" FROM "PlantTombstone" WHERE "deletedAtMs" < ${BigInt(now - UNDO_WINDOW_MS)} ORDER BY "deletedAtMs" LIMIT ${size})`;
  return { done, more: done === size };
}

/** Tombstones past their window still kept (the expiry's backlog), counted up to EXPIRED_COUNTED_UP_TO. */
export function countExpiredTombstones(now = Date.now()): Promise<number> {
  return db.plantTombstone.count({ where: expired(now), take: EXPIRED_COUNTED_UP_TO });
}

/**
 * Tombstones past their window go on a timer of their own, whoever deletes or restores, or nobody: at the start
 * and every EXPIRY_EVERY_MS, in slices (background/slices.ts), so a backlog of any size (a bulk delete of
 * thousands kept for undo) never holds a request for more than a slice; its backlog is in /api/metrics
 * (`plantstore_background_backlog{job="tombstone-expiry"}`).
 */
export function startTombstoneExpiry(options: { everyMs?: number; onError: (error: unknown) => void }): BackgroundJob {
  return startBackgroundJob({
    name: 'tombstone-expiry',
    everyMs: options.everyMs ?? EXPIRY_EVERY_MS,
    step: (size) => expireTombstones(size),
    sizes: { initial: 64, max: EXPIRY_SLICE_MAX },
    backlog: () => countExpiredTombstones(),
    onError: options.onError,
  });
}
