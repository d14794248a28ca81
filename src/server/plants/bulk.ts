import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { BULK_ROWS_PER_UNIT } from '@/shared/limits';
import { BULK_MAX, type BulkSelection, PLANT_FIELD_NAMES } from '@/shared/plants';

import { conditions, idColumn, plantsFrom, ready, whereOf } from './query';
import { sweepTombstones, UNDO_WINDOW_MS } from './undo';
import { plantsCommitted } from './events';

/**
 * Bulk changes of the admin page: delete or re-tag what was selected, a list of ids or every plant that
 * matched the filters at `asOf`. One call changes at most BULK_MAX plants and says what became of each: done,
 * or gone already (deleted by someone else meanwhile, or never the caller's: the two look alike, as
 * everywhere). "Select all matching" is worked through call by call (`nextAfter`), so no call holds the
 * database long, and each is charged its plants against the token's bucket (BULK_ROWS_PER_UNIT), as every
 * call is: `charge` is the call's own (ctx.charge), which throws the 429.
 */
export type BulkOutcome = {
  /** Changed by this call. */
  done: bigint[];
  /** Not there to change (a delete counts them as done: the plant is gone, which was the point). */
  gone: bigint[];
  /** For a `matching` selection: where the next call goes on, or null when every matching plant was seen. */
  nextAfter: bigint | null;
};

const asIds = (rows: { id: bigint | number | string }[]) => rows.map((row) => BigInt(row.id));

/** The ids this call works on: the list as given, or the next matching ones (by id) from `after` on. */
async function idsOf(actor: Actor, selection: BulkSelection): Promise<{ ids: bigint[]; nextAfter: bigint | null }> {
  if (selection.kind === 'ids') return { ids: [...new Set(selection.ids)], nextAfter: null };
  const filters = await ready(selection.filters);
  const where = [...conditions(actor, filters), Prisma.sql`p."createdAt" <= ${selection.asOf}`];
  const id = idColumn(filters);
  if (selection.after !== undefined) where.push(Prisma.sql`${id} > ${selection.after}`);
  if (selection.except?.length) where.push(Prisma.sql`p.id NOT IN (${Prisma.join(selection.except)})`);
  const rows = await db.$queryRaw<{ id: bigint }[]>`SELECT p.id FROM ${plantsFrom(filters)} ${whereOf(where)} ORDER BY ${id} ASC LIMIT ${BULK_MAX + 1}`;
  const ids = asIds(rows.slice(0, BULK_MAX));
  return { ids, nextAfter: rows.length > BULK_MAX ? ids[ids.length - 1]! : null };
}

/** The units a bulk call of `rows` plants costs beyond the one its door charged. */
const unitsFor = (rows: number) => Math.ceil(rows / BULK_ROWS_PER_UNIT) - 1;

/** The access rule of a write by id (the same one every list applies). */
const byIds = (actor: Actor, ids: bigint[]) => whereOf([...conditions(actor, {}), Prisma.sql`p.id IN (${Prisma.join(ids)})`]);

/** What a tombstone keeps of a plant, to put it back as it was: the declared fields (shared/plants.ts), owner and creation time. */
const KEPT = [...PLANT_FIELD_NAMES, 'ownerId', 'createdAt'];
const keptColumns = Prisma.raw(KEPT.map((column) => `"${column}"`).join(', '));
const keptValues = Prisma.raw(KEPT.map((column) => `p."${column}"`).join(', '));
const keptAgain = Prisma.raw(KEPT.map((column) => `"${column}" = excluded."${column}"`).join(', '));

export async function bulkDelete(actor: Actor, charge: (units: number) => void, selection: BulkSelection, keepForUndo = false): Promise<BulkOutcome> {
  const { ids, nextAfter } = await idsOf(actor, selection);
  charge(unitsFor(ids.length));
  if (ids.length === 0) return { done: [], gone: [], nextAfter };
  const now = BigInt(Date.now());
  const deleted = await db.$transaction(async (tx) => {
    if (keepForUndo) {
      // What undo needs to put each plant back as it was; only the deleter may, for UNDO_WINDOW_MS.
      await tx.$executeRaw`
        INSERT INTO "PlantTombstone" ("id", ${keptColumns}, "deletedById", "deletedAtMs")
        SELECT p.id, ${keptValues}, ${actor.userId}, ${now} FROM "Plant" p ${byIds(actor, ids)}
        ON CONFLICT ("id") DO UPDATE SET ${keptAgain}, "deletedById" = excluded."deletedById", "deletedAtMs" = excluded."deletedAtMs"`;
    }
    return tx.$queryRaw<{ id: bigint }[]>`DELETE FROM "Plant" AS p ${byIds(actor, ids)} RETURNING "id"`;
  });
  if (keepForUndo) void sweepTombstones(Date.now() - UNDO_WINDOW_MS).catch(() => undefined);
  const done = new Set(asIds(deleted).map(String));
  if (done.size > 0) {
    plantsCommitted({ outboxEvents: true });
  }
  return { done: ids.filter((id) => done.has(String(id))), gone: ids.filter((id) => !done.has(String(id))), nextAfter };
}

export async function bulkRetag(actor: Actor, charge: (units: number) => void, selection: BulkSelection, tag: string | null): Promise<BulkOutcome> {
  const { ids, nextAfter } = await idsOf(actor, selection);
  charge(unitsFor(ids.length));
  if (ids.length === 0) return { done: [], gone: [], nextAfter };
  const updated = await db.$queryRaw<{ id: bigint }[]>`UPDATE "Plant" AS p SET "tag" = ${tag} ${byIds(actor, ids)} RETURNING "id"`;
  const done = new Set(asIds(updated).map(String));
  if (done.size > 0) plantsCommitted({ outboxEvents: false });
  return { done: ids.filter((id) => done.has(String(id))), gone: ids.filter((id) => !done.has(String(id))), nextAfter };
}
