import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { byEngine } from '@/server/db/dialect';

import { P_ID } from './keysets';
import { indexable, type NameSearch } from './name-search';
import { POSTGRESQL_INDEXED_MATCHES_MAX, postgresIndexedName, postgresPlan } from './search-postgresql';
import { SQLITE_INDEXED_MATCHES_MAX, sqliteIdOrderProbe, sqliteIndexedPlants, sqlitePlan } from './search-sqlite';

/**
 * How the name search differs per engine (search.ts describes both): SQLite finds an index plan's rows in its
 * FTS5 trigram table and pages them by the match's id; PostgreSQL tests pg_trgm's and the short substrings'
 * indexes on the plant rows themselves. The queries (conditions.ts, walks.ts, counts.ts) ask this, chosen by
 * the open database's engine, and never which engine they are on: the only module of plants/ that names one.
 */
export type SearchDialect = {
  /** A search matching at most this many plants in the whole store takes the index plan (search.ts). */
  indexedMatchesMax: number;
  /** The plan of a query folded to one character or more. */
  plan(folded: string): Promise<NameSearch>;
  /** The index plan's test on the rows `p`, beside the access rule and the filters; none where the rows come from the index (indexedPlants). */
  indexedCondition(search: NameSearch): Prisma.Sql | null;
  /** Where the index plan's rows `p` come from. */
  indexedPlants(search: NameSearch): Prisma.Sql;
  /** The id the index plan orders and pages by (the same number as the plant's). */
  indexedId: Prisma.Sql;
  /**
   * A filter-plan search in id order: a table of plants `p` (ids `m.id`) of the query's first matches past
   * `past`, which a page tries before it walks the view (walks.ts); null where there is none.
   */
  idOrderProbe(folded: string, descending: boolean, past: bigint | undefined): Prisma.Sql | null;
  /** Whether a filter-plan page in name order reads its ids from the name index alone first (walks.ts, pageFrom). */
  namePageFirst: boolean;
  /** Whether a filter-plan count reads the query's matches from the index first (counts.ts). */
  countsIndexedMatches(folded: string): boolean;
};

const sqlite: SearchDialect = {
  indexedMatchesMax: SQLITE_INDEXED_MATCHES_MAX,
  plan: sqlitePlan,
  indexedCondition: () => null,
  indexedPlants: (search) => sqliteIndexedPlants(search.folded, undefined, search.match),
  indexedId: Prisma.sql`m.id`,
  idOrderProbe: (folded, descending, past) => (indexable(folded) ? sqliteIdOrderProbe(folded, descending, past) : null),
  namePageFirst: false,
  countsIndexedMatches: indexable,
};

const postgresql: SearchDialect = {
  indexedMatchesMax: POSTGRESQL_INDEXED_MATCHES_MAX,
  plan: postgresPlan,
  indexedCondition: postgresIndexedName,
  // plant scope: a FROM, whose WHERE its callers take from conditions.ts's conditions(), which start with the scope.
  indexedPlants: () => Prisma.sql`"Plant" p`,
  indexedId: P_ID,
  idOrderProbe: () => null,
  namePageFirst: true,
  countsIndexedMatches: () => false,
};

/** The name search's parts for the open database's engine. */
export const searchDialect = (): SearchDialect => byEngine({ sqlite, postgresql });
