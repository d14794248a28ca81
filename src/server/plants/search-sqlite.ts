import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { db } from '@/server/db/client';

import { indexable, nameContains, type NameSearch, TRIGRAM_LENGTH } from './name-search';


/**
 * SQLite's indexedMatchesMax() (search.ts). It is also what deciding costs: the count reads the phrase's matches in
 * id order up to this many plus one, and a phrase rarer than its trigrams ("orchid ivy") pays for every row of
 * their longer lists on the way; at 10 M, 10,001 took 22–44 ms against 4–8 ms for 2,001 (docs/performance.md,
 * "Search at scale").
 */
export const SQLITE_INDEXED_MATCHES_MAX = 2_000;
/** The shortest query SQLite's padded index serves as the start of a trigram (see above); a shorter one adds the names it ends. */
export const SHORTEST_PREFIX_ON_SQLITE = 2;

/**
 * What SQLite's index holds after each folded name (the migration's triggers write it). A control character:
 * no name or query may hold one (shared/control-characters.ts), so no query's text runs into the padding.
 */
const PADDING_CHARACTER = '\u0001';
/**
 * FTS5's tokenizer reads U+FFFE and U+FFFF as U+FFFD: its index holds all three as U+FFFD. The text of a query
 * as the index holds it finds a name holding any of the three where the query holds one: more than the
 * query's matches, never fewer, so the index plan tests each found name (sqliteIndexedPlants).
 */
const asIndexed = (folded: string) => folded.replace(/[\uFFFE\uFFFF]/gu, '\uFFFD');

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
 * The FTS5 query that finds a query's names (three characters or more): the phrase of its text, unless a
 * trigram repeats in it ("000000", "ababab"); then each of its distinct trigrams, all of them (AND). FTS5
 * matches a phrase by walking every token's positions in each name holding them all, so a phrase of n
 * tokens costs up to n × (the name's positions of them) per name: 198 tokens of "000" against names of 200
 * zeros cost 190 ms per statement at 1 M plants (docs/performance.md, "Search at scale"). Every distinct trigram,
 * without positions, costs one step per trigram and name, and finds every name the phrase finds (and some
 * more, which the name test drops). A query without a repeated trigram, what people type, keeps its phrase.
 */
export function ftsQuery(folded: string): string {
  const points = [...asIndexed(folded)];
  const trigrams = trigramsOf(folded);
  const distinct = new Set(trigrams);
  return distinct.size === trigrams.length ? ftsPhrase(points.join('')) : [...distinct].map(ftsPhrase).join(' AND ');
}

/** A query's trigrams as the index holds them (asIndexed), in the query's order, with repeats. */
const trigramsOf = (folded: string): string[] => {
  const points = [...asIndexed(folded)];
  return points.slice(TRIGRAM_LENGTH - 1).map((_, at) => points.slice(at, at + TRIGRAM_LENGTH).join(''));
};

/**
 * A query of more distinct trigrams than this is not asked of SQLite's index as its phrase but by its
 * RARE_TRIGRAMS_ASKED rarest trigrams. FTS5 matches a phrase (or an AND) by reading every token's list: 79
 * characters of the bench's common words, 77 trigrams each in 1 in 6 to 1 in 144 names, cost ~340 ms
 * a statement at 1 M plants, matching nothing. The rarest few (AND, without positions) find a superset of the
 * query's matches, each name tested after (sqliteIndexedPlants; the filter plan tests every row anyway).
 * docs/performance.md, "Search at scale", has the figures that chose these.
 */
export const LONG_QUERY_TRIGRAMS = 8;
export const RARE_TRIGRAMS_ASKED = 4;
/**
 * How many entries of a trigram's list in the term list are read to rank it (in id order): one with fewer is
 * counted; one with this many is estimated by how far apart in ids they lie (this many over their span of
 * ids, times the store's span). Reading every common trigram's list up to a count that tells them apart
 * costs more than it saves (at 1 M, 77 trigrams up to 10,000 entries: ~57 ms); this many is ~2 ms for 77.
 */
export const TRIGRAM_SAMPLE_ENTRIES = 100;
/**
 * The most distinct trigrams of one query that are ranked, spread over it: a query of a name's length folds to up
 * to 3,600 characters (U+FDFA is 18), whose trigrams one statement could not rank (SQLite's compound SELECT takes
 * 500 terms) nor afford to. Any of a query's trigrams finds a superset of its matches, so the rarest of these
 * serve as well; ranking 128 reads at most 128 × TRIGRAM_SAMPLE_ENTRIES entries of the term list.
 */
export const RANKED_TRIGRAMS_MAX = 128;

/** A trigram's rank (fewer is rarer): its entries when fewer than the sample, else an estimate of them. */
type Rarity = { trigram: string; at: number; entries: number };

/**
 * Each distinct trigram's rarity, in one statement: one bounded read of the fts5vocab instance table per
 * trigram (it seeks the term and stops at TRIGRAM_SAMPLE_ENTRIES), and the store's span of ids.
 */
async function trigramRarities(trigrams: string[]): Promise<Rarity[]> {
  const samples = Prisma.join(
    trigrams.map(
      (trigram, at) =>
        Prisma.sql`SELECT ${at} AS at, COUNT(*) AS entries, MAX(doc) - MIN(doc) AS span FROM (SELECT doc FROM "PlantNameSearchTerms" WHERE term = ${trigram} LIMIT ${TRIGRAM_SAMPLE_ENTRIES})`,
    ),
    ' UNION ALL ',
  );
  type Sample = { at: bigint | number; entries: bigint | number; span: bigint | number | null };
  const [rows, [store]] = await Promise.all([
    db.$queryRaw<Sample[]>`${samples}`,
    // Two subqueries: SQLite reads MIN and MAX off the primary key's index only one at a time (together: a scan, ~65 ms at 1 M).
    // plant scope: the whole store's span of ids, which only ranks trigrams (no row, count or id leaves this function).
    db.$queryRaw<{ low: bigint | number | null; high: bigint | number | null }[]>`SELECT (SELECT MIN(id) FROM "Plant") AS low, (SELECT MAX(id) FROM "Plant") AS high`,
  ]);
  const storeSpan = Number(store?.high ?? 0) - Number(store?.low ?? 0) + 1;
  return rows.map((row) => {
    const entries = Number(row.entries);
    const sampled = entries >= TRIGRAM_SAMPLE_ENTRIES ? (entries * storeSpan) / Math.max(Number(row.span ?? 0) + 1, 1) : entries;
    return { trigram: trigrams[Number(row.at)]!, at: Number(row.at), entries: sampled };
  });
}

/**
 * The FTS5 query for a query of three characters or more: ftsQuery, unless it has more than
 * LONG_QUERY_TRIGRAMS distinct trigrams; then its RARE_TRIGRAMS_ASKED rarest (ties in the query's order), or,
 * when one of them is in no name, that one alone (it finds nothing: no name holds the query). The ranks only
 * choose which trigrams are asked; every name found is tested, so a rank that is wrong (ids bunched where the
 * sample lies, a plant written since) costs time, never a row.
 */
export async function sqliteFtsQuery(folded: string): Promise<string> {
  const distinct = [...new Set(trigramsOf(folded))];
  if (distinct.length <= LONG_QUERY_TRIGRAMS) return ftsQuery(folded);
  const spread = distinct.length <= RANKED_TRIGRAMS_MAX ? distinct : Array.from({ length: RANKED_TRIGRAMS_MAX }, (_, at) => distinct[Math.floor((at * distinct.length) / RANKED_TRIGRAMS_MAX)]!);
  const ranked = (await trigramRarities(spread)).sort((a, b) => a.entries - b.entries || a.at - b.at);
  const asked = ranked[0]!.entries === 0 ? ranked.slice(0, 1) : ranked.slice(0, RARE_TRIGRAMS_ASKED);
  return asked.map(({ trigram }) => ftsPhrase(trigram)).join(' AND ');
}

/**
 * The most entries a query of one or two characters reads from the index's term list (one per place a
 * trigram that begins with the query stands in a name; for one character also one per name it ends) to
 * decide its plan: 1–3 ms. Names full of the character ("жжж…", 199 entries each) made 2,000 names cost
 * 400,000 entries, ~100 ms, for each of the plan, the rows and the count. The index plan is taken only when
 * deciding read all of them, so its rows and its count read fewer than this too.
 */
export const SHORT_QUERY_ENTRIES_BUDGET = 10_000;

/** A query of one or two characters: its entries in the index (see above), an id per entry, with repeats. */
function shortQueryEntries(folded: string): Prisma.Sql {
  const indexed = asIndexed(folded);
  const past = pastPrefix(indexed);
  const range = past === null ? Prisma.sql`term >= ${indexed}` : Prisma.sql`term >= ${indexed} AND term < ${past}`;
  const beginning = Prisma.sql`SELECT doc AS id FROM "PlantNameSearchTerms" WHERE ${range}`;
  if ([...folded].length >= SHORTEST_PREFIX_ON_SQLITE) return beginning;
  // One character: also the names it ends, from the index of last characters (its expression spelled as
  // the migration spells it; the column holds U+FFFE and U+FFFF as themselves). UNION ALL, not UNION: a
  // LIMIT then stops both early.
  // plant scope: ids of matching names only, whose rows are read through conditions() (sqliteIndexedPlants).
  const ending = Prisma.sql`SELECT l.id AS id FROM "Plant" l WHERE substr(l."nameFolded", -1) = ${folded}`;
  return Prisma.sql`${beginning} UNION ALL ${ending}`;
}

/**
 * The FTS5 table's matches, as a subquery of plant ids: every plant whose name holds the query, and maybe some
 * more (see asIndexed and ftsQuery: each name is tested after). `limit` stops it early: at the first `limit`
 * by id for three characters or more; for one or two characters at any `limit` of them (their terms' rows
 * come term by term, not by id), which is all a count up to a cap asks.
 */
export function ftsMatches(folded: string, limit?: number, match = ftsQuery(folded)): Prisma.Sql {
  if (!indexable(folded)) {
    const cut = limit === undefined ? Prisma.empty : Prisma.sql` LIMIT ${limit}`;
    return Prisma.sql`SELECT DISTINCT id FROM (${shortQueryEntries(folded)})${cut}`;
  }
  const cut = limit === undefined ? Prisma.empty : Prisma.sql` ORDER BY rowid LIMIT ${limit}`;
  return Prisma.sql`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ${match}${cut}`;
}

/**
 * Whether SQLite's index plan serves this query: a phrase of at most SQLITE_INDEXED_MATCHES_MAX matches in the
 * whole store (read from the FTS5 index alone, stopping at one more); one or two characters of at most as many
 * matches whose entries are fewer than SHORT_QUERY_ENTRIES_BUDGET (read up to it).
 */
async function sqliteIndexServes(folded: string, match: string): Promise<boolean> {
  // `match`: the FTS5 query asked for a query of three characters or more (unused below that).
  if (indexable(folded)) {
    const [row] = await db.$queryRaw<{ count: bigint | number }[]>`SELECT COUNT(*) AS count FROM (${ftsMatches(folded, SQLITE_INDEXED_MATCHES_MAX + 1, match)}) m`;
    return Number(row?.count ?? 0) <= SQLITE_INDEXED_MATCHES_MAX;
  }
  // The distinct matches stop at one more than the plan's cap (a common character: a few hundred entries);
  // only below it are the entries counted, up to the budget (CASE runs its subquery only then).
  const entries = shortQueryEntries(folded);
  const [row] = await db.$queryRaw<{ matches: bigint | number; entries: bigint | number | null }[]>`
    SELECT m.matches AS matches, CASE WHEN m.matches > ${SQLITE_INDEXED_MATCHES_MAX} THEN NULL
      ELSE (SELECT COUNT(*) FROM (SELECT 1 FROM (${entries}) LIMIT ${SHORT_QUERY_ENTRIES_BUDGET})) END AS entries
    FROM (SELECT COUNT(*) AS matches FROM (SELECT DISTINCT id FROM (SELECT id FROM (${entries}) LIMIT ${SHORT_QUERY_ENTRIES_BUDGET}) LIMIT ${SQLITE_INDEXED_MATCHES_MAX + 1})) m`;
  return row?.entries !== null && Number(row?.entries ?? 0) < SHORT_QUERY_ENTRIES_BUDGET && Number(row?.matches ?? 0) <= SQLITE_INDEXED_MATCHES_MAX;
}

/** SQLite's plan of a search (search.ts, planNameSearch) of a query folded to one character or more. */
export async function sqlitePlan(folded: string): Promise<NameSearch> {
  // A query holding the padding (none from the API, which refuses control characters) is left to the walk.
  if (folded.includes(PADDING_CHARACTER)) return { folded, plan: 'filter' };
  if (!indexable(folded)) return { folded, plan: (await sqliteIndexServes(folded, '')) ? 'index' : 'filter' };
  const phrase = ftsQuery(folded);
  const match = await sqliteFtsQuery(folded);
  if (match !== phrase && (await sqliteIndexServes(folded, match))) return { folded, plan: 'index', match };
  // The rarest trigrams find more than the cap, yet the query itself may match few: decided as before, by its
  // own phrase (the cost this does not bound: docs/performance.md, "What is not bounded"), and either plan then reads
  // the phrase's matches as before. Not the rarest trigrams' candidates for the filter plan: its count reads
  // the first PHRASE_COUNT_BUDGET of them, and fewer of those match, so its "at least" would say less.
  if (await sqliteIndexServes(folded, phrase)) return { folded, plan: 'index' };
  // A short query whose trigrams repeat ("5000000"): its distinct trigrams ("500" AND "000") are in many names
  // where the phrase itself may be in one (at 10 M the walk that followed took 1.1 s). A phrase of a few tokens
  // costs FTS5 a few positions per name, unlike the 198 tokens of "0"×200, which stay with the distinct ones.
  const exact = ftsPhrase(asIndexed(folded));
  if (exact !== phrase && trigramsOf(folded).length <= LONG_QUERY_TRIGRAMS && (await sqliteIndexServes(folded, exact))) return { folded, plan: 'index', match: exact };
  return { folded, plan: 'filter' };
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
  return plantsOfMatches(Prisma.sql`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ${ftsQuery(folded)}${bound} ORDER BY rowid ${order} LIMIT ${ID_ORDER_PROBE_MATCHES}`);
}

/**
 * SQLite's whole table of plants for the index plan: the matches first, then each one's row by its id, whose
 * name is tested (the index finds more than the query's matches for some queries: asIndexed, ftsQuery).
 */
export function sqliteIndexedPlants(folded: string, limit?: number, match = ftsQuery(folded)): Prisma.Sql {
  return plantsOfMatches(ftsMatches(folded, limit, match), nameContains(folded));
}

/** A table of plants `p` from a subquery of matching ids `m`: the matches first, then each one's row by its id. */
function plantsOfMatches(matches: Prisma.Sql, test: Prisma.Sql = Prisma.sql`1`): Prisma.Sql {
  // CROSS JOIN keeps the matches as the outer loop and INDEXED BY makes each plant a primary-key lookup:
  // without statistics SQLite would rather walk an index of the access rule ("ownerId" = ?) for every match.
  // plant scope: a FROM, whose WHERE its callers take from conditions.ts's conditions(), which start with the scope.
  return Prisma.sql`(${matches}) m CROSS JOIN "Plant" p INDEXED BY "sqlite_autoindex_Plant_1" ON p.id = m.id AND ${test}`;
}
