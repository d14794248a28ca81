import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db, engine } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { COUNT_CAP, SEARCH_COUNT_CAP } from '@/shared/limits';
import { foldForSearch, PLANT_FIELD_NAMES, type PlantFilters, type PlantRow, type PlantSort, type StoredFields, toPlant } from '@/shared/plants';

import { keptTotal } from './kept-counts';
import { plantScopeSql, seesEveryOwner } from './scope';
import { indexable, type NameSearch } from './name-search';
import { ftsMatches, nameContains, planNameSearch, sqliteIdOrderProbe, sqliteIndexedPlants } from './search';
import { postgresIndexedName } from './search-postgresql';

/**
 * The SQL every read of plant rows shares: the access scope (scope.ts) and the filters (one WHERE), the sort
 * orders as keyset segments, and rows as the admin page gets them. The list, the page, the export, the bulk
 * changes and the tag suggestions all build on it; plants/scope.test.ts fails on a plant query that takes
 * its access rule from anywhere but scope.ts.
 */

/** Filters as a query runs them: a name search comes with its plan (`ready` makes it; search.ts). */
export type PlannedFilters = PlantFilters & { search?: NameSearch };

/** The search of these filters, planned or not (unplanned, the filter plan: what a search always did). */
function searchOf(filters: PlannedFilters): NameSearch | undefined {
  if (filters.q === undefined) return undefined;
  return filters.search ?? { folded: foldForSearch(filters.q), plan: 'filter' };
}

/**
 * The access scope and the tag and owner filters: which plants a view is about, before any name search.
 * `withTag: false` leaves the tag filter out (a capped walk tests it beside the name: walkSegment).
 */
function scopeConditions(actor: Actor, filters: PlantFilters, withTag = true): Prisma.Sql[] {
  const list = plantScopeSql(actor);
  if (filters.owner !== undefined) {
    if (!seesEveryOwner(actor)) throw new AppError('ownerFilterForAdmins', 'owner is a filter for admins: as a member you see only your own plants', 'owner');
    list.push(Prisma.sql`p."ownerId" = (SELECT u.id FROM "User" u WHERE u.name = ${filters.owner})`);
  }
  if (filters.tag !== undefined && withTag) list.push(Prisma.sql`p.tag = ${filters.tag}`);
  return list;
}

/**
 * The conditions of a list: access first, then the filters. A name search of the index plan on SQLite is in
 * the table the rows come from instead (`plantsFrom`), the FTS5 table's matches.
 */
export function conditions(actor: Actor, filters: PlannedFilters): Prisma.Sql[] {
  const list = scopeConditions(actor, filters);
  const search = searchOf(filters);
  // Not LIKE for the filter plan: Prisma's `contains` leaves `%` and `_` active on SQLite, whose LIKE folds
  // ASCII only. A plain substring test on the folded name, the same on both engines. PostgreSQL's index plan
  // states the same substring test as its GIN indexes serve it (search-postgresql.ts).
  if (search?.plan === 'filter') list.push(nameContains(search.folded));
  else if (search?.plan === 'index' && engine === 'postgresql') list.push(postgresIndexedName(search));
  return list;
}

/** Where the plant rows `p` come from: the table, or on SQLite for the index plan, the FTS5 matches' rows. */
export function plantsFrom(filters: PlannedFilters): Prisma.Sql {
  const search = searchOf(filters);
  // plant scope: a FROM, whose WHERE its callers take from conditions(), which starts with the scope.
  return search?.plan === 'index' && engine === 'sqlite' ? sqliteIndexedPlants(search.folded, undefined, search.match) : Prisma.sql`"Plant" p`;
}

export const whereOf = (list: Prisma.Sql[]): Prisma.Sql => (list.length === 0 ? Prisma.empty : Prisma.sql`WHERE ${Prisma.join(list, ' AND ')}`);

/**
 * Before a query: a name search gets its plan. Every row's `nameFolded` is its name's fold, kept by the database
 * whoever writes the row (migration *_plant_name_fold_in_the_database), so nothing is folded here.
 */
export async function ready(filters: PlantFilters): Promise<PlannedFilters> {
  return filters.q === undefined ? filters : { ...filters, search: await planNameSearch(filters.q) };
}

/**
 * An order as segments: the rows of one segment all come before those of the next, and within a segment
 * they go by (key, id). One segment for most keys; the tag sort has two, tagged plants by (folded tag, id) then
 * untagged ones by id, because NULLs sort first on SQLite and last on PostgreSQL and neither engine walks
 * an index for `NULLS LAST` on the other's side. Every segment is walked by an index in both directions.
 */
export type Segment = { only: Prisma.Sql | null; key: Prisma.Sql | null; keyColumn: string | null };

const ID_ONLY: Segment[] = [{ only: null, key: null, keyColumn: null }];
const SEGMENTS: Record<PlantSort['key'], Segment[]> = {
  id: ID_ONLY,
  name: [{ only: null, key: Prisma.sql`p."nameFolded"`, keyColumn: 'nameFolded' }],
  created: [{ only: null, key: Prisma.sql`p."createdAt"`, keyColumn: 'createdAt' }],
  owner: [{ only: null, key: Prisma.sql`o.name`, keyColumn: 'owner' }],
  tag: [
    // By the folded tag (any case together: "aquatic", "Tropical", "tropical", "Zebra"), kept by the database
    // beside the tag and null exactly when it is (migration *_plant_tag_fold).
    { only: Prisma.sql`p."tagFolded" IS NOT NULL`, key: Prisma.sql`p."tagFolded"`, keyColumn: 'tagFolded' },
    { only: Prisma.sql`p."tagFolded" IS NULL`, key: null, keyColumn: null },
  ],
};

export function segmentsOf(sort: PlantSort): Segment[] {
  return SEGMENTS[sort.key];
}

/** Which segment a row belongs to (only the tag sort has more than one). */
export function segmentOfRow(sort: PlantSort, row: { tag?: string | null }): number {
  return sort.key === 'tag' && (row.tag === null || row.tag === undefined) ? 1 : 0;
}

/**
 * Rows in id order past `past`, `limit` of them: `query` is asked with a table of plants and the id it orders by.
 * On SQLite a search of many matches of three characters or more first tries the phrase's first matches by id
 * (sqliteIdOrderProbe), which hold the page after a few dozen when the view holds most plants, and walks the view
 * only when they hold too few of its rows; otherwise the rows come from plantsFrom as always.
 */
export async function inIdOrder<Row>(
  filters: PlannedFilters,
  descending: boolean,
  past: bigint | undefined,
  limit: number,
  query: (from: Prisma.Sql, id: Prisma.Sql) => Promise<Row[]>,
): Promise<Row[]> {
  return (await probedInIdOrder(filters, descending, past, limit, query)) ?? query(plantsFrom(filters), idColumn(filters));
}

/** SQLite's id-order probe (inIdOrder): its rows when they hold the page, else null (the caller walks from `past`). */
async function probedInIdOrder<Row>(
  filters: PlannedFilters,
  descending: boolean,
  past: bigint | undefined,
  limit: number,
  query: (from: Prisma.Sql, id: Prisma.Sql) => Promise<Row[]>,
): Promise<Row[] | null> {
  const search = searchOf(filters);
  if (engine !== 'sqlite' || search?.plan !== 'filter' || !indexable(search.folded)) return null;
  const probed = await query(sqliteIdOrderProbe(search.folded, descending, past), Prisma.sql`m.id`);
  return probed.length >= limit ? probed : null;
}

/** A position in an order: a row's segment, its key as the database holds it, and its id. */
export type KeysetPosition = { segment: number; key: unknown; id: bigint };

const ASC = Prisma.sql`ASC`;
const DESC = Prisma.sql`DESC`;

const P_ID = Prisma.sql`p.id`;

/**
 * The id a query orders and pages by: the plant's, or on SQLite for the index plan the FTS5 match's (the
 * same number), which the FTS5 table walks in order itself, so a page by id stops after its rows.
 */
export function idColumn(filters: PlannedFilters): Prisma.Sql {
  return engine === 'sqlite' && searchOf(filters)?.plan === 'index' ? Prisma.sql`m.id` : P_ID;
}

/** `ORDER BY` of one segment, forwards (the sort's own direction) or backwards. */
export function orderBy(segment: Segment, descending: boolean, id: Prisma.Sql = P_ID): Prisma.Sql {
  const direction = descending ? DESC : ASC;
  return segment.key ? Prisma.sql`ORDER BY ${segment.key} ${direction}, p.id ${direction}` : Prisma.sql`ORDER BY ${id} ${direction}`;
}

/** Rows strictly past `position` in the walking direction (within the position's own segment). */
export function pastCondition(segment: Segment, position: KeysetPosition, descending: boolean, id: Prisma.Sql = P_ID): Prisma.Sql {
  if (!segment.key) return descending ? Prisma.sql`${id} < ${position.id}` : Prisma.sql`${id} > ${position.id}`;
  return descending ? Prisma.sql`(${segment.key}, p.id) < (${position.key}, ${position.id})` : Prisma.sql`(${segment.key}, p.id) > (${position.key}, ${position.id})`;
}

/** A row as selected: the plant's own columns, its owner and creation time, and its sort key. */
export type RawRow = { id: bigint | number | string } & StoredFields & { createdAt?: Date | string; owner?: string; sortKey?: unknown };

export function toRow(raw: RawRow, withOwner: boolean): PlantRow {
  const plant = toPlant({ ...raw, id: BigInt(raw.id) });
  return withOwner ? { ...plant, owner: raw.owner!, createdAt: new Date(raw.createdAt!) } : plant;
}

/** The plant's own columns: id and the declared fields (plain identifiers, checked in shared/plants.ts). */
const OWN_COLUMNS = Prisma.raw(['id', ...PLANT_FIELD_NAMES].map((column) => `p."${column}"`).join(', '));
// The plant's own columns need no join: the REST list, the API's hottest read, and a member's table.
export const PLANT_COLUMNS = Prisma.sql`SELECT ${OWN_COLUMNS}`;
const OWNER_JOIN = Prisma.sql`JOIN "User" o ON o.id = p."ownerId"`;

/** The SELECT of the admin page's rows: with owner and creation time for admins, and the sort key. */
// plant scope: a SELECT … FROM, whose WHERE its callers (selectFrom, positionOf) take from conditions().
export function rowSelect(withOwner: boolean, segment: Segment, from: Prisma.Sql = Prisma.sql`"Plant" p`): Prisma.Sql {
  const key = segment.key ? Prisma.sql`, ${segment.key} AS "sortKey"` : Prisma.empty;
  const joined = withOwner || segment.keyColumn === 'owner';
  const owner = withOwner ? Prisma.sql`, p."createdAt" AS "createdAt", o.name AS owner` : Prisma.empty;
  return Prisma.sql`SELECT ${OWN_COLUMNS}${owner}${key} FROM ${from} ${joined ? OWNER_JOIN : Prisma.empty}`;
}

/**
 * Where a page's rows come from: `source` (plantsFrom(), or SQLite's id-order probe), except on PostgreSQL for a walk in name order (the filter plan
 * sorted by name). Its matches may lie far apart in that order (at 10 M, "orchid" sorted by name passes some
 * 550,000 names before its first match), and an index scan would read each passed row from the table to test
 * its name. So the page's ids come first from the name index alone, an index-only scan that tests each folded
 * name where the index holds it, and only those rows are read.
 */
function pageFrom(source: Prisma.Sql, filters: PlannedFilters, segment: Segment, where: Prisma.Sql[], ordering: Prisma.Sql, limit: number): Prisma.Sql {
  if (engine !== 'postgresql' || searchOf(filters)?.plan !== 'filter' || segment.keyColumn !== 'nameFolded') return source;
  // plant scope: `where` starts with conditions(); the outer query applies it again to the page's rows.
  return Prisma.sql`(SELECT p.id FROM "Plant" p ${whereOf(where)} ${ordering} LIMIT ${limit}) page JOIN "Plant" p ON p.id = page.id`;
}

/** A row as a page reads it: its columns, and which segment of the order it is in. */
export type SelectedRow = RawRow & { segment: number };

/**
 * Rows a read found, and `stop`: the last row its walk read when the walk stopped at its budget before it found
 * `limit` rows (null when it did not). Rows past `stop` are not known yet; a read from `stop` on goes on.
 */
export type Walked = { rows: SelectedRow[]; stop: SelectedRow | null };

/**
 * Whether a page of these filters walks an index in its order and tests each name: a search of many matches (the
 * filter plan), in any order. No index lists a substring's matches in name, tag, owner or creation order, so the
 * walk is as long as the distance between matches in that order: at 10 M plants "orchid" by name passes ~550,000
 * names before its first match, and matches that all sort last leave every row of the view to walk. In id order
 * (the admin page's default; the bulk changes' and, by default, the export's) the walk is the primary key's, or
 * the owner's (ownerId, id) and the tag's (tag, id) indexes: dense matches fill a page at once, but a view whose
 * matches lie at its far end in ids (an admin's search whose matches were added last; a member whose plants hold
 * few of the phrase's first matches, where SQLite's probe gives up) would be walked to the end: at 1 M plants 129 ms
 * a request on SQLite, 618 ms on PostgreSQL (docs/performance.md, "What is not bounded"). The REST list walks so: its
 * pages are full, so that a page depends only on what its ETag does (service.ts, listPlants).
 */
export const walksNames = (filters: PlannedFilters): boolean => searchOf(filters)?.plan === 'filter';

/** Up to `limit` rows from `from` on (or from the start), walking the segments in the sort's direction. */
export async function selectFrom(
  actor: Actor,
  filters: PlannedFilters,
  sort: PlantSort,
  options: { from?: KeysetPosition; backwards?: boolean; limit: number; withOwner: boolean },
): Promise<SelectedRow[]> {
  return (await selectWalked(actor, filters, sort, options)).rows;
}

/**
 * As selectFrom; with `walkBudget`, a walk that tests names (walksNames) reads at most that many rows of each
 * segment and says where it stopped (`stop`), so no one statement of its callers (the admin page, the bulk
 * changes, the export: not the REST list) reads more than that whatever the store holds (in id order, after
 * SQLite's probe, which reads at most ID_ORDER_PROBE_MATCHES matches).
 */
export async function selectWalked(
  actor: Actor,
  filters: PlannedFilters,
  sort: PlantSort,
  options: { from?: KeysetPosition; backwards?: boolean; limit: number; withOwner: boolean; walkBudget?: number },
): Promise<Walked> {
  const descending = (sort.dir === 'desc') !== Boolean(options.backwards);
  const segments = segmentsOf(sort);
  const order = descending ? [...segments.keys()].reverse() : [...segments.keys()];
  const start = options.from ? order.indexOf(options.from.segment) : 0;
  const base = conditions(actor, filters);
  const capped = options.walkBudget !== undefined && walksNames(filters);
  const rows: SelectedRow[] = [];
  for (const index of order.slice(start)) {
    const segment = segments[index]!;
    const where = [...base, ...(segment.only ? [segment.only] : [])];
    const from = options.from && index === options.from.segment ? options.from : undefined;
    const limit = options.limit - rows.length;
    const select = (source: Prisma.Sql, id: Prisma.Sql) => {
      const bounded = from ? [...where, pastCondition(segment, from, descending, id)] : where;
      const ordering = orderBy(segment, descending, id);
      return db.$queryRaw<RawRow[]>`${rowSelect(options.withOwner, segment, pageFrom(source, filters, segment, bounded, ordering, limit))} ${whereOf(bounded)} ${ordering} LIMIT ${limit}`;
    };
    if (capped) {
      // In id order SQLite's probe of the phrase's first matches keeps its job: when they hold the page, no walk.
      const probed = sort.key === 'id' ? await probedInIdOrder(filters, descending, from?.id, limit, select) : null;
      if (probed) {
        rows.push(...probed.map((row) => ({ ...row, segment: index })));
        break;
      }
      // The tag filter is held in the tag order by (tag, tagFolded, id) and (ownerId, tag, tagFolded, id), in id order by (tag, id) and (ownerId, tag, id).
      const tagIndexed = sort.key === 'tag' || sort.key === 'id';
      const walked = await walkSegment(actor, filters, segment, { from, descending, limit, withOwner: options.withOwner, budget: options.walkBudget!, tagIndexed });
      rows.push(...walked.rows.map((row) => ({ ...row, segment: index })));
      if (walked.stop) return { rows, stop: { ...walked.stop, segment: index } };
      if (rows.length >= options.limit) break;
      continue;
    }
    const found = segment.key ? await select(plantsFrom(filters), idColumn(filters)) : await inIdOrder(filters, descending, from?.id, limit, select);
    rows.push(...found.map((row) => ({ ...row, segment: index })));
    if (rows.length >= options.limit) break;
  }
  return { rows, stop: null };
}

/**
 * One segment of a capped walk, in one statement (so the rows and where the walk stopped come from one
 * snapshot): the first `budget` rows of the view in the segment's order past `from`, each name tested where
 * the index holds it, up to `limit` matches; and, only when those are fewer than `limit`, the `budget`-th row
 * of the same walk, where the next request goes on (none when the segment holds fewer rows: it is done).
 * The walk is a subquery with its own ORDER BY and LIMIT that both engines read in order and lazily (SQLite as a
 * co-routine, PostgreSQL as a subquery scan), so a search whose matches are dense stops after its page as before.
 */
async function walkSegment(
  actor: Actor,
  filters: PlannedFilters,
  segment: Segment,
  options: { from: KeysetPosition | undefined; descending: boolean; limit: number; withOwner: boolean; budget: number; tagIndexed: boolean },
): Promise<{ rows: RawRow[]; stop: RawRow | null }> {
  const { from, descending, limit, budget } = options;
  const direction = descending ? DESC : ASC;
  // The budget counts the rows the walk reads, so the walk's WHERE holds only what its index holds: the access
  // rule and the owner filter (every order has an (ownerId, key, id) index; the owner order walks each owner's
  // plants by id) and, in the tag order, the tag. A tag filter in name or creation order is no index's (none
  // holds (tag, name)): inside the LIMIT it made the walk read every row of the view until it had `budget` of
  // that tag (an admin's 600,000 + 600,000 store: 166 ms a request), so it is tested beside the name instead.
  const tagBeside = filters.tag !== undefined && !options.tagIndexed;
  // plant scope: scopeConditions() starts with the access rule; the name (and tag) test is the walk's own, below.
  const viewed = [...scopeConditions(actor, filters, !tagBeside), ...(segment.only ? [segment.only] : []), ...(from ? [pastCondition(segment, from, descending)] : [])];
  const join = segment.keyColumn === 'owner' ? OWNER_JOIN : Prisma.empty;
  const ordering = orderBy(segment, descending);
  // The folded name once: selected twice (as the key and as the name tested), SQLite no longer sees that the
  // subquery's rows come in the outer query's order, and sorts the whole walk (6 ms for "o" at 1 M, not 0.01).
  const byName = segment.keyColumn === 'nameFolded';
  const key = segment.key ? Prisma.sql`, ${segment.key} AS k` : Prisma.empty;
  const name = byName ? Prisma.empty : Prisma.sql`, p."nameFolded" AS nf`;
  const tag = tagBeside ? Prisma.sql`, p.tag AS t` : Prisma.empty;
  // plant scope: `viewed` starts with the scope.
  const walk = Prisma.sql`SELECT p.id AS id${key}${name}${tag} FROM "Plant" p ${join} ${whereOf(viewed)} ${ordering} LIMIT ${budget}`;
  const walkOrder = segment.key ? Prisma.sql`ORDER BY w.k ${direction}, w.id ${direction}` : Prisma.sql`ORDER BY w.id ${direction}`;
  const tests = [nameContains(searchOf(filters)!.folded, byName ? Prisma.sql`w.k` : Prisma.sql`w.nf`), ...(tagBeside ? [Prisma.sql`w.t = ${filters.tag}`] : [])];
  const matches = Prisma.sql`SELECT w.id AS id FROM (${walk}) w ${whereOf(tests)} ${walkOrder} LIMIT ${limit}`;
  // plant scope: as above.
  // Read only when the page is short: its LIMIT, computed before the walk starts, is then 1, else 0 (a gate in a
  // WHERE would be tested after the walk of `budget` rows; in the LIMIT, neither engine starts it).
  const last = Prisma.sql`SELECT p.id AS id FROM "Plant" p ${join} ${whereOf(viewed)} ${ordering} LIMIT CASE WHEN (SELECT COUNT(*) FROM page) < ${limit} THEN 1 ELSE 0 END OFFSET ${budget - 1}`;
  // plant scope: the rows of ids the walk above found in the scope. On SQLite CROSS JOIN keeps the page's few ids
  // as the outer loop: for the statement's ORDER BY id (id order) its planner would rather scan the whole table
  // by the primary key and probe the page (an admin's "o" by id at 1 M: 0.3 ms → 130–400 ms).
  const matchRows = rowSelect(options.withOwner, segment, Prisma.sql`page x ${engine === 'sqlite' ? Prisma.sql`CROSS JOIN` : Prisma.sql`JOIN`} "Plant" p ON p.id = x.id`);
  // The last row by its id as one value: joined to a subquery whose LIMIT it cannot know, PostgreSQL's planner
  // expected thousands of rows and hashed the whole table (400 ms at 1 M).
  // plant scope: as above.
  const lastRow = Prisma.sql`${rowSelect(options.withOwner, segment)} WHERE p.id = (${last})`;
  const resultOrder = segment.key ? Prisma.sql`ORDER BY "sortKey" ${direction}, id ${direction}` : Prisma.sql`ORDER BY id ${direction}`;
  const found = await db.$queryRaw<(RawRow & { walkEnd: number | bigint })[]>`WITH page AS MATERIALIZED (${matches})
    SELECT r.*, 0 AS "walkEnd" FROM (${matchRows}) r
    UNION ALL
    SELECT r.*, 1 AS "walkEnd" FROM (${lastRow}) r
    ${resultOrder}`;
  const strip = ({ walkEnd: _, ...row }: RawRow & { walkEnd: unknown }): RawRow => row;
  const stop = found.find((row) => Number(row.walkEnd) === 1);
  return { rows: found.filter((row) => Number(row.walkEnd) === 0).map(strip), stop: stop ? strip(stop) : null };
}

/**
 * A count of the admin page ("1–25 of 10,000+"): exact up to COUNT_CAP (shared/limits.ts), else at least
 * `count`; no count reads more than COUNT_CAP + 1 matching index entries, and a count that tests names reads
 * at most COUNT_WALK_BUDGET rows (POSTGRESQL_COUNT_WALK_BUDGET on PostgreSQL; docs/admin-page.md, "At scale").
 */
export type Count = { count: number; exact: boolean };
export const COUNT_WALK_BUDGET = 50_000;
/**
 * SQLite: how many of a phrase's matches a count reads by id before it counts by the walk instead: as many as
 * deciding the plan reads (INDEXED_MATCHES_MAX), enough when the view holds the cap's worth of them. Each
 * costs the index's work and a row looked up, ten times a walked row: at 1 M plants, counting the 6,944
 * matches of "orchid ivy" for a view holding none of them took two statements of 57 and 288 ms (p50 of 3,
 * load 3–6), and 37 and 12 ms with 5,000 (docs/performance.md, "Search at scale").
 */
export const PHRASE_COUNT_BUDGET = 2_000;
/**
 * PostgreSQL's walk reads each row from the table (~1.2 µs at 10 M plants, where SQLite's reads its FTS5
 * list): 50,000 cost a search of many matches ("orchid ivy") ~50 ms, 10,000 cost 2–5 ms (docs/performance.md,
 * "Search at scale").
 */
export const POSTGRESQL_COUNT_WALK_BUDGET = 10_000;

const countOf = async (sql: Prisma.Sql) => Number((await db.$queryRaw<{ count: bigint | number }[]>(sql))[0]?.count ?? 0);

/** Where a count of these filters stops ("10,000+"): a search's count costs more per row, so it stops sooner. */
export const countCapOf = (filters: PlannedFilters): number => (searchOf(filters) ? SEARCH_COUNT_CAP : COUNT_CAP);

/** How many plants of these filters also meet `extra` (a keyset bound, a segment), counted as above. */
async function countWhere(actor: Actor, filters: PlannedFilters, extra: Prisma.Sql[], join: Prisma.Sql): Promise<Count> {
  const search = searchOf(filters);
  const cap = countCapOf(filters);
  const capped = (count: number, exactBelowCap: boolean): Count => (count > cap ? { count: cap, exact: false } : { count, exact: exactBelowCap });
  if (search?.plan !== 'filter') {
    // Every row the query reads matches (an index range; or the few matches of the trigram index).
    const where = whereOf([...conditions(actor, filters), ...extra]);
    return capped(await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM ${plantsFrom(filters)} ${join} ${where} LIMIT ${cap + 1}) c`), true);
  }
  const scope = whereOf([...scopeConditions(actor, filters), ...extra]);
  // A short query, or many matches on PostgreSQL, or too many on SQLite to read them all: the scope's rows in
  // any order, each name tested, up to the engine's walk budget; stopping once past the cap (a search of 1 in
  // 6 stops after ~6,000 rows); under it, whether the walk saw every row of the scope.
  const budget = engine === 'postgresql' ? POSTGRESQL_COUNT_WALK_BUDGET : COUNT_WALK_BUDGET;
  const walk = async (): Promise<Count> => {
    // plant scope: `scope` is scopeConditions(), which starts with the scope.
    const walked = Prisma.sql`SELECT p."nameFolded" AS "nameFolded" FROM "Plant" p ${join} ${scope} LIMIT ${budget}`;
    const found = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM (${walked}) w WHERE ${nameContains(search.folded, Prisma.sql`w."nameFolded"`)} LIMIT ${cap + 1}) c`);
    if (found > cap) return capped(found, false);
    // plant scope: as above.
    const rows = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM "Plant" p ${join} ${scope} LIMIT ${budget}) c`);
    return { count: found, exact: rows < budget };
  };
  if (engine === 'sqlite' && indexable(search.folded)) {
    // Many matches: the FTS5 index lists them by id, and each is looked up for the access rule, the filters
    // and its name (the index finds more than the query's matches for some queries: search.ts), up to the
    // cap, among the first PHRASE_COUNT_BUDGET matches.
    const named = whereOf([...scopeConditions(actor, filters), nameContains(search.folded), ...extra]);
    const found = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM ${sqliteIndexedPlants(search.folded, PHRASE_COUNT_BUDGET)} ${join} ${named} LIMIT ${cap + 1}) c`);
    if (found > cap) return capped(found, false);
    const matches = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (${ftsMatches(search.folded, PHRASE_COUNT_BUDGET)}) c`);
    if (matches < PHRASE_COUNT_BUDGET) return { count: found, exact: true };
    // More matches in the store than that: the view's own rows may be fewer (a member's few plants).
    const walked = await walk();
    return walked.exact ? walked : { count: Math.max(found, walked.count), exact: false };
  }
  return walk();
}

/** How many matching rows lie on one side of `position` in the sort's order (not counting its own row). */
async function countBeside(actor: Actor, filters: PlannedFilters, sort: PlantSort, position: KeysetPosition, side: 'before' | 'after'): Promise<Count> {
  const descending = sort.dir === 'desc';
  const segments = segmentsOf(sort);
  const total: Count = { count: 0, exact: true };
  for (const [index, segment] of segments.entries()) {
    const earlier = descending ? index > position.segment : index < position.segment;
    const later = descending ? index < position.segment : index > position.segment;
    if (index !== position.segment && !(side === 'before' ? earlier : later)) continue;
    const towardsStart = side === 'before' ? !descending : descending;
    const extra = [...(segment.only ? [segment.only] : []), ...(index === position.segment ? [pastCondition(segment, position, towardsStart, idColumn(filters))] : [])];
    const part = await countWhere(actor, filters, extra, segment.keyColumn === 'owner' ? OWNER_JOIN : Prisma.empty);
    total.count += part.count;
    total.exact &&= part.exact;
  }
  return total;
}

/**
 * How many matching rows come before `position`, a row of the view: counted from the start up to the cap, and
 * past it, when the view's total is exact (kept-counts.ts), from the end: the total less the rows after it and
 * itself. So a page is placed exactly within COUNT_CAP rows of either end of any view with a kept total, at any
 * size of the store; only between those, further than the cap from both ends, it is "past the first 10,000".
 */
export async function countBefore(actor: Actor, filters: PlannedFilters, sort: PlantSort, position: KeysetPosition, total?: Count): Promise<Count> {
  const before = await countBeside(actor, filters, sort, position, 'before');
  if (before.exact || !total?.exact) return before;
  const after = await countBeside(actor, filters, sort, position, 'after');
  return after.exact ? { count: Math.max(before.count, total.count - after.count - 1), exact: true } : before;
}

/** How many plants match: the kept total of a view without a name search (kept-counts.ts), else counted up to the cap. */
export async function countMatching(actor: Actor, filters: PlannedFilters): Promise<Count> {
  const kept = await keptTotal(actor, filters);
  return kept === null ? countWhere(actor, filters, [], Prisma.empty) : { count: kept, exact: true };
}

/** Where a row stands in an order, read from the database (its key as stored); null when it is gone or not the caller's. */
export async function positionOf(actor: Actor, sort: PlantSort, id: bigint): Promise<KeysetPosition | null> {
  const segment = segmentsOf(sort)[0]!;
  const where = [...conditions(actor, {}), Prisma.sql`p.id = ${id}`];
  const [row] = await db.$queryRaw<RawRow[]>`${rowSelect(false, segment)} ${whereOf(where)}`;
  if (!row) return null;
  const index = segmentOfRow(sort, row);
  return { segment: index, key: index === 0 ? row.sortKey : null, id };
}

/**
 * A place in an order as a cursor carries it (the key a walk stopped at, checked against the sort by the input
 * schema): the tag sort's untagged plants are its second segment, by id alone.
 */
export function positionOfKey(sort: PlantSort, id: bigint, key: unknown): KeysetPosition {
  const segment = sort.key === 'tag' && key === null ? 1 : 0;
  return { segment, key: segment === 0 ? key : null, id };
}

export function positionOfRow(sort: PlantSort, row: RawRow & { segment: number }): KeysetPosition {
  return { segment: row.segment, key: row.sortKey ?? null, id: BigInt(row.id) };
}
