import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { AppError } from '@/shared/errors';
import { foldForSearch, type PlantFilters } from '@/shared/plants';

import { P_ID } from './keysets';
import { nameContains, type NameSearch } from './name-search';
import { plantScopeSql, seesEveryOwner } from './scope';
import { planNameSearch } from './search';
import { searchDialect } from './search-dialect';

/**
 * Which plants a read is about, as SQL: the access scope (scope.ts) and the filters, as one WHERE, and where the
 * rows come from. Every read of plant rows builds on these (the list, the page, the export, the bulk changes);
 * plants/scope.test.ts fails on a plant query that takes its access rule from anywhere but scope.ts.
 */

/** Filters as a query runs them: a name search comes with its plan (`ready` makes it; search.ts). */
export type PlannedFilters = PlantFilters & { search?: NameSearch };

/** The search of these filters, planned or not (unplanned, the filter plan: what a search always did). */
export function searchOf(filters: PlannedFilters): NameSearch | undefined {
  if (filters.q === undefined) return undefined;
  return filters.search ?? { folded: foldForSearch(filters.q), plan: 'filter' };
}

/**
 * The access scope and the tag and owner filters: which plants a view is about, before any name search.
 * `withTag: false` leaves the tag filter out (a capped walk tests it beside the name: walkSegment).
 */
export function scopeConditions(actor: Actor, filters: PlantFilters, withTag = true): Prisma.Sql[] {
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
  else if (search?.plan === 'index') {
    const indexed = searchDialect().indexedCondition(search);
    if (indexed) list.push(indexed);
  }
  return list;
}

/** Where the plant rows `p` come from: the table, or on SQLite for the index plan, the FTS5 matches' rows. */
export function plantsFrom(filters: PlannedFilters): Prisma.Sql {
  const search = searchOf(filters);
  // plant scope: a FROM, whose WHERE its callers take from conditions(), which starts with the scope.
  return search?.plan === 'index' ? searchDialect().indexedPlants(search) : Prisma.sql`"Plant" p`;
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
 * The id a query orders and pages by: the plant's, or on SQLite for the index plan the FTS5 match's (the
 * same number), which the FTS5 table walks in order itself, so a page by id stops after its rows.
 */
export function idColumn(filters: PlannedFilters): Prisma.Sql {
  return searchOf(filters)?.plan === 'index' ? searchDialect().indexedId : P_ID;
}
