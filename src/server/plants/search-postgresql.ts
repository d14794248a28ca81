import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { db } from '@/server/db/client';

import { indexable } from './search';

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
 * How many plants match is the planner's own estimate of that same condition, read by EXPLAIN (nothing is read
 * from the table); a wrong guess costs time, never a wrong row.
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
  ctypeRead ??= db.$queryRaw<{ lc_ctype: string }[]>`SHOW lc_ctype`.then(([row]) => {
    if (row?.lc_ctype === 'C' || row?.lc_ctype === 'POSIX') wordCharacter = /[A-Za-z0-9]/;
  });
  return ctypeRead;
}

/**
 * How many trigrams pg_trgm takes from `LIKE '%q%'` (its generate_wildcard_trgm): each run of word characters,
 * padded with two spaces before it unless it starts the query (a wildcard precedes it) and one after it unless
 * it ends the query, gives its padded length minus two. None (punctuation only, "a!!", or letters the locale
 * does not count) and the trigram index can only be read whole: the planner scans the table instead, seconds
 * at 10 M plants, for any query of that kind.
 */
export function likeTrigramCount(folded: string): number {
  const points = [...folded];
  let count = 0;
  for (let index = 0; index < points.length; ) {
    if (!wordCharacter.test(points[index]!)) {
      index++;
      continue;
    }
    const start = index;
    while (index < points.length && wordCharacter.test(points[index]!)) index++;
    const padded = (start > 0 ? 2 : 0) + (index - start) + (index < points.length ? 1 : 0);
    count += Math.max(0, padded - 2);
  }
  return count;
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
  if (byTrigrams(folded)) return Prisma.sql`q."nameFolded" LIKE ${likePattern(folded)}`;
  return indexable(folded) ? Prisma.sql`${gramsCondition(folded)} AND strpos(q."nameFolded", ${folded}) > 0` : gramsCondition(folded);
}

/** Whether pg_trgm's index serves this query: three characters or more, of which it takes a trigram. */
const byTrigrams = (folded: string) => indexable(folded) && likeTrigramCount(folded) > 0;

/** The short substrings' index's condition on the plant rows `q`: every pair of the query (or the query itself) among the name's. */
const gramsCondition = (folded: string) => Prisma.sql`plant_name_grams(q."nameFolded") @> ARRAY[${Prisma.join(shortSubstringsOf(folded))}]::text[]`;

/**
 * The index plan's name test on PostgreSQL, on the plant rows `p`. One or two characters: the ids the index
 * finds, taken first (ARRAY(…) is computed once, before the rows are walked). Written as a plain condition on
 * `p`, the planner may choose to walk the rows in id order and compute each name's substrings until a page is
 * full — when it expects the matches to be many (its estimate for a pair it has no statistics of is 0.5 % of
 * the store), which at 10 M plants and none matching is 80 s of CPU.
 */
export function postgresIndexedName(folded: string): Prisma.Sql {
  if (byTrigrams(folded)) return Prisma.sql`p."nameFolded" LIKE ${likePattern(folded)}`;
  // plant scope: the ids of the names that match, of which the caller's conditions keep those in scope.
  return Prisma.sql`p.id = ANY (ARRAY(SELECT q.id FROM "Plant" q WHERE ${indexedCondition(folded)}))`;
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
export async function postgresExpectedMatches(folded: string): Promise<number> {
  await readWordCharacters();
  if (byTrigrams(folded)) return estimate(indexedCondition(folded));
  // By the short substrings' index: its estimate of the pairs alone, judged as for one pair.
  const expected = await estimate(gramsCondition(folded));
  return expected <= (await estimate(gramsCondition(NEVER_IN_A_NAME))) ? 0 : expected;
}
