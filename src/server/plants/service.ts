import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { commitTogether } from '@/server/db/commit-together';
import { AppError } from '@/shared/errors';
import {
  EMPTY_PATCH_MESSAGE,
  foldForSearch,
  INT64_MAX,
  type NewPlant,
  type Plant,
  PLANT_FIELD_NAMES,
  type PlantFieldName,
  type PlantFilters,
  type PlantPatch,
  type StoredFields,
  toPlant,
} from '@/shared/plants';

import { conditions, ready, whereOf } from './conditions';
import { PLANT_COLUMNS, type RawRow, toRow } from './rows';
import { inIdOrder } from './walks';
import { plantsCommitted } from './events';
import { plantScope, plantScopeSql, plantScopeWhere } from './scope';
import { keepReadVersion, keptVersionsMark, ownerVersionColumn, plantListVersionNow, scopeVersion } from './versions';

/** The only columns that leave the data layer, id and the declared fields: owner and timestamps stay inside. */
const plantColumns = Object.fromEntries(['id', ...PLANT_FIELD_NAMES].map((column) => [column, true])) as { id: true } & Record<PlantFieldName, true>;

/** The declared fields a plant or patch gives (an absent one is left as it is; a patch's null removes it). */
function givenFields<Input extends Partial<Record<PlantFieldName, unknown>>>(input: Input): Pick<Input, PlantFieldName> {
  return Object.fromEntries(PLANT_FIELD_NAMES.filter((field) => input[field] !== undefined).map((field) => [field, input[field]])) as Pick<Input, PlantFieldName>;
}

/**
 * The columns a create writes: id, the declared fields, and beside them the folded name, the owner and the
 * creation time. Plain identifiers (checked in shared/plants.ts), written once. The folded name is the one the
 * database would write (its triggers keep it, whoever writes a plant: migration *_plant_name_fold_in_the_database);
 * given right, SQLite's trigger only checks it, where a missing one would cost a second write of the row.
 */
export const INSERTED_COLUMNS = Prisma.raw(['id', ...PLANT_FIELD_NAMES, 'nameFolded', 'ownerId', 'createdAt'].map((column) => `"${column}"`).join(', '));

/** The declared fields as their columns hold them: a field the plant lacks is NULL. */
const storedFields = (plant: NewPlant) => Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, plant[field] ?? null])) as StoredFields;

/** A new plant's row in INSERTED_COLUMNS' order: owned by `ownerId`, made `now`. */
export const insertedValues = (ownerId: number, plant: NewPlant, now: Date): unknown[] => [
  plant.id,
  ...PLANT_FIELD_NAMES.map((field) => plant[field] ?? null),
  foldForSearch(plant.name),
  ownerId,
  now,
];

/** What a create of a taken id answers, whoever's plant holds it (an import's refused rows say the same). */
export const idTakenMessage = (id: bigint) => `a plant with id ${id} already exists`;

/** What a patch writes: the fields it gives (null removes one), and the folded name with a new name. */
export function patchedColumns(patch: PlantPatch): Record<string, unknown> {
  // The search's folded name goes with the name it folds, right, as for a create (the database checks it).
  return { ...givenFields(patch), ...(patch.name === undefined ? {} : { nameFolded: foldForSearch(patch.name) }) };
}

/**
 * One INSERT, as SQL through `$executeRaw`, which answers the count of rows written: Prisma's `plant.create`
 * sends the same INSERT with RETURNING for ~100 µs more CPU in its query interpreter and result mapping, and
 * the RETURNING form through `$queryRaw` costs ~45 µs more than this for the row it maps
 * (docs/decisions/0012-what-the-stack-floor-runs.md). The values are what `create` wrote: a field the plant lacks
 * is NULL, the creation time is taken here (`@default(now())` is Prisma's, not the database's: SQLite's own
 * default would be another text format), and each engine's adapter writes the Date as Prisma's create does.
 * A taken id inserts nothing (ON CONFLICT DO NOTHING: no row, so no trigger fires and nothing is written,
 * and no error either, which would undo every other statement of a commit it shares) and counts 0: the one
 * unique key of Plant is its id. The answer is the plant as given, which is what the row holds.
 */
export async function createPlant(actor: Actor, plant: NewPlant): Promise<Plant> {
  const fields = storedFields(plant);
  // plant scope: a create writes the actor's own plant (ownerId); it reads nothing of others'.
  // Creates that arrive together share one commit on SQLite (db/commit-together.ts); this one's count is its own.
  const written = await commitTogether(
    () => db.$executeRaw`INSERT INTO "Plant" (${INSERTED_COLUMNS}) VALUES (${Prisma.join(insertedValues(actor.userId, plant, new Date()))}) ON CONFLICT ("id") DO NOTHING`,
  );
  // Ids are unique across the store, so this tells a member that an id is taken, and nothing more.
  if (written === 0) throw new AppError('plantIdTaken', idTakenMessage(plant.id), 'id');
  // The webhook event and the live feed's log row were written with the row, by the database (triggers);
  // this wakes the webhook sender and the feed's reader of this process.
  plantsCommitted({ outboxEvents: true });
  return toPlant({ id: plant.id, ...fields });
}

export type PlantPage = { plants: Plant[]; nextAfter: bigint | null; version?: string };

/**
 * The REST list: keyset paging by id, with the filters: a deep page costs what the first one does. Its pages are
 * full, whatever the path that serves them (SQLite's id-order probe, the index or the filter plan: chosen by
 * store-wide data): a page depends only on the caller's plants, as its ETag does (CONTRACT 1.2.0), so a search's
 * walk is not capped here as the admin page's is (docs/performance.md, "What is not bounded").
 *
 * `withVersion`: the page comes with the caller's list version (plants/versions.ts), for its ETag, read no later
 * than its rows. A member's is a column of each statement that reads rows, so it is of the same snapshot as
 * the rows of that statement; when the page takes two (SQLite's probe, then the walk), the first's is kept,
 * older than the walk's rows at worst. A page with no row carries none: its version is read first, then its
 * rows again. An admin's is read before the rows (a sum over every owner: versions.ts).
 */
export async function listPlants(
  actor: Actor,
  { limit, after, ...filters }: { limit: number; after?: bigint } & PlantFilters,
  { withVersion = false }: { withVersion?: boolean } = {},
): Promise<PlantPage> {
  const planned = await ready(filters);
  const scope = plantScope(actor);
  // Where versions are kept as they are heard, the one this list reads is kept too, unless a change came meanwhile.
  const mark = withVersion ? keptVersionsMark() : undefined;
  const inStatement = withVersion && !scope.everyOwner;
  let version = withVersion && scope.everyOwner ? await plantListVersionNow(actor) : undefined;
  const versionColumn = inStatement ? Prisma.sql`, ${ownerVersionColumn(actor.userId)}` : Prisma.empty;
  const select = async (from: Prisma.Sql, id: Prisma.Sql, column: Prisma.Sql) => {
    const where = [...conditions(actor, planned), ...(after === undefined ? [] : [Prisma.sql`${id} > ${after}`])];
    const found = await db.$queryRaw<(RawRow & { listVersion?: string | null })[]>`${PLANT_COLUMNS}${column} FROM ${from} ${whereOf(where)} ORDER BY ${id} ASC LIMIT ${limit + 1}`;
    if (inStatement && version === undefined && found.length > 0) version = scopeVersion(scope, found[0]!.listVersion);
    return found;
  };
  let rows = await inIdOrder(planned, false, after, limit + 1, (from, id) => select(from, id, versionColumn));
  if (inStatement && version === undefined) {
    version = await plantListVersionNow(actor);
    rows = await inIdOrder(planned, false, after, limit + 1, (from, id) => select(from, id, Prisma.empty));
  }
  if (version !== undefined) keepReadVersion(scope, version, mark);
  const plants = rows.slice(0, limit).map((row) => toRow(row, false));
  return { plants, nextAfter: rows.length > limit ? plants[plants.length - 1]!.id : null, ...(version === undefined ? {} : { version }) };
}

export async function updatePlant(actor: Actor, id: bigint, patch: PlantPatch): Promise<Plant> {
  if (PLANT_FIELD_NAMES.every((field) => patch[field] === undefined)) throw new AppError('emptyPatch', EMPTY_PATCH_MESSAGE);
  const data = patchedColumns(patch);
  // One conditional write: the access rule is part of its WHERE, so there is no read-then-write window.
  const { count } = await db.plant.updateMany({ where: { id, ...plantScopeWhere(actor) }, data });
  if (count === 0) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  const row = await db.plant.findFirst({ where: { id, ...plantScopeWhere(actor) }, select: plantColumns });
  // Deleted in the instant between the two statements: as a delete that came first.
  if (!row) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  // A rename or re-tag writes the live feed's log (no webhook event): its reader looks at once.
  plantsCommitted({ outboxEvents: false });
  return toPlant(row);
}

/**
 * One statement, as SQL, like the create: Prisma's `deleteMany` sends the same DELETE for ~60 µs more CPU
 * (in process).
 */
export async function deletePlant(actor: Actor, id: bigint): Promise<void> {
  // plant scope: the row is deleted only within the actor's scope; any other id is "not found", as an absent one.
  const count = await db.$executeRaw`DELETE FROM "Plant" AS p ${whereOf([Prisma.sql`p.id = ${id}`, ...plantScopeSql(actor)])}`;
  if (count === 0) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  plantsCommitted({ outboxEvents: true });
}

/**
 * An id to propose in the add form: one past the highest id the caller can see (so a member's ids run on
 * from their own, and reveal nothing of others'), or, when that is taken by a plant they cannot see, a
 * random one that is free. Free when asked; a create with it can still lose a race, and says so.
 */
export async function suggestPlantId(actor: Actor): Promise<bigint> {
  const highest = await db.plant.findFirst({ where: plantScopeWhere(actor), orderBy: { id: 'desc' }, select: { id: true } });
  const next = highest === null ? 1n : highest.id < INT64_MAX ? highest.id + 1n : null;
  // plant scope: whether an id is free in the whole store, as a create would find; it tells nothing more.
  if (next !== null && (await db.plant.count({ where: { id: next } })) === 0) return next;
  for (let attempt = 0; attempt < 20; attempt++) {
    // A random id under 10^12: short enough to read, and about 10^12 to choose from.
    const candidate = BigInt(Math.floor(Math.random() * 1e12)) + 1n;
    // plant scope: as above, free in the whole store.
    if ((await db.plant.count({ where: { id: candidate } })) === 0) return candidate;
  }
  throw new Error('no free plant id found in 20 tries');
}

/** For the owner filter of admins: every user who owns a plant or has a token, by name. */
/** The most user names the owner filter offers. */
export const OWNER_NAMES_MAX = 1_000;

export async function listUserNames(): Promise<{ name: string; role: 'admin' | 'member' }[]> {
  return db.user.findMany({ orderBy: { name: 'asc' }, select: { name: true, role: true }, take: OWNER_NAMES_MAX });
}

/** How many names listUserNames returns, counted up to its bound. */
export async function countUserNames(): Promise<number> {
  const [{ users }] = await db.$queryRaw<[{ users: bigint | number }]>`SELECT COUNT(*) AS users FROM (SELECT 1 FROM "User" LIMIT ${OWNER_NAMES_MAX}) AS listed`;
  return Number(users);
}
