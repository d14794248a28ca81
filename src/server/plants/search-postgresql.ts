import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { db } from '@/server/db/client';

import { indexable, type NameSearch } from './name-search';

/**
 * The name search's PostgreSQL parts (the plans: search.ts). Two GIN indexes on the folded name answer "the
 * folded name contains q" exactly, for any q:
 *
 * - three characters or more: pg_trgm's index ("Plant_nameFolded_trgm_idx"), which serves `LIKE '%q%'` with
 *   `%`, `_` and `\` escaped;
 * - one or two characters, from which pg_trgm extracts no trigram (it would read its whole index): the index
 *   of every one- and two-character substring of each name ("Plant_nameFolded_grams_idx", migration
 *   *_plant_name_search_short_queries), `plant_name_grams("nameFolded") @> ARRAY[q]`.
 *
 * A long query of common trigrams asks pg_trgm's index for its rarest few only, by statistics ANALYZE keeps
 * (rarestTrigrams), and tests the whole query on the rows they leave. Whether the index serves a search is the
 * planner's estimate of its condition, read by EXPLAIN; when it says few, the matches' ids are read from the
 * index, no more than the plan's limit (postgresMatchesUpTo). A wrong guess costs time, never a wrong row.
 */

/** PostgreSQL's LIKE pattern for "contains this text": `\` (LIKE's default escape), `%` and `_` escaped, so each is itself. */
export const likePattern = (folded: string) => `%${folded.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * Which characters pg_trgm makes trigrams of: letters and digits as the database's LC_CTYPE classifies them,
 * which under the C locale are ASCII ones only (the database's, read once by the first plan).
 */
let wordCharacter: RegExp = /[\p{L}\p{N}]/u;
let ctypeRead: Promise<void> | undefined;
function readWordCharacters(): Promise<void> {
  // From pg_database, not `SHOW lc_ctype`: PostgreSQL 16 removed that setting, and the query failed every search.
  ctypeRead ??= db.$queryRaw<{ ctype: string }[]>`SELECT datctype AS ctype FROM pg_database WHERE datname = current_database()`.then(([row]) => {
    if (row?.ctype === 'C' || row?.ctype === 'POSIX') wordCharacter = /[A-Za-z0-9]/;
  });
  return ctypeRead;
}

/**
 * How many distinct trigrams pg_trgm takes from `LIKE '%q%'` (its generate_wildcard_trgm): each run of word characters,
 * padded with two spaces before it unless it starts the query (a wildcard precedes it) and one after it unless
 * it ends the query, gives its padded length minus two. None (punctuation only, "a!!", or letters the locale
 * does not count) and the trigram index can only be read whole: the planner scans the table instead, seconds
 * at 10 M plants, for any query of that kind.
 */
export function likeTrigramCount(folded: string): number {
  return likeTrigrams(folded).size;
}

/** The distinct trigrams of `LIKE '%q%'` (above; pg_trgm asks its index for each once), spelled with their padding. */
export function likeTrigrams(folded: string): Set<string> {
  const points = [...folded];
  const trigrams = new Set<string>();
  for (let index = 0; index < points.length; ) {
    if (!wordCharacter.test(points[index]!)) {
      index++;
      continue;
    }
    const start = index;
    while (index < points.length && wordCharacter.test(points[index]!)) index++;
    const padded = [...(start > 0 ? ['  '] : []), ...points.slice(start, index), ...(index < points.length ? [' '] : [])].join('');
    const characters = [...padded];
    for (let at = 0; at + 3 <= characters.length; at++) trigrams.add(characters.slice(at, at + 3).join(''));
  }
  return trigrams;
}

/** A name holding the query holds each of its character pairs (or, for one character, that character). */
function shortSubstringsOf(folded: string): string[] {
  const points = [...folded];
  if (points.length < 2) return points;
  return [...new Set(points.slice(1).map((point, index) => points[index]! + point))];
}

/**
 * The condition an index serves, on the plant rows `q`: pg_trgm's for a query it takes trigrams from; else
 * the short substrings' index, by the query's pairs (one or two characters: the query itself), with the
 * exact test after it when the pairs say less than "contains".
 */
function indexedCondition(folded: string): Prisma.Sql {
  if (byTrigrams(folded)) {
    const rarest = rarestTrigrams(folded);
    if (rarest === null) return Prisma.sql`q."nameFolded" LIKE ${likePattern(folded)}`;
    // Each its own condition, so each is its own key of the GIN scan (one list each), and the whole query
    // tested on the rows they leave.
    const keys = rarest.map((trigram) => Prisma.sql`q."nameFolded" LIKE ${likePattern(trigram)}`);
    return Prisma.sql`${Prisma.join(keys, ' AND ')} AND strpos(q."nameFolded", ${folded}) > 0`;
  }
  return indexable(folded) ? Prisma.sql`${gramsCondition(folded)} AND strpos(q."nameFolded", ${folded}) > 0` : gramsCondition(folded);
}

/** Whether pg_trgm's index serves this query: three characters or more, of which it takes a trigram. */
const byTrigrams = (folded: string) => indexable(folded) && likeTrigramCount(folded) > 0;

/** The short substrings' index's condition on the plant rows `q`: every pair of the query (or the query itself) among the name's. */
const gramsCondition = (folded: string) => Prisma.sql`plant_name_grams(q."nameFolded") @> ARRAY[${Prisma.join(shortSubstringsOf(folded))}]::text[]`;

/**
 * The index plan's name test on PostgreSQL, on the plant rows `p`. One or two characters, or a query asked of
 * the index by its rarest trigrams: the ids the index finds, taken first (ARRAY(…) is computed once, before the
 * rows are walked). Written as a plain condition on `p`, the planner may choose to walk the rows in id order
 * and test each name until a page is full — when it expects the matches to be many (its estimate for a pair it
 * has no statistics of is 0.5 % of the store; for one trigram such as "000", 1 %), which at 10 M plants and
 * one match took 80 s of CPU for a pair and 2.9 s for "000" (docs/performance.md, "Search at scale").
 */
export function postgresIndexedName({ folded, matches }: NameSearch): Prisma.Sql {
  // The matches read when the search was planned (postgresMatchesUpTo); the name tested again, as it may have
  // changed since. One text parameter: the statement is the same whatever their number.
  if (matches) return Prisma.sql`p.id = ANY (${`{${matches.join(',')}}`}::bigint[]) AND strpos(p."nameFolded", ${folded}) > 0`;
  // The whole query's LIKE, whose estimate the planner gets right (pg_trgm's trigrams of it, all asked).
  if (byTrigrams(folded) && rarestTrigrams(folded) === null) return Prisma.sql`p."nameFolded" LIKE ${likePattern(folded)}`;
  // plant scope: the ids of the names that match, of which the caller's conditions keep those in scope.
  return Prisma.sql`p.id = ANY (ARRAY(SELECT q.id FROM "Plant" q WHERE ${indexedCondition(folded)}))`;
}

/**
 * How common pg_trgm's trigrams are among the folded names, from the statistics object
 * "Plant_nameFolded_trigrams" (migration *_plant_name_trigram_statistics), which ANALYZE keeps: the most common
 * trigrams of its sample with their frequencies, and any other one rarer than the least listed.
 */
export type TrigramStatistics = { frequencies: ReadonlyMap<string, number>; leastListed: number; rows: number };

/** How old the statistics read may be: ANALYZE changes them seldom, and a stale figure costs time, never a row. */
const TRIGRAM_STATISTICS_MAX_AGE_MS = 60_000;
let trigramStatistics: TrigramStatistics | null = null;
let trigramStatisticsRead: { at: number; done: Promise<void> } | undefined;

type TrigramStatisticsRow = { trigrams: string[] | null; frequencies: number[] | null; rows: number | null };

function readTrigramStatistics(): Promise<void> {
  const now = Date.now();
  if (trigramStatisticsRead && now - trigramStatisticsRead.at < TRIGRAM_STATISTICS_MAX_AGE_MS) return trigramStatisticsRead.done;
  const done = db
    .$queryRaw<TrigramStatisticsRow[]>`SELECT s.most_common_elems::text::text[] AS trigrams, s.most_common_elem_freqs AS frequencies, c.reltuples::float8 AS rows
      FROM pg_stats_ext_exprs s JOIN pg_namespace n ON n.nspname = s.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
      WHERE s.statistics_name = 'Plant_nameFolded_trigrams' AND s.statistics_schemaname = current_schema()`
    .then(([row]) => {
      trigramStatistics = row ? trigramStatisticsOf(row) : null;
    })
    // Unreadable (a role that may not read the statistics): every trigram is asked of the index, as before.
    .catch(() => {
      trigramStatistics = null;
    });
  trigramStatisticsRead = { at: now, done };
  return done;
}

/** most_common_elem_freqs holds one frequency per listed trigram, then the least and the greatest of them and the null fraction. */
export function trigramStatisticsOf({ trigrams, frequencies, rows }: TrigramStatisticsRow): TrigramStatistics | null {
  if (!trigrams || !frequencies || trigrams.length === 0 || frequencies.length < trigrams.length + 2 || rows === null || rows < 0) return null;
  return { frequencies: new Map(trigrams.map((trigram, index) => [trigram, frequencies[index]!])), leastListed: frequencies[trigrams.length]!, rows };
}

/**
 * At most this many trigrams are asked of the index: GIN reads the list of every trigram asked, in full or
 * nearly (it steps through each list to every candidate of the others), so each asked costs a list, and
 * each left out costs only its test on the rows the others leave.
 */
export const ASKED_TRIGRAMS_MAX = 3;
/** A trigram in more names than this is not worth its list (docs/performance.md, "Search at scale"). */
export const ASKED_TRIGRAM_FREQUENCY_MAX = 0.02;
/** Rows the asked trigrams may leave (each tested, ~1 µs) before another trigram is worth asking. */
export const CANDIDATES_ENOUGH = 1_000;
/** Past this many expected candidates, ask for every trigram (the rows would cost more than the lists). */
export const CANDIDATES_MAX = 20_000;

/** Letters and digits pg_trgm keeps as they are in any locale, and which the statistics spell as themselves. */
const PLAIN_WORD_CHARACTER = /^[a-z0-9]$/;

/**
 * The few trigrams of the query to ask the index for, rarest first by the statistics; null to ask for every
 * trigram (no statistics, or no fewer to ask). Only substrings of three ASCII letters or digits: `LIKE '%abc%'`
 * gives pg_trgm exactly the trigram "abc", which every name holding the query holds, and the statistics
 * spell it as it is (pg_trgm stores a trigram of other characters as a hash of its bytes).
 */
export function rarestTrigrams(folded: string, statistics: TrigramStatistics | null = trigramStatistics): string[] | null {
  if (!statistics) return null;
  const points = [...folded];
  const plain = new Set<string>();
  for (let index = 0; index + 3 <= points.length; index++) {
    const trigram = points.slice(index, index + 3);
    if (trigram.every((point) => PLAIN_WORD_CHARACTER.test(point))) plain.add(trigram.join(''));
  }
  if (plain.size === 0) return null;
  // A trigram the statistics do not list is rarer than every listed one.
  const frequency = (trigram: string) => statistics.frequencies.get(trigram) ?? statistics.leastListed / 2;
  const byRarity = [...plain].sort((a, b) => frequency(a) - frequency(b));
  const asked: string[] = [];
  let candidates = statistics.rows;
  for (const trigram of byRarity) {
    if (asked.length >= ASKED_TRIGRAMS_MAX || candidates <= CANDIDATES_ENOUGH || frequency(trigram) > ASKED_TRIGRAM_FREQUENCY_MAX) break;
    asked.push(trigram);
    // As if independent: a guess, which costs time when wrong, never a row.
    candidates *= frequency(trigram);
  }
  // None rare enough, or too many rows left to test: every trigram. All the query's is the query ("5000000").
  if (asked.length === 0 || candidates > CANDIDATES_MAX || asked.length >= likeTrigrams(folded).size) return null;
  return asked;
}

type ExplainRow = { 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] };

/** The rows PostgreSQL's planner expects this condition to keep in the whole store (its statistics; nothing is read). */
async function estimate(condition: Prisma.Sql): Promise<number> {
  // plant scope: EXPLAIN reads no row; the estimate is of the whole store and only picks a plan.
  const [row] = await db.$queryRaw<ExplainRow[]>`EXPLAIN (FORMAT JSON) SELECT 1 FROM "Plant" q WHERE ${condition}`;
  return row?.['QUERY PLAN'][0].Plan['Plan Rows'] ?? Number.POSITIVE_INFINITY;
}

/**
 * No name holds a control character (the API refuses them; shared/control-characters.ts), so the statistics
 * never list this one: its estimate is what the planner says of any character pair it has no figure for.
 */
const NEVER_IN_A_NAME = '\u0001';

/**
 * How many plants of the whole store the planner expects to match. For three characters or more, pg_trgm's
 * estimate of LIKE. For one or two, the statistics of the substrings' index list the most common of them
 * with their frequencies (ANALYZE; "vy" is in one name in 6 of the bench's), and say of every other one the
 * same thing, min(0.5 %, half the least listed frequency) — 50,000 plants at 10 M, far above the index plan's
 * limit even for a pair in no name. So a pair whose estimate is no more than that of a pair no name holds is
 * one the statistics did not find common: few, and read from the index.
 */
async function expectedMatches(folded: string): Promise<number> {
  if (byTrigrams(folded)) return estimate(Prisma.sql`q."nameFolded" LIKE ${likePattern(folded)}`);
  // By the short substrings' index: its estimate of the pairs alone, judged as for one pair.
  const expected = await estimate(gramsCondition(folded));
  return expected <= (await estimate(gramsCondition(NEVER_IN_A_NAME))) ? 0 : expected;
}

/**
 * The ids of every plant of the whole store whose name matches, read from the index, or null when they are
 * more than `limit` (the walk's plan). The planner's estimate first: null without reading when it expects
 * more. The estimate alone can be far off (100,000 plants added with a pair no statistics know yet: the index
 * plan read and sorted all their ids, 125 ms a statement at 400,000 plants), so the ids are read up to
 * `limit` + 1 and no further (GIN still reads its lists of candidates whole: that is how it answers). The rows
 * and the count then take these ids, and read the index no more. The matches are planned for all rows
 * (MATERIALIZED): under a LIMIT the planner may rather scan the table until it finds enough, which for one
 * match is all of it.
 */
export async function postgresMatchesUpTo(folded: string, limit: number): Promise<bigint[] | null> {
  await Promise.all([readWordCharacters(), readTrigramStatistics()]);
  if ((await expectedMatches(folded)) > limit) return null;
  // plant scope: the whole store's matches, for the plan; the rows are then read through conditions().
  const rows = await db.$queryRaw<{ id: bigint }[]>`WITH m AS MATERIALIZED (SELECT q.id FROM "Plant" q WHERE ${indexedCondition(folded)})
    SELECT id FROM m LIMIT ${limit + 1}`;
  return rows.length > limit ? null : rows.map((row) => BigInt(row.id));
}

/**
 * PostgreSQL's indexedMatchesMax() (search.ts): deciding reads the planner's estimate, then no more than this
 * many ids plus one.
 */
export const POSTGRESQL_INDEXED_MATCHES_MAX = 10_000;

/**
 * PostgreSQL's plan of a search (search.ts, planNameSearch) of a query folded to one character or more: every
 * query is served, one or two characters by the index of short substrings.
 */
export async function postgresPlan(folded: string): Promise<NameSearch> {
  const matches = await postgresMatchesUpTo(folded, POSTGRESQL_INDEXED_MATCHES_MAX);
  return matches === null ? { folded, plan: 'filter' } : { folded, plan: 'index', matches };
}
