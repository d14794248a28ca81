import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { TAG_COUNTS_PER_UNIT, TAG_SUGGESTION_READ_MAX, TAG_SUGGESTIONS_MAX } from '@/shared/limits';

import { plantScope } from './scope';

export type TagCount = { tag: string; count: number };
type Input = { prefix?: string; owner?: string };

/**
 * Whose plants a view counts (its tags, its total: kept-counts.ts): one owner's (a member's own, or an admin's
 * owner filter), or every owner's (an admin's), or nobody's (an owner filter naming no user).
 */
export async function viewOf(actor: Actor, owner: string | undefined): Promise<{ ownerId: number } | 'everyOwner' | null> {
  const scope = plantScope(actor);
  if (owner === undefined) return scope.everyOwner ? 'everyOwner' : { ownerId: scope.ownerId };
  if (!scope.everyOwner) throw new AppError('ownerFilterForAdmins', 'owner is a filter for admins: as a member you see only your own plants', 'owner');
  const user = await db.user.findUnique({ where: { name: owner }, select: { id: true } });
  return user ? { ownerId: user.id } : null;
}

/**
 * What a suggestion reads, in counts (PlantTagCount rows), at most: none beyond the first few without a prefix (the
 * most used come first); with one, the owner's tags up to TAG_SUGGESTION_READ_MAX, which one bounded count finds
 * out; for every owner, each owner's count of each tag (summed per tag), which one count of the table finds out.
 * Charged before the suggestions are read: one unit, and one per TAG_COUNTS_PER_UNIT counts.
 */
export async function tagSuggestionCost(actor: Actor, input: Input): Promise<number> {
  const view = await viewOf(actor, input.owner);
  if (view === null) return 1;
  if (view === 'everyOwner') {
    const [{ counts }] = await db.$queryRaw<[{ counts: bigint | number }]>`SELECT COUNT(*) AS counts FROM "PlantTagCount"`;
    // Each count is read and summed; with a prefix up to TAG_SUGGESTION_READ_MAX sums come back to be compared.
    const compared = input.prefix === undefined ? 0 : Math.min(Number(counts), TAG_SUGGESTION_READ_MAX);
    return 1 + Math.ceil((Number(counts) + compared) / TAG_COUNTS_PER_UNIT);
  }
  if (input.prefix === undefined) return 1;
  const [{ counts }] = await db.$queryRaw<[{ counts: bigint | number }]>`
    SELECT COUNT(*) AS counts FROM (SELECT 1 FROM "PlantTagCount" WHERE "ownerId" = ${view.ownerId} LIMIT ${TAG_SUGGESTION_READ_MAX}) AS tags`;
  return 1 + Math.ceil(Number(counts) / TAG_COUNTS_PER_UNIT);
}

/** Counts read first: a suggestion whose matches are many stops there. */
const FIRST_READ = 500;

type CountRow = { tag: string; count: bigint | number };

/**
 * The tags that exist among the plants the caller sees (one owner's, for an admin's owner filter), most used
 * first, whose start matches `prefix` in any case: what the tag filter offers. The database keeps the counts per
 * owner and tag (PlantTagCount, by triggers), and reads them most used first; case folding is Unicode's
 * (JavaScript's), the same on both engines, so the prefix is compared here, on the most used first, then if need be
 * on the rest up to TAG_SUGGESTION_READ_MAX counts: a prefix only rarer tags match is offered what matches
 * among the most used ones. Ties at the last place go by the database's order, then are shown in the person's.
 */
export async function suggestTags(actor: Actor, input: Input): Promise<TagCount[]> {
  const view = await viewOf(actor, input.owner);
  if (view === null) return [];
  const prefix = input.prefix?.toLocaleLowerCase();
  const matches = (tag: string) => prefix === undefined || tag.toLocaleLowerCase().startsWith(prefix);
  const found: TagCount[] = [];
  const take = (rows: CountRow[]) => {
    for (const row of rows) if (found.length < TAG_SUGGESTIONS_MAX && matches(row.tag)) found.push({ tag: row.tag, count: Number(row.count) });
  };
  if (view === 'everyOwner') {
    // Every count is summed whatever the limit: one query, and without a prefix its first rows are the answer.
    take(await everyOwnersTags(prefix === undefined ? TAG_SUGGESTIONS_MAX : TAG_SUGGESTION_READ_MAX));
  } else {
    // The most used first: without a prefix they are the answer; where a prefix matches many, these hold it;
    // else the rest, up to the bound.
    const firstRead = prefix === undefined ? TAG_SUGGESTIONS_MAX : FIRST_READ;
    const first = await ownersTags(view.ownerId, 0, firstRead);
    take(first);
    if (found.length < TAG_SUGGESTIONS_MAX && first.length === firstRead) take(await ownersTags(view.ownerId, firstRead, TAG_SUGGESTION_READ_MAX - firstRead));
  }
  return found.sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag));
}

/** One owner's tags, most used first, from the `skip`th on: a walk of the (ownerId, plants DESC, tag) index. */
function ownersTags(ownerId: number, skip: number, limit: number): Promise<CountRow[]> {
  return db.$queryRaw<CountRow[]>`
    SELECT tag, plants AS count FROM "PlantTagCount" WHERE "ownerId" = ${ownerId} ORDER BY plants DESC, tag ASC LIMIT ${limit} OFFSET ${skip}`;
}

/** Every owner's tags summed per tag, most used first (an admin's view). */
function everyOwnersTags(limit: number): Promise<CountRow[]> {
  return db.$queryRaw<CountRow[]>`
    SELECT tag, SUM(plants) AS count FROM "PlantTagCount" GROUP BY tag ORDER BY SUM(plants) DESC, tag ASC LIMIT ${limit}`;
}
