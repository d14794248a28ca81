import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db, engine } from '@/server/db/client';
import { LOCKING_READ } from '@/server/db/dialect';
import { BULK_MAX, BULK_ROWS_PER_UNIT, searchCost, searchWalkBudget } from '@/shared/limits';
import { PLANT_FIELD_NAMES } from '@/shared/plants';
import { type BulkSelection, DEFAULT_SORT } from '@/shared/plant-table';

import { conditions, idColumn, type PlannedFilters, plantsFrom, ready, whereOf } from './conditions';
import { selectWalked, walksNames } from './walks';
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

/**
 * The ids this call works on: the list as given, or the next matching ones (by id) from `after` on. A search of
 * many matches (walks.ts, walksNames) walks the view by id testing names, at most the engine's walk budget of
 * rows a call (searchWalkBudget), as the admin page's does: a call whose walk stops works on what it found and
 * answers `nextAfter` at the row where it stopped (no row between matched), so the next call goes on from there
 * and a sparse far-end search costs each call a bounded walk, not a walk of the caller's whole view.
 */
async function idsOf(actor: Actor, selection: BulkSelection): Promise<{ ids: bigint[]; nextAfter: bigint | null }> {
  if (selection.kind === 'ids') return { ids: [...new Set(selection.ids)], nextAfter: null };
  const filters = await ready(selection.filters);
  if (walksNames(filters)) return walkedIdsOf(actor, filters, selection);
  const where = [...conditions(actor, filters), Prisma.sql`p."createdAt" <= ${selection.asOf}`];
  const id = idColumn(filters);
  if (selection.after !== undefined) where.push(Prisma.sql`${id} > ${selection.after}`);
  if (selection.except?.length) where.push(Prisma.sql`p.id NOT IN (${Prisma.join(selection.except)})`);
  const rows = await db.$queryRaw<{ id: bigint }[]>`SELECT p.id FROM ${plantsFrom(filters)} ${whereOf(where)} ORDER BY ${id} ASC LIMIT ${BULK_MAX + 1}`;
  const ids = asIds(rows.slice(0, BULK_MAX));
  return { ids, nextAfter: rows.length > BULK_MAX ? ids[ids.length - 1]! : null };
}

/**
 * idsOf for a walk that tests names. The walk's WHERE holds only what its index holds (walks.ts, walkSegment), so
 * the creation time and the unticked plants are tested after it, on the matches it found (by their ids, in the
 * same SQL as above): a call may then work on fewer than BULK_MAX plants while more follow, and `nextAfter` is
 * the last row it considered.
 */
async function walkedIdsOf(actor: Actor, filters: PlannedFilters, selection: Extract<BulkSelection, { kind: 'matching' }>): Promise<{ ids: bigint[]; nextAfter: bigint | null }> {
  const from = selection.after === undefined ? undefined : { segment: 0, key: null, id: selection.after };
  const found = await selectWalked(actor, filters, DEFAULT_SORT, { from, limit: BULK_MAX + 1, withOwner: false, walkBudget: searchWalkBudget(engine) });
  const considered = asIds(found.rows.slice(0, BULK_MAX));
  const nextAfter = found.stop ? BigInt(found.stop.id) : found.rows.length > BULK_MAX ? considered[considered.length - 1]! : null;
  if (considered.length === 0) return { ids: [], nextAfter };
  const where = [...conditions(actor, {}), Prisma.sql`p.id IN (${Prisma.join(considered)})`, Prisma.sql`p."createdAt" <= ${selection.asOf}`];
  if (selection.except?.length) where.push(Prisma.sql`p.id NOT IN (${Prisma.join(selection.except)})`);
  const kept = await db.$queryRaw<{ id: bigint }[]>`SELECT p.id FROM "Plant" p ${whereOf(where)} ORDER BY p.id ASC`;
  return { ids: asIds(kept), nextAfter };
}

/**
 * What a bulk call is charged before it starts (its procedure's declared cost): a list of ids its plants, one unit
 * per BULK_ROWS_PER_UNIT; "every matching plant" the read that finds them, and SEARCH_COST more when it selects
 * by a name search (each call walks names, found or not, so a call that finds nothing must not be the cheap way
 * to make the server walk). A matching call's plants are charged once that read has found them, before they
 * change (`chargeFound`).
 */
export function bulkSelectionCost(selection: BulkSelection): number {
  return selection.kind === 'ids' ? bulkPlantsCost(selection.ids) : 1 + searchCost(selection.filters.q);
}

/** What changing (or putting back) these plants costs: one unit per BULK_ROWS_PER_UNIT of them, each id once. */
export function bulkPlantsCost(ids: readonly bigint[] | number): number {
  const plants = typeof ids === 'number' ? ids : new Set(ids).size;
  return Math.max(1, Math.ceil(plants / BULK_ROWS_PER_UNIT));
}

/** The plants a matching call found, charged before they change (a list of ids paid for its plants up front). */
async function chargeFound(charge: (units: number) => Promise<void>, selection: BulkSelection, plants: number): Promise<void> {
  if (selection.kind === 'matching' && plants > 0) await charge(bulkPlantsCost(plants));
}

/** The access rule of a write by id (the same one every list applies). */
const byIds = (actor: Actor, ids: bigint[]) => whereOf([...conditions(actor, {}), Prisma.sql`p.id IN (${Prisma.join(ids)})`]);

/** What a tombstone keeps of a plant, to put it back as it was: the declared fields (shared/plants.ts), owner and creation time. */
const KEPT = [...PLANT_FIELD_NAMES, 'ownerId', 'createdAt'];
const keptColumns = Prisma.raw(KEPT.map((column) => `"${column}"`).join(', '));
const keptValues = Prisma.raw(KEPT.map((column) => `p."${column}"`).join(', '));
const keptAgain = Prisma.raw(KEPT.map((column) => `"${column}" = excluded."${column}"`).join(', '));

export async function bulkDelete(actor: Actor, charge: (units: number) => Promise<void>, selection: BulkSelection, keepForUndo = false): Promise<BulkOutcome> {
  const { ids, nextAfter } = await idsOf(actor, selection);
  await chargeFound(charge, selection, ids.length);
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
  const done = new Set(asIds(deleted).map(String));
  if (done.size > 0) {
    plantsCommitted({ outboxEvents: true });
  }
  return { done: ids.filter((id) => done.has(String(id))), gone: ids.filter((id) => !done.has(String(id))), nextAfter };
}

/** A re-tag's outcome, with each re-tagged plant's tag before it: what its undo writes back. */
export type RetagOutcome = BulkOutcome & { previous: { id: bigint; tag: string | null }[] };

/**
 * Re-tags the selection (`tag` null removes it). With `onlyFrom`, only the plants whose tag is still that one (an
 * undo: a plant re-tagged elsewhere meanwhile keeps that change, and is answered as `gone`). The tags before are
 * read and the rows changed in one transaction, the rows held between the two (LOCKING_READ).
 */
export async function bulkRetag(
  actor: Actor,
  charge: (units: number) => Promise<void>,
  selection: BulkSelection,
  tag: string | null,
  onlyFrom?: string | null,
): Promise<RetagOutcome> {
  const { ids, nextAfter } = await idsOf(actor, selection);
  await chargeFound(charge, selection, ids.length);
  if (ids.length === 0) return { done: [], gone: [], nextAfter, previous: [] };
  const still = onlyFrom === undefined ? [] : [onlyFrom === null ? Prisma.sql`p.tag IS NULL` : Prisma.sql`p.tag = ${onlyFrom}`];
  const previous = await db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: bigint | number; tag: string | null }[]>`
      SELECT p.id, p.tag FROM "Plant" p ${whereOf([...conditions(actor, {}), Prisma.sql`p.id IN (${Prisma.join(ids)})`, ...still])} ${LOCKING_READ}`;
    if (rows.length > 0) await tx.$executeRaw`UPDATE "Plant" AS p SET "tag" = ${tag} ${byIds(actor, asIds(rows))}`;
    return rows.map((row) => ({ id: BigInt(row.id), tag: row.tag }));
  });
  const done = new Set(previous.map((row) => String(row.id)));
  if (done.size > 0) plantsCommitted({ outboxEvents: false });
  return { done: ids.filter((id) => done.has(String(id))), gone: ids.filter((id) => !done.has(String(id))), nextAfter, previous };
}
