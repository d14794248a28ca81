import 'server-only';

import { foldForSearch } from '@/shared/plants';

import type { NameSearch } from './name-search';
import { searchDialect } from './search-dialect';

/**
 * The name search: "the folded name contains the folded query", `%` and `_` as themselves, exactly as
 * `instr`/`strpos` on `nameFolded` always said. What changes with the store's size is how the rows are found:
 *
 * - **index**: a query whose matches are few in the whole store (at most indexedMatchesMax()) takes its rows
 *   from the trigram index. SQLite's FTS5 table "PlantNameSearch" holds each folded name with one U+0001
 *   after it (migration *_plant_name_search_two_characters): a query of three characters or more is a phrase
 *   query of its text (exactly "contains it"); one of two characters is the terms that begin with it (every
 *   two-character substring begins some trigram of the padded name), one range of the term list read through
 *   the fts5vocab table "PlantNameSearchTerms"; one of one character is the terms that begin with it and the
 *   names that end with it (the only place where a character begins no trigram, names of one character
 *   included), the latter from an index of each name's last character (migration
 *   *_plant_name_search_one_character). PostgreSQL's pg_trgm GIN index serves `LIKE '%…%'` (with `%`, `_`
 *   and `\` escaped) for three characters or more, and a GIN index of every name's one- and two-character
 *   substrings serves shorter queries (search-postgresql.ts; SQLite's parts are in search-sqlite.ts, and search-dialect.ts chooses the
 *   engine's). The rows are then sorted and paged among those few.
 * - **filter**: a query that matches many walks the view's own index in its order (the access rule and the
 *   filters first) and tests each row's name: many matches means the first page is found after a short walk.
 *   On SQLite a page in id order of three characters or more first looks among the phrase's first matches by
 *   id (sqliteIdOrderProbe), which for a view of most plants is shorter still.
 *
 * On SQLite the index may find more than the query's matches (U+FFFE and U+FFFF are U+FFFD to it; a query
 * whose trigrams repeat is asked for each distinct one, a long one for its rarest few: sqliteFtsQuery): the
 * index plan tests each name it finds.
 *
 * How many match is read from the index itself on SQLite (a count that stops at indexedMatchesMax() + 1, and
 * for one or two characters at SHORT_QUERY_ENTRIES_BUDGET entries of the term list) and on PostgreSQL from its
 * statistics (the planner's estimate of the rows its index's condition keeps), then, when that says few, from
 * the index (the matches' ids, read up to indexedMatchesMax() + 1 and kept for the query): neither costs more
 * than a few milliseconds, and a wrong guess costs time, never a wrong row. docs/admin-page.md, "At scale", has
 * the figures.
 */

/**
 * A search matching at most this many plants in the whole store is served by the trigram index: 2,000 on SQLite
 * (search-sqlite.ts says why), 10,000 on PostgreSQL.
 */
export const indexedMatchesMax = (): number => searchDialect().indexedMatchesMax;

/** How this search finds its rows (see above). */
export async function planNameSearch(q: string): Promise<NameSearch> {
  const folded = foldForSearch(q);
  return folded.length === 0 ? { folded, plan: 'filter' } : searchDialect().plan(folded);
}
