import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { TAG_SUGGESTIONS_MAX } from '@/shared/plants';

import { conditions, whereOf } from './query';

export type TagCount = { tag: string; count: number };

/**
 * The tags that exist among the plants the caller sees (one owner's, for an admin's owner filter), most used
 * first, whose start matches `prefix` in any case: what the tag filter offers. Case folding is Unicode's
 * (JavaScript's), the same on both engines, so the database is asked for the tags and their counts, and the
 * prefix is compared here; the (tag, id) and (ownerId, tag, id) indexes serve the grouping.
 */
export async function suggestTags(actor: Actor, input: { prefix?: string; owner?: string }): Promise<TagCount[]> {
  const where = [...conditions(actor, input.owner === undefined ? {} : { owner: input.owner }), Prisma.sql`p.tag IS NOT NULL`];
  const rows = await db.$queryRaw<{ tag: string; count: bigint | number }[]>`
    SELECT p.tag AS tag, COUNT(*) AS count FROM "Plant" p ${whereOf(where)} GROUP BY p.tag ORDER BY count DESC LIMIT 20000`;
  const prefix = input.prefix?.toLocaleLowerCase();
  const matching = prefix === undefined ? rows : rows.filter((row) => row.tag.toLocaleLowerCase().startsWith(prefix));
  // Ties in the person's order (the engines' collations differ).
  return matching
    .map((row) => ({ tag: row.tag, count: Number(row.count) }))
    .sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag))
    .slice(0, TAG_SUGGESTIONS_MAX);
}
