import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { containsText } from '@/server/db/dialect';

/**
 * What a name search is, apart from how each engine finds it (search.ts plans it; search-dialect.ts
 * chooses the engine's parts, search-sqlite.ts and search-postgresql.ts): the planned search both engines' code
 * and the queries read.
 */

export type NameSearch = {
  /** The query folded as names are (foldForSearch). */
  folded: string;
  plan: 'index' | 'filter';
  /**
   * PostgreSQL's index plan: the ids of every plant of the store whose name matches, read from the index when
   * the search was planned (at most indexedMatchesMax()), so the rows and the count read the index no more.
   */
  matches?: readonly bigint[];
  /**
   * SQLite, the index plan: the FTS5 query that finds the query's names, when it is not ftsQuery(folded): its
   * rarest few trigrams for a long query (sqliteFtsQuery). The filter plan always reads the phrase's matches.
   */
  match?: string;
};

/** The shortest query the trigram index can serve as a phrase: one trigram. */
export const TRIGRAM_LENGTH = 3;

/** Whether the query is a phrase of the trigram index: three characters (code points, after folding) or more. */
export const indexable = (folded: string) => [...folded].length >= TRIGRAM_LENGTH;

/** The name test of the filter plan, on a row's folded name: a plain substring test, the same on both engines. */
export function nameContains(folded: string, column: Prisma.Sql = Prisma.sql`p."nameFolded"`): Prisma.Sql {
  return containsText(column, folded);
}
