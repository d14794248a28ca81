import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { db, engine } from '@/server/db/client';
import { foldForSearch } from '@/shared/plants';

import { postgresMatchesUpTo } from './search-postgresql';

/**
 * The name search: "the folded name contains the folded query", `%` and `_` as themselves, exactly as
 * `instr`/`strpos` on `nameFolded` always said. What changes with the store's size is how the rows are found:
 *
 * - **index**: a query whose matches are few in the whole store (at most INDEXED_MATCHES_MAX) takes its rows
 *   from the trigram index. SQLite's FTS5 table "PlantNameSearch" holds each folded name with one U+0001
 *   after it (migration *_plant_name_search_two_characters): a query of three characters or more is a phrase
 *   query of its text (exactly "contains it"); one of two characters is the terms that begin with it (every
 *   two-character substring begins some trigram of the padded name), one range of the term list read through
 *   the fts5vocab table "PlantNameSearchTerms"; one of one character is the terms that begin with it and the
 *   names that end with it (the only place where a character begins no trigram, names of one character
 *   included), the latter from an index of each name's last character (migration
 *   *_plant_name_search_one_character). PostgreSQL's pg_trgm GIN index serves `LIKE '%…%'` (with `%`, `_`
 *   and `\` escaped) for three characters or more, and a GIN index of every name's one- and two-character
 *   substrings serves shorter queries (search-postgresql.ts). The rows are then sorted and paged among those few.
 * - **filter**: a query that matches many walks the view's own index in its order (the access rule and the
 *   filters first) and tests each row's name: many matches means the first page is found after a short walk.
 *   On SQLite a page in id order of three characters or more first looks among the phrase's first matches by
 *   id (sqliteIdOrderProbe), which for a view of most plants is shorter still.
 *
 * How many match is read from the index itself on SQLite (a count that stops at INDEXED_MATCHES_MAX + 1) and
 * on PostgreSQL from its statistics (the planner's estimate of the rows its index's condition keeps), then, when
 * that says few, from the index (the matches' ids, read up to INDEXED_MATCHES_MAX + 1 and kept for the query):
 * neither costs more than a few milliseconds, and a wrong guess costs time, never a wrong row. docs/admin-page.md, "At scale", has the figures.
 */

/**
 * A search matching at most this many plants in the whole store is served by the trigram index. On SQLite it
 * is also what deciding costs: the count reads the phrase's matches in id order up to this many plus one, and
 * a phrase rarer than its trigrams ("orchid ivy") pays for every row of their longer lists on the way; at
 * 10 M, 10,001 took 22–44 ms against 4–8 ms for 2,001 (docs/performance.md, "Round four: search on SQLite").
 */
export const INDEXED_MATCHES_MAX = engine === 'sqlite' ? 2_000 : 10_000;
/** The shortest query the trigram index can serve as a phrase: one trigram. */
export const TRIGRAM_LENGTH = 3;
/** The shortest query SQLite's padded index serves as the start of a trigram (see above); a shorter one adds the names it ends. */
export const SHORTEST_PREFIX_ON_SQLITE = 2;

export type NameSearch = {
  /** The query folded as names are (foldForSearch). */
  folded: string;
  plan: 'index' | 'filter';
  /**
   * PostgreSQL's index plan: the ids of every plant of the store whose name matches, read from the index when
   * the search was planned (at most INDEXED_MATCHES_MAX), so the rows and the count read the index no more.
   */
  matches?: readonly bigint[];
};

/** Whether the query is a phrase of the trigram index: three characters (code points, after folding) or more. */
export const indexable = (folded: string) => [...folded].length >= TRIGRAM_LENGTH;

/**
 * What SQLite's index holds after each folded name (the migration's triggers write it). A control character:
 * no name or query may hold one (shared/control-characters.ts), so no query's text runs into the padding.
 */
const PADDING_CHARACTER = '\u0001';
/** FTS5's tokenizer reads U+FFFE and U+FFFF as U+FFFD: its index holds none of the three as itself. */
const READ_AS_REPLACEMENT = /[\uFFFD\uFFFE\uFFFF]/u;

/** The first text after every text that begins with `prefix` (its last code point plus one), or null past the last code point. */
export function pastPrefix(prefix: string): string | null {
  const points = [...prefix];
  const last = points.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10_ffff) return null;
  // Surrogates are no characters (a lone one would reach SQLite as U+FFFD): the next one is U+E000.
  const next = last + 1 >= 0xd800 && last + 1 <= 0xdfff ? 0xe000 : last + 1;
  return points.join('') + String.fromCodePoint(next);
}

/** SQLite's FTS5 query for "contains this text": one phrase, its double quotes doubled; nothing else is special in a phrase. */
export const ftsPhrase = (folded: string) => `"${folded.replaceAll('"', '""')}"`;

/**
 * The FTS5 table's matches, as a subquery of plant ids. `limit` stops it early: at the first `limit` by id for
 * a phrase; for one or two characters at any `limit` of them (their terms' rows come term by term, not by
 * id), which is all a count up to a cap asks.
 */
export function ftsMatches(folded: string, limit?: number): Prisma.Sql {
  if (!indexable(folded)) {
    const past = pastPrefix(folded);
    const range = past === null ? Prisma.sql`term >= ${folded}` : Prisma.sql`term >= ${folded} AND term < ${past}`;
    const cut = limit === undefined ? Prisma.empty : Prisma.sql` LIMIT ${limit}`;
    if ([...folded].length >= SHORTEST_PREFIX_ON_SQLITE) return Prisma.sql`SELECT DISTINCT doc AS id FROM "PlantNameSearchTerms" WHERE ${range}${cut}`;
    const beginning = Prisma.sql`SELECT doc AS id FROM "PlantNameSearchTerms" WHERE ${range}`;
    // One character: also the names it ends, from the index of last characters (its expression spelled as
    // the migration spells it). UNION ALL under one DISTINCT, not UNION: a LIMIT then stops both early.
    // plant scope: ids of matching names only, whose rows are read through conditions() (sqliteIndexedPlants).
    const ending = Prisma.sql`SELECT l.id AS id FROM "Plant" l WHERE substr(l."nameFolded", -1) = ${folded}`;
    return Prisma.sql`SELECT DISTINCT id FROM (${beginning} UNION ALL ${ending})${cut}`;
  }
  const cut = limit === undefined ? Prisma.empty : Prisma.sql` ORDER BY rowid LIMIT ${limit}`;
  return Prisma.sql`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ${ftsPhrase(folded)}${cut}`;
}

/** At most `limit` + 1: how many plants of the whole store match, read from the FTS5 index alone. */
async function sqliteMatchesUpTo(folded: string, limit: number): Promise<number> {
  const [row] = await db.$queryRaw<{ count: bigint | number }[]>`SELECT COUNT(*) AS count FROM (${ftsMatches(folded, limit + 1)}) m`;
  return Number(row?.count ?? 0);
}

/** How this search finds its rows (see above). */
export async function planNameSearch(q: string): Promise<NameSearch> {
  const folded = foldForSearch(q);
  // On SQLite a query holding the padding (none from the API, which refuses control characters) is left to the walk.
  // On PostgreSQL every query is served: one or two characters by the index of short substrings (search-postgresql.ts).
  const served = folded.length > 0 && !(engine === 'sqlite' && (folded.includes(PADDING_CHARACTER) || READ_AS_REPLACEMENT.test(folded)));
  if (!served) return { folded, plan: 'filter' };
  if (engine === 'postgresql') {
    const matches = await postgresMatchesUpTo(folded, INDEXED_MATCHES_MAX);
    return matches === null ? { folded, plan: 'filter' } : { folded, plan: 'index', matches };
  }
  const matches = await sqliteMatchesUpTo(folded, INDEXED_MATCHES_MAX);
  return { folded, plan: matches <= INDEXED_MATCHES_MAX ? 'index' : 'filter' };
}

/** The name test of the filter plan, on a row's folded name: a plain substring test, the same on both engines. */
export function nameContains(folded: string, column: Prisma.Sql = Prisma.sql`p."nameFolded"`): Prisma.Sql {
  return engine === 'sqlite' ? Prisma.sql`instr(${column}, ${folded}) > 0` : Prisma.sql`strpos(${column}, ${folded}) > 0`;
}

/**
 * How many of a phrase's matches SQLite reads in id order for a page of the filter plan before it walks the
 * view's own index instead (sqliteIdOrderProbe).
 */
export const ID_ORDER_PROBE_MATCHES = 1_000;

/**
 * SQLite, a search of many matches of three characters or more in id order: a table of plants from the
 * phrase's first ID_ORDER_PROBE_MATCHES matches by id past `past` (FTS5 lists them in id order, either way),
 * like sqliteIndexedPlants. For a view of most plants a page is among them; a caller that finds too few of the
 * view's rows there walks instead, from the same position: the matches it read are all the ones before.
 */
export function sqliteIdOrderProbe(folded: string, descending: boolean, past: bigint | undefined): Prisma.Sql {
  const bound = past === undefined ? Prisma.empty : descending ? Prisma.sql` AND rowid < ${past}` : Prisma.sql` AND rowid > ${past}`;
  const order = descending ? Prisma.sql`DESC` : Prisma.sql`ASC`;
  return plantsOfMatches(Prisma.sql`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ${ftsPhrase(folded)}${bound} ORDER BY rowid ${order} LIMIT ${ID_ORDER_PROBE_MATCHES}`);
}

/** SQLite's whole table of plants for the index plan: the matches first, then each one's row by its id. */
export function sqliteIndexedPlants(folded: string, limit?: number): Prisma.Sql {
  return plantsOfMatches(ftsMatches(folded, limit));
}

/** A table of plants `p` from a subquery of matching ids `m`: the matches first, then each one's row by its id. */
function plantsOfMatches(matches: Prisma.Sql): Prisma.Sql {
  // CROSS JOIN keeps the matches as the outer loop and INDEXED BY makes each plant a primary-key lookup:
  // without statistics SQLite would rather walk an index of the access rule ("ownerId" = ?) for every match.
  // plant scope: a FROM, whose WHERE its callers take from query.ts's conditions(), which start with the scope.
  return Prisma.sql`(${matches}) m CROSS JOIN "Plant" p INDEXED BY "sqlite_autoindex_Plant_1" ON p.id = m.id`;
}
