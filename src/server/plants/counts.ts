import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { byEngine } from '@/server/db/dialect';
import { COUNT_CAP, SEARCH_COUNT_CAP } from '@/shared/limits';
import type { PlantSort } from '@/shared/plant-table';
import type { PlantFilters } from '@/shared/plants';

import { conditions, idColumn, type PlannedFilters, plantsFrom, scopeConditions, searchOf, whereOf } from './conditions';
import { keptTotal } from './kept-counts';
import { type KeysetPosition, pastCondition, segmentsOf } from './keysets';
import { nameContains } from './name-search';
import { OWNER_JOIN } from './rows';
import { searchDialect } from './search-dialect';
import { ftsMatches, sqliteIndexedPlants } from './search-sqlite';

/**
 * A count of the admin page ("1–25 of 10,000+"): exact up to COUNT_CAP (shared/limits.ts), else at least
 * `count`; no count reads more than COUNT_CAP + 1 matching index entries, and a count that tests names reads
 * at most COUNT_WALK_BUDGET rows (POSTGRESQL_COUNT_WALK_BUDGET on PostgreSQL; docs/admin-page.md, "At scale").
 */
export type Count = { count: number; exact: boolean };
export const COUNT_WALK_BUDGET = 50_000;
/**
 * SQLite: how many of a phrase's matches a count reads by id before it counts by the walk instead: as many as
 * deciding the plan reads (indexedMatchesMax()), enough when the view holds the cap's worth of them. Each
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
async function countWhere(actor: Actor, filters: PlannedFilters, extra: Prisma.Sql[], join: Prisma.Sql, cap = countCapOf(filters)): Promise<Count> {
  const search = searchOf(filters);
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
  const budget = byEngine({ sqlite: COUNT_WALK_BUDGET, postgresql: POSTGRESQL_COUNT_WALK_BUDGET });
  const walk = async (): Promise<Count> => {
    // plant scope: `scope` is scopeConditions(), which starts with the scope.
    const walked = Prisma.sql`SELECT p."nameFolded" AS "nameFolded" FROM "Plant" p ${join} ${scope} LIMIT ${budget}`;
    const found = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM (${walked}) w WHERE ${nameContains(search.folded, Prisma.sql`w."nameFolded"`)} LIMIT ${cap + 1}) c`);
    if (found > cap) return capped(found, false);
    // plant scope: as above.
    const rows = await countOf(Prisma.sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM "Plant" p ${join} ${scope} LIMIT ${budget}) c`);
    return { count: found, exact: rows < budget };
  };
  if (searchDialect().countsIndexedMatches(search.folded)) {
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
async function countBeside(actor: Actor, filters: PlannedFilters, sort: PlantSort, position: KeysetPosition, side: 'before' | 'after', cap?: number): Promise<Count> {
  const descending = sort.dir === 'desc';
  const segments = segmentsOf(sort);
  const total: Count = { count: 0, exact: true };
  for (const [index, segment] of segments.entries()) {
    const earlier = descending ? index > position.segment : index < position.segment;
    const later = descending ? index < position.segment : index > position.segment;
    if (index !== position.segment && !(side === 'before' ? earlier : later)) continue;
    const towardsStart = side === 'before' ? !descending : descending;
    const extra = [...(segment.only ? [segment.only] : []), ...(index === position.segment ? [pastCondition(segment, position, towardsStart, idColumn(filters))] : [])];
    const part = await countWhere(actor, filters, extra, segment.keyColumn === 'owner' ? OWNER_JOIN : Prisma.empty, cap);
    total.count += part.count;
    total.exact &&= part.exact;
  }
  return total;
}

/**
 * How many matching rows come before `position`, a row of the view: counted from the start up to the cap, and
 * past it, when the view's total is exact, from the end: the total less the rows after it and itself. A view with
 * a kept total (kept-counts.ts; never a name search, whose counts stay capped) is counted from the end up to half
 * its total, and when more than that follow, from the start up to half: each a range of the index that serves
 * the sort. So every page of such a view is placed exactly, reading at most the cap and the total in index
 * entries (middleCountRows, which the page's declared cost charges); a name search's page further than the cap
 * from both ends is "past the first 1,000".
 */
export async function countBefore(actor: Actor, filters: PlannedFilters, sort: PlantSort, position: KeysetPosition, total?: Count): Promise<Count> {
  const before = await countBeside(actor, filters, sort, position, 'before');
  if (before.exact || !total?.exact) return before;
  const half = searchOf(filters) ? undefined : Math.max(countCapOf(filters), Math.ceil(total.count / 2));
  const after = await countBeside(actor, filters, sort, position, 'after', half);
  if (after.exact) return { count: Math.max(before.count, total.count - after.count - 1), exact: true };
  if (half === undefined) return before;
  // More than half the total follow, so fewer than half come before (unless plants were added since the total was read).
  const fromStart = await countBeside(actor, filters, sort, position, 'before', half);
  return fromStart.exact ? fromStart : before;
}

/**
 * How many index entries placing a page of these filters may read beyond the first count's cap: a page named by
 * a row (`after`, `before`) of a view with a kept total further than the cap from the start reads up to half
 * the total from the end, then up to half from the start. For the page's declared cost (router.ts).
 */
export async function middleCountRows(actor: Actor, input: PlantFilters & { cursor?: { kind: string }; counts?: boolean }): Promise<number> {
  if (input.counts === false || (input.cursor?.kind !== 'after' && input.cursor?.kind !== 'before')) return 0;
  const kept = await keptTotal(actor, { ...(input.owner === undefined ? {} : { owner: input.owner }), ...(input.tag === undefined ? {} : { tag: input.tag }), ...(input.q === undefined ? {} : { q: input.q }) });
  return kept === null || kept <= COUNT_CAP ? 0 : 2 * Math.ceil(kept / 2);
}

/** How many plants match: the kept total of a view without a name search (kept-counts.ts), else counted up to the cap. */
export async function countMatching(actor: Actor, filters: PlannedFilters): Promise<Count> {
  const kept = await keptTotal(actor, filters);
  return kept === null ? countWhere(actor, filters, [], Prisma.empty) : { count: kept, exact: true };
}
