import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { orderedJoin } from '@/server/db/dialect';
import type { PlantSort } from '@/shared/plant-table';

import { conditions, idColumn, type PlannedFilters, plantsFrom, scopeConditions, searchOf, whereOf } from './conditions';
import { ASC, DESC, type KeysetPosition, orderBy, pastCondition, type Segment, segmentsOf } from './keysets';
import { nameContains } from './name-search';
import { OWNER_JOIN, type RawRow, rowSelect } from './rows';
import { searchDialect } from './search-dialect';

/**
 * Reads of rows in an order: keyset pages of any sort, and the walks with a budget that a name search of many
 * matches makes (the admin page, the bulk changes, the export).
 */

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
  const probe = search?.plan === 'filter' ? searchDialect().idOrderProbe(search.folded, descending, past) : null;
  if (!probe) return null;
  const probed = await query(probe, Prisma.sql`m.id`);
  return probed.length >= limit ? probed : null;
}

/**
 * Where a page's rows come from: `source` (plantsFrom(), or SQLite's id-order probe), except on PostgreSQL for a walk in name order (the filter plan
 * sorted by name). Its matches may lie far apart in that order (at 10 M, "orchid" sorted by name passes some
 * 550,000 names before its first match), and an index scan would read each passed row from the table to test
 * its name. So the page's ids come first from the name index alone, an index-only scan that tests each folded
 * name where the index holds it, and only those rows are read.
 */
function pageFrom(source: Prisma.Sql, filters: PlannedFilters, segment: Segment, where: Prisma.Sql[], ordering: Prisma.Sql, limit: number): Prisma.Sql {
  if (!searchDialect().namePageFirst || searchOf(filters)?.plan !== 'filter' || segment.keyColumn !== 'nameFolded') return source;
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
  const matchRows = rowSelect(options.withOwner, segment, Prisma.sql`page x ${orderedJoin()} "Plant" p ON p.id = x.id`);
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
