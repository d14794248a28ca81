import { z } from 'zod';

import { BULK_MAX, NAME_MAX_LENGTH, TAG_MAX_LENGTH } from './limits';
import { filterText, int64, plantFieldShapes, plantFilters, plantTag } from './plants';

/**
 * The admin page's own contract (tRPC only, beside the REST contract in plants.ts): its table's pages, sorts and
 * walks, its bulk changes and their undo, the tag suggestions, the live feed's input, and the export of a view.
 */

/** The admin page's sizes of a page. */
export const PAGE_SIZES = [10, 25, 50, 100] as const;

/** The rows of the last page of `total` (known exactly): what is left over after whole pages, or a whole page. */
export const lastPageRows = (total: number, size: number): number => total % size || size;

/**
 * What the admin page's table sorts by, both ways; ties (and `id` itself) go by id, so every order is total
 * and pages by key: (sort key, id). Names sort by their folded form (any case together); plants without a
 * tag come after every tag (before them, descending); owners by user name.
 */
export const PLANT_SORT_KEYS = ['id', 'name', 'tag', 'owner', 'created'] as const;
export type PlantSortKey = (typeof PLANT_SORT_KEYS)[number];
export const plantSort = z.strictObject({
  key: z.enum(PLANT_SORT_KEYS, { error: `sort must be one of ${PLANT_SORT_KEYS.join(', ')}` }),
  dir: z.enum(['asc', 'desc'], { error: 'the sort direction is asc or desc' }),
});
export type PlantSort = z.infer<typeof plantSort>;
export const DEFAULT_SORT: PlantSort = { key: 'id', dir: 'asc' };

/**
 * One page of the admin page's table (tRPC only): keyset paging like the REST list, in both directions,
 * with the total and the position, so the page can say "26–50 of 186" and jump to the last page.
 */
/**
 * The most UTF-16 units one code point of a name folds to: U+FDFA, a ligature of 18 characters (the fold table,
 * name-fold-table.ts; name-fold.test.ts holds this against it). Not read from the table: the page's bundle has none.
 */
const NAME_FOLD_MAX_UNITS_PER_CODE_POINT = 18;

/**
 * A row's place in a sort's order as the server held it (walkStopSchema's `key`): a folded name, a tag (null:
 * untagged), an owner's name, or a creation time. Longer than any name folds to is refused unread.
 */
export const WALK_KEY_MAX_LENGTH = NAME_FOLD_MAX_UNITS_PER_CODE_POINT * NAME_MAX_LENGTH;
const walkKey = z.union([z.string().max(WALK_KEY_MAX_LENGTH), z.date(), z.null()]);
export type WalkKey = z.infer<typeof walkKey>;

/** Whether `key` is a key of `sort`'s order: text for names, tags and owners (null only for an untagged plant), a time for creation. */
export function walkKeyFits(sort: PlantSortKey, key: WalkKey): boolean {
  if (sort === 'created') return key instanceof Date && !Number.isNaN(key.getTime());
  if (sort === 'tag') return key === null || typeof key === 'string';
  return sort !== 'id' && typeof key === 'string';
}

export const plantPageInput = z
  .strictObject({
    size: z.literal(PAGE_SIZES, { error: `size must be one of ${PAGE_SIZES.join(', ')}` }),
    /**
     * Where the page starts: after an id (next), before an id (previous), the last page, or (none) the first.
     * `key`, for a request that goes on from where a walk stopped (walkStopSchema): the stop row's place as the
     * server held it, so the walk goes on from there even once that row is renamed or deleted; without it the
     * place is read from the row.
     */
    cursor: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('after'), id: int64('cursor id'), key: walkKey.optional() }),
        z.strictObject({ kind: z.literal('before'), id: int64('cursor id'), key: walkKey.optional() }),
        z.strictObject({ kind: z.literal('last') }),
      ])
      .optional(),
    sort: plantSort.optional(),
    /**
     * false: rows only, for a request that goes on from where a page's walk stopped (walkStopSchema), whose
     * counts are the first answer's: no total or offset is counted (both come back as "at least", from the rows).
     */
    counts: z.boolean().optional(),
    ...plantFilters,
  })
  // A member gains nothing from a forged key (every walk starts from the access rule); one of the wrong type
  // would only fail in the database.
  .refine((input) => input.cursor?.kind === 'last' || input.cursor?.key === undefined || walkKeyFits((input.sort ?? DEFAULT_SORT).key, input.cursor.key), {
    message: "the cursor's key does not fit the sort: text for name, tag and owner (or null for an untagged plant), a time for created, none for id",
    path: ['cursor', 'key'],
  });

export type PlantPageInput = z.infer<typeof plantPageInput>;

/** A row of the admin page: the plant, and for admins whose it is and when it was added. */
export const plantRowSchema = z.object({
  id: z.bigint(),
  ...plantFieldShapes,
  owner: z.string().optional(),
  createdAt: z.date().optional(),
});

/**
 * Where a page's walk stopped (docs/admin-page.md, "At scale"): a name search of many matches, in any
 * order, tests each name in that order, and one request walks at most SEARCH_WALK_BUDGET rows
 * (shared/limits.ts). When its page was not full by then, the page holds what the walk found (maybe nothing)
 * and this says where it stopped: the next request goes on from the row `id` (a cursor `after` it when the
 * walk went forwards, `before` it when it went backwards: a previous or last page). `reached` is that row's
 * sort key as text (a folded name, a tag, an owner, an ISO time, in id order the id; null for an untagged plant), to say how far
 * the search got. Matches past that row are not known yet: `hasNext` (forwards) says only that more may follow.
 */
export const walkStopSchema = z.object({
  direction: z.enum(['forwards', 'backwards']),
  id: z.bigint(),
  /** That row's place as the server held it: the request that goes on sends it back (the cursor's `key`); null and not sent in id order, whose place is the id. */
  key: walkKey,
  reached: z.string().nullable(),
});
export type WalkStop = z.infer<typeof walkStopSchema>;

/** One page of the admin table (plants.page's answer; the tRPC door checks every answer against it). */
export const plantPageOutput = z.object({
  rows: z.array(plantRowSchema),
  /** Plants that match the filters, on every page: exactly when `totalExact`, else at least this many ("10,000+"). */
  total: z.number().int().nonnegative(),
  totalExact: z.boolean(),
  /** How many matching plants come before the first row (0 on the first page): exactly when `offsetExact`, else at least this many. */
  offset: z.number().int().nonnegative(),
  offsetExact: z.boolean(),
  /** Whether matching plants come (or, after a walk that stopped, may come) after the last row. */
  hasNext: z.boolean(),
  /** The page that was served: a page whose cursor row is gone, or that ran empty, falls back to the first or last. */
  cursor: plantPageInput.shape.cursor,
  /** When the page was read: "select all matching" means the plants that matched then (see bulkSelection). */
  asOf: z.date(),
  /** Set when the walk of a name search stopped at its budget before the page was full (walkStopSchema). */
  walkStopped: walkStopSchema.nullable(),
});
export type PlantPage = z.infer<typeof plantPageOutput>;

const idList = z
  .array(int64('id'), { error: 'ids must be a list of plant ids' })
  .min(1, { error: 'ids must hold at least one id' })
  .max(BULK_MAX, { error: `ids may hold at most ${BULK_MAX} ids at once` });

/**
 * Which plants a bulk change is about: a list of ids (what was ticked), or every plant that matched the
 * filters when "select all" was chosen (`asOf`, the page's answer time: plants added since are left out),
 * except the ones unticked since. The second is worked through in calls of at most BULK_MAX plants, by id
 * (`after`), so no call costs more than a list of ids does (a search of many matches walks at most the walk
 * budget of rows a call, and answers `nextAfter` where it stopped: plants/bulk.ts).
 */
export const bulkSelection = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('ids'), ids: idList }),
  z.strictObject({
    kind: z.literal('matching'),
    filters: z.strictObject(plantFilters),
    asOf: z.date({ error: 'asOf must be a time' }),
    except: z.array(int64('id')).max(BULK_MAX, { error: `except may hold at most ${BULK_MAX} ids` }).optional(),
    after: int64('after').optional(),
  }),
]);
export type BulkSelection = z.infer<typeof bulkSelection>;

export const deletePlantsInput = z.strictObject({ selection: bulkSelection, keepForUndo: z.boolean().optional() });
export const retagPlantsInput = z.strictObject({
  selection: bulkSelection,
  tag: plantTag.nullable(),
  /** Re-tags only the plants whose tag is still this one (null: still untagged): the undo of a re-tag. */
  onlyFrom: plantTag.nullable().optional(),
});
export const restorePlantsInput = z.strictObject({ ids: idList });

/** The tag filter's suggestions: tags that exist (in what the caller sees), by a case-insensitive prefix. */
export const tagSuggestionsInput = z.strictObject({
  prefix: filterText('prefix', TAG_MAX_LENGTH).optional(),
  owner: plantFilters.owner,
});

/**
 * The live feed: `lastEventId` (tRPC's, from the SSE stream) resumes after a dropped connection. An event's id is
 * `c` and 22 base64url characters (opaque: server/plants/live/event-ids.ts); a number of up to 10 digits is an
 * id of the form before, which the feed answers with a resync. Anything else is refused here, before it reaches
 * the database.
 */
export const plantChangesInput = z
  .strictObject({
    lastEventId: z
      .string()
      .regex(/^(?:c[A-Za-z0-9_-]{22}|\d{1,10})$/, { error: 'lastEventId is the id of the last event the feed sent (c and 22 letters, digits, - or _)' })
      .nullish(),
  })
  .optional();

/** CSV export of the table's view (both doors): the filters and the sort, every matching plant. */
export const exportPlantsInput = z.object({ ...plantFilters, sort: plantSort.optional() });

export type PlantRow = z.infer<typeof plantRowSchema>;
