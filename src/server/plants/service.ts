import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { can, type Actor } from '@/server/auth/permissions';
import { db, engine, isUniqueViolation } from '@/server/db/client';
import { changeCommitted } from '@/server/webhooks/outbox';
import { AppError } from '@/shared/errors';
import { foldForSearch, INT64_MAX, type NewPlant, type Plant, type PlantFilters, type PlantPageInput, type PlantPatch, type PlantRow } from '@/shared/plants';

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
      data: { id: plant.id, name: plant.name, nameFolded: foldForSearch(plant.name), tag: plant.tag ?? null, ownerId: actor.userId },
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

/**
 * Rows written before `nameFolded` existed carry null there; the first search of each process folds them, a
 * batch at a time (the rule lives in JavaScript, so a migration could not apply it in SQL on both engines).
 */
let namesFolded: Promise<void> | undefined;
function ensureNamesFolded(): Promise<void> {
  namesFolded ??= (async () => {
    for (;;) {
      const rows = await db.plant.findMany({ where: { nameFolded: null }, select: { id: true, name: true }, take: 500 });
      if (rows.length === 0) return;
      await db.$transaction(rows.map((row) => db.plant.updateMany({ where: { id: row.id, name: row.name }, data: { nameFolded: foldForSearch(row.name) } })));
    }
  })().catch((error: unknown) => {
    namesFolded = undefined;
    throw error;
  });
  return namesFolded;
}

/**
 * The WHERE clause of a list: access first, then the filters. Written as SQL because the name search must
 * not be LIKE (Prisma's `contains` leaves `%` and `_` active on SQLite, and SQLite's LIKE folds ASCII only):
 * it is a plain substring test on the folded name, `instr` in SQLite and `strpos` in PostgreSQL. Tag and
 * owner use the (tag, id) and (ownerId, tag, id) indexes.
 */
function whereClause(actor: Actor, filters: PlantFilters, extra: Prisma.Sql[] = []): Prisma.Sql {
  const conditions: Prisma.Sql[] = [];
  if (!can(actor, 'plants:any')) conditions.push(Prisma.sql`p."ownerId" = ${actor.userId}`);
  if (filters.owner !== undefined) {
    if (!can(actor, 'plants:any')) throw new AppError('ownerFilterForAdmins', 'owner is a filter for admins: as a member you see only your own plants', 'owner');
    conditions.push(Prisma.sql`p."ownerId" = (SELECT u.id FROM "User" u WHERE u.name = ${filters.owner})`);
  }
  if (filters.tag !== undefined) conditions.push(Prisma.sql`p.tag = ${filters.tag}`);
  if (filters.q !== undefined) {
    const folded = foldForSearch(filters.q);
    conditions.push(engine === 'sqlite' ? Prisma.sql`instr(p."nameFolded", ${folded}) > 0` : Prisma.sql`strpos(p."nameFolded", ${folded}) > 0`);
  }
  conditions.push(...extra);
  return conditions.length === 0 ? Prisma.empty : Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}`;
}

/** A row as selected: the plant's own columns, plus its owner and creation time when asked for. */
type RawRow = { id: bigint | number | string; name: string; tag: string | null; createdAt?: Date | string; owner?: string };

function toRow(raw: RawRow, withOwner: boolean): PlantRow {
  const plant = toPlant({ id: BigInt(raw.id), name: raw.name, tag: raw.tag });
  return withOwner ? { ...plant, owner: raw.owner!, createdAt: new Date(raw.createdAt!) } : plant;
}

// The plant's own columns need no join: the REST list, the API's hottest read, and a member's table.
const PLANT_COLUMNS = Prisma.sql`SELECT p.id, p.name, p.tag FROM "Plant" p`;
const ROW_COLUMNS = Prisma.sql`SELECT p.id, p.name, p.tag, p."createdAt" AS "createdAt", u.name AS owner FROM "Plant" p JOIN "User" u ON u.id = p."ownerId"`;
const ASCENDING = Prisma.sql`ASC`;
const DESCENDING = Prisma.sql`DESC`;

async function selectRows(
  actor: Actor,
  filters: PlantFilters,
  extra: Prisma.Sql[],
  order: 'ASC' | 'DESC',
  limit: number,
  withOwner: boolean,
): Promise<RawRow[]> {
  if (filters.q !== undefined) await ensureNamesFolded();
  return db.$queryRaw<RawRow[]>`
    ${withOwner ? ROW_COLUMNS : PLANT_COLUMNS}
    ${whereClause(actor, filters, extra)}
    ORDER BY p.id ${order === 'ASC' ? ASCENDING : DESCENDING}
    LIMIT ${limit}`;
}

async function countRows(actor: Actor, filters: PlantFilters, extra: Prisma.Sql[] = []): Promise<number> {
  if (filters.q !== undefined) await ensureNamesFolded();
  const [row] = await db.$queryRaw<{ count: bigint | number }[]>`SELECT COUNT(*) AS count FROM "Plant" p ${whereClause(actor, filters, extra)}`;
  return Number(row?.count ?? 0);
}

export type PlantPage = { plants: Plant[]; nextAfter: bigint | null };

/** Keyset paging by id, with the filters: a deep page costs what the first one does. */
export async function listPlants(actor: Actor, { limit, after, ...filters }: { limit: number; after?: bigint } & PlantFilters): Promise<PlantPage> {
  const rows = await selectRows(actor, filters, after === undefined ? [] : [Prisma.sql`p.id > ${after}`], 'ASC', limit + 1, false);
  const plants = rows.slice(0, limit).map((row) => toRow(row, false));
  return { plants, nextAfter: rows.length > limit ? plants[plants.length - 1]!.id : null };
}

export type TablePage = {
  rows: PlantRow[];
  /** Plants that match the filters, on every page. */
  total: number;
  /** How many matching plants come before the first row (0 on the first page). */
  offset: number;
  /** The page that was served: an `after` or `before` page that ran empty falls back to the last or first. */
  cursor: PlantPageInput['cursor'];
};

/**
 * A page of the admin table: keyset paging in both directions, plus the two counts that place it ("26–50
 * of 186"). Each query walks an index in id order (by owner and tag when those filter); the counts are the
 * only part whose cost grows with the store (see README, "The admin page at scale").
 */
export async function pagePlants(actor: Actor, input: PlantPageInput): Promise<TablePage> {
  const { size, cursor, ...filters } = input;
  const withOwner = can(actor, 'plants:any');
  const total = await countRows(actor, filters);
  let served = cursor;
  let rows: RawRow[];
  if (cursor?.kind === 'after') {
    rows = await selectRows(actor, filters, [Prisma.sql`p.id > ${cursor.id}`], 'ASC', size, withOwner);
  } else if (cursor?.kind === 'before') {
    rows = (await selectRows(actor, filters, [Prisma.sql`p.id < ${cursor.id}`], 'DESC', size, withOwner)).reverse();
  } else if (cursor?.kind === 'last') {
    rows = total === 0 ? [] : (await selectRows(actor, filters, [], 'DESC', total % size || size, withOwner)).reverse();
  } else {
    rows = await selectRows(actor, filters, [], 'ASC', size, withOwner);
  }
  // The page's plants were deleted or filtered away meanwhile: show the nearest page that has some.
  if (rows.length === 0 && total > 0 && cursor) {
    served = cursor.kind === 'before' ? undefined : { kind: 'last' };
    rows = served ? (await selectRows(actor, filters, [], 'DESC', total % size || size, withOwner)).reverse() : await selectRows(actor, filters, [], 'ASC', size, withOwner);
  }
  const first = rows[0];
  const offset = first === undefined || served === undefined ? 0 : await countRows(actor, filters, [Prisma.sql`p.id < ${BigInt(first.id)}`]);
  return { rows: rows.map((row) => toRow(row, withOwner)), total, offset, cursor: served };
}

export async function updatePlant(actor: Actor, id: bigint, patch: PlantPatch): Promise<Plant> {
  if (patch.name === undefined && patch.tag === undefined) {
    throw new AppError('emptyPatch', 'the patch changes nothing: send "name", "tag" (null removes it), or both');
  }
  const data = {
    ...(patch.name === undefined ? {} : { name: patch.name, nameFolded: foldForSearch(patch.name) }),
    ...(patch.tag === undefined ? {} : { tag: patch.tag }),
  };
  // One conditional write: the access rule is part of its WHERE, so there is no read-then-write window.
  const { count } = await db.plant.updateMany({ where: { id, ...accessibleBy(actor) }, data });
  if (count === 0) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  const row = await db.plant.findFirst({ where: { id, ...accessibleBy(actor) }, select: plantColumns });
  // Deleted in the instant between the two statements: as a delete that came first.
  if (!row) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  return toPlant(row);
}

export async function deletePlant(actor: Actor, id: bigint): Promise<void> {
  const { count } = await db.plant.deleteMany({ where: { id, ...accessibleBy(actor) } });
  if (count === 0) throw new AppError('plantNotFound', `no plant with id ${id}`, 'id');
  changeCommitted();
}

export type BulkDeleteResult = { id: bigint; deleted: true } | { id: bigint; deleted: false; message: string };

/**
 * Deletes the plants with these ids that the caller has access to, in one statement (one commit, one sync
 * on SQLite: up to 100 deletes cost about what one does), and says what became of each id: one that is gone
 * already, or not the caller's, does not stop the rest. The access rule is in the statement's WHERE, as in
 * every write; RETURNING names the rows it deleted, on both engines.
 */
export async function deletePlants(actor: Actor, ids: bigint[]): Promise<BulkDeleteResult[]> {
  const unique = [...new Set(ids)];
  const access = can(actor, 'plants:any') ? Prisma.empty : Prisma.sql`AND "ownerId" = ${actor.userId}`;
  const rows = await db.$queryRaw<{ id: bigint | number | string }[]>`DELETE FROM "Plant" WHERE id IN (${Prisma.join(unique)}) ${access} RETURNING id`;
  const deleted = new Set(rows.map((row) => BigInt(row.id)));
  if (deleted.size > 0) changeCommitted();
  return unique.map((id) => (deleted.has(id) ? { id, deleted: true } : { id, deleted: false, message: `no plant with id ${id}: it may have been deleted already` }));
}

/**
 * An id to propose in the add form: one past the highest id the caller can see (so a member's ids run on
 * from their own, and reveal nothing of others'), or, when that is taken by a plant they cannot see, a
 * random one that is free. Free when asked; a create with it can still lose a race, and says so.
 */
export async function suggestPlantId(actor: Actor): Promise<bigint> {
  const highest = await db.plant.findFirst({ where: accessibleBy(actor), orderBy: { id: 'desc' }, select: { id: true } });
  const next = highest === null ? 1n : highest.id < INT64_MAX ? highest.id + 1n : null;
  if (next !== null && (await db.plant.count({ where: { id: next } })) === 0) return next;
  for (let attempt = 0; attempt < 20; attempt++) {
    // A random id under 10^12: short enough to read, and about 10^12 to choose from.
    const candidate = BigInt(Math.floor(Math.random() * 1e12)) + 1n;
    if ((await db.plant.count({ where: { id: candidate } })) === 0) return candidate;
  }
  throw new Error('no free plant id found in 20 tries');
}

/** For the owner filter of admins: every user who owns a plant or has a token, by name. */
export async function listUserNames(): Promise<{ name: string; role: 'admin' | 'member' }[]> {
  return db.user.findMany({ orderBy: { name: 'asc' }, select: { name: true, role: true }, take: 1000 });
}
