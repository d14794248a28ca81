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

/** The condition the GIN index of this query's length serves, on the plant rows `q`. */
function indexedCondition(folded: string): Prisma.Sql {
  return indexable(folded)
    ? Prisma.sql`q."nameFolded" LIKE ${likePattern(folded)}`
    : Prisma.sql`plant_name_grams(q."nameFolded") @> ARRAY[${folded}]::text[]`;
}

/**
 * The index plan's name test on PostgreSQL, on the plant rows `p`. One or two characters: the ids the index
 * finds, taken first (ARRAY(…) is computed once, before the rows are walked). Written as a plain condition on
 * `p`, the planner may choose to walk the rows in id order and compute each name's substrings until a page is
 * full — when it expects the matches to be many (its estimate for a pair it has no statistics of is 0.5 % of
 * the store), which at 10 M plants and none matching is 80 s of CPU.
 */
export function postgresIndexedName(folded: string): Prisma.Sql {
  if (indexable(folded)) return Prisma.sql`p."nameFolded" LIKE ${likePattern(folded)}`;
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
  const expected = await estimate(indexedCondition(folded));
  if (indexable(folded)) return expected;
  return expected <= (await estimate(indexedCondition(NEVER_IN_A_NAME))) ? 0 : expected;
}
