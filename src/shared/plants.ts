import { z } from 'zod';
import { BULK_MAX, NAME_MAX_LENGTH, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, QUERY_MAX_LENGTH, TAG_MAX_LENGTH } from './limits';

import { NO_CONTROL_CHARACTERS } from './control-characters';
import { unknownFields } from './messages';
import { foldForSearch } from './name-fold';
import { fromDecimalText, pageLimit } from './query-values';

/**
 * The plant shapes: the single source of truth for the router's validation, the OpenAPI document and
 * the admin page's form. Every message names its field, because both doors show it to a person as is.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const int64Doc = { type: 'integer', format: 'int64' } as const;

/**
 * An int64 as a JSON number. Integers arrive as bigint from both doors (superjson on tRPC, the lossless
 * JSON parser on REST), so a plain number here is a fraction or an exponent form.
 */
const int64 = (field: string) =>
  z
    .bigint({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be an integer`) })
    .min(INT64_MIN, { error: `${field} must be at least ${INT64_MIN}` })
    .max(INT64_MAX, { error: `${field} must be at most ${INT64_MAX}` })
    .meta({ override: int64Doc });

const codePoints = (text: string) => [...text].length;

/**
 * Characters that show nothing by themselves: white space, format controls (U+200B, U+2060, U+202E, …),
 * the other default-ignorable code points (U+180E, U+3164, U+FFA0 and the Hangul fillers, variation
 * selectors), the blank Braille pattern U+2800, which fonts draw as empty, combining marks (`\p{M}`:
 * U+0301 and the like only ever modify the character before them; alone they are a dotted circle or
 * nothing), and noncharacters (U+FFFE, U+FFFF, U+FDD0–U+FDEF, …: reserved for a program's own use, never
 * drawn). A name or tag of only these looks empty in every list; the contract asks for at least one visible
 * character. (With a visible character, "e" + U+0301 is "é": the marks are fine.)
 */
const INVISIBLE = /[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cf}\u2800\p{M}\p{Noncharacter_Code_Point}]/gu;

/** True when the text has at least one character that is not white space or invisible. */
export function hasVisibleCharacter(value: string): boolean {
  return value.replace(INVISIBLE, '') !== '';
}

/** Lengths count characters (code points), as JSON Schema's maxLength does, not UTF-16 units. */
const text = (field: string, maxLength: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` })
    // A code point is at most two UTF-16 units: a longer string is refused before anything spreads it.
    .max(maxLength * 2, { error: `${field} must be at most ${maxLength} characters`, abort: true })
    // A lone surrogate cannot be stored as UTF-8: SQLite would keep three other characters instead.
    .refine((value) => value.isWellFormed(), { error: `${field} must be well-formed Unicode (no lone surrogates)`, abort: true })
    .refine((value) => codePoints(value) <= maxLength, { error: `${field} must be at most ${maxLength} characters`, abort: true })
    .regex(NO_CONTROL_CHARACTERS, { error: `${field} must not contain control characters` })
    .refine(hasVisibleCharacter, {
      error: (issue) =>
        /\S/u.test(issue.input as string)
          ? `${field} must have at least one visible character, not only invisible ones such as zero-width spaces`
          : `${field} must not be only white space`,
    })
    .meta({ maxLength });

export const plantName = text('name', NAME_MAX_LENGTH).meta({ description: 'The name of the plant', example: 'Monstera deliciosa' });

export const plantTag = text('tag', TAG_MAX_LENGTH).meta({
  description: 'Tag that specifies the type',
  example: 'tropical',
});

export const plantId = int64('id').meta({ description: 'Identification number of the plant', example: 7 });

/**
 * The plant's fields a person writes, declared once, in the order answers give them (after `id`). A field is
 * required, or `.optional()`: then a plant may have none (the answer leaves it out, the column holds NULL) and
 * `null` in a patch removes it. Derived from this, so a new field is declared here and nowhere else in code:
 * the create, patch and answer schemas and their messages, the columns the server reads and writes (each
 * field is a column of the same name on Plant and PlantTombstone), the patch passed to the database, the CSV
 * export, the webhook event's data, and the admin page's form and table (they ask for the field's label).
 * docs/adding-a-field.md has the whole path.
 */
export const plantFields = { name: plantName, tag: plantTag.optional() };

export type PlantFieldName = keyof typeof plantFields;
export const PLANT_FIELD_NAMES = Object.keys(plantFields) as PlantFieldName[];
/** The fields a plant may lack (declared `.optional()`). */
export const OPTIONAL_PLANT_FIELDS = PLANT_FIELD_NAMES.filter((field) => plantFields[field] instanceof z.ZodOptional);
export const isOptionalPlantField = (field: PlantFieldName): boolean => OPTIONAL_PLANT_FIELDS.includes(field);

for (const field of PLANT_FIELD_NAMES) {
  // The names are written into SQL as column names (plants/rows.ts): only plain identifiers.
  if (!/^[a-z][A-Za-z0-9]*$/.test(field)) throw new Error(`plant field ${field}: a column name is letters and digits`);
}

/** `a`, `a and b`, `a, b and c`: a list of fields in a message. */
const listed = (words: readonly string[]) => (words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`);
const quoted = (field: string) => `\`${field}\``;

const optionalLeftOut = OPTIONAL_PLANT_FIELDS.length === 0 ? '' : ` ${listed(OPTIONAL_PLANT_FIELDS.map(quoted))} ${OPTIONAL_PLANT_FIELDS.length === 1 ? 'is' : 'are'} left out when the plant has none.`;

export const plantSchema = z.object({ id: plantId, ...plantFields }).meta({ id: 'Plant', description: `A plant.${optionalLeftOut}` });

const newPlantFields = listed(['id', ...PLANT_FIELD_NAMES.map((field) => (isOptionalPlantField(field) ? `an optional ${field}` : field))]);

export const newPlantSchema = z
  .strictObject(plantSchema.shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `${unknownFields(issue.keys)}: a new plant has only ${listed(['id', ...PLANT_FIELD_NAMES])}`
        : 'a new plant must be a JSON object',
  })
  .meta({ id: 'NewPlant', description: `The body of a create: ${newPlantFields}. No other field.` });

/** A field as a patch takes it: absent leaves it; `null` removes an optional one (RFC 7396: null in a merge patch deletes the member). */
type PatchField<Field> = Field extends z.ZodOptional<infer Inner extends z.ZodType> ? z.ZodOptional<z.ZodNullable<Inner>> : z.ZodOptional<Field & z.ZodType>;
const patchField = (field: z.ZodType) => (field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType).nullable().optional() : field.optional());

export const plantPatchFields = Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, patchField(plantFields[field])])) as {
  [Field in PlantFieldName]: PatchField<(typeof plantFields)[Field]>;
};

/** The fields' types only, none of their text rules: for what the server itself wrote (answers, rows). */
type ShapeOf<Field> =
  Field extends z.ZodOptional<infer Inner> ? z.ZodOptional<ShapeOf<Inner>> : Field extends z.ZodString ? z.ZodString : Field extends z.ZodBigInt ? z.ZodBigInt : never;
function shapeOf(field: z.ZodType): z.ZodType {
  if (field instanceof z.ZodOptional) return shapeOf(field.unwrap() as z.ZodType).optional();
  if (field instanceof z.ZodString) return z.string();
  if (field instanceof z.ZodBigInt) return z.bigint();
  throw new Error(`a plant field of type ${field.def.type} needs its shape in shared/plants.ts (shapeOf)`);
}
export const plantFieldShapes = Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, shapeOf(plantFields[field])])) as {
  [Field in PlantFieldName]: ShapeOf<(typeof plantFields)[Field]>;
};

/** The message of a patch with none of the fields: each field by name, and what null does. */
export const EMPTY_PATCH_MESSAGE = `the patch changes nothing: send ${PLANT_FIELD_NAMES.map(
  (field) => `"${field}"${isOptionalPlantField(field) ? ' (null removes it)' : ''}`,
).join(', ')}, or ${PLANT_FIELD_NAMES.length === 2 ? 'both' : 'several'}`;

export { foldForSearch };

/** A filter's text from the query string: the field rules without the visible-character rule, so a search for a space works. */
const filterText = (field: string, maxLength: number) =>
  z
    .string({ error: `${field} must be text` })
    .min(1, { error: `${field} must be 1 to ${maxLength} characters` })
    .max(maxLength * 2, { error: `${field} must be 1 to ${maxLength} characters`, abort: true })
    .refine((value) => value.isWellFormed(), { error: `${field} must be well-formed Unicode (no lone surrogates)`, abort: true })
    .refine((value) => codePoints(value) <= maxLength, { error: `${field} must be 1 to ${maxLength} characters`, abort: true })
    .regex(NO_CONTROL_CHARACTERS, { error: `${field} must not contain control characters` })
    .meta({ maxLength });

/** The filters the list (both doors) and the page's views share. */
export const plantFilters = {
  tag: filterText('tag', TAG_MAX_LENGTH).meta({ description: 'Only plants with exactly this tag.' }).optional(),
  q: filterText('q', QUERY_MAX_LENGTH)
    .meta({ description: 'Only plants whose name contains this text, ignoring case, accents and invisible characters (1 to 200 characters).' })
    .optional(),
  owner: filterText('owner', 64).meta({ description: "Admins only: only this user's plants (a user name)." }).optional(),
};

export type PlantFilters = { tag?: string; q?: string; owner?: string };

// Query parameters carry their documentation on the inner schema: trpc-to-openapi unwraps `.optional()`
// (and its metadata with it) before it describes a parameter.
export const listPlantsInput = z.object({
  limit: pageLimit(PAGE_LIMIT_MAX, PAGE_LIMIT_DEFAULT, 'The most plants to return.'),
  after: fromDecimalText(BigInt, int64('after'))
    .meta({ description: 'Return only plants whose id is greater than this (the last id of the previous page).', override: int64Doc })
    .optional(),
  ...plantFilters,
});

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

/** The body of PATCH /api/plants/{id} (documented as the PlantPatch component). */
export const plantPatchSchema = z
  .strictObject(plantPatchFields)
  .meta({
    id: 'PlantPatch',
    description: `A JSON merge patch (RFC 7396) of a plant: ${PLANT_FIELD_NAMES.map(quoted).join(', ')}, or ${PLANT_FIELD_NAMES.length === 2 ? 'both' : 'several'}${OPTIONAL_PLANT_FIELDS.map(
      (field) => `; \`"${field}": null\` removes the ${field}`,
    ).join('')}.`,
  });

export const plantIdParam = z.object({
  id: fromDecimalText(BigInt, int64('id')).meta({ description: 'The id of the plant to delete', override: int64Doc }),
});

const patchError = (issue: { code: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys' ? `${unknownFields(issue.keys!)}: a patch changes only ${listed(PLANT_FIELD_NAMES)}` : 'a patch must be a JSON object';

/** PATCH's input: the id from the path, and the merge patch's fields. No other field (the id cannot change). */
export const patchPlantInput = z.strictObject(
  {
    id: fromDecimalText(BigInt, int64('id')).meta({ description: 'The id of the plant to change', override: int64Doc }),
    ...plantPatchFields,
  },
  { error: patchError },
);

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

export type Plant = z.infer<typeof plantSchema>;

/**
 * The declared fields as their columns hold them (the Plant table, the live feed's log): an optional one is
 * NULL when the plant has none.
 */
export type StoredFields = { [Field in PlantFieldName]-?: undefined extends Plant[Field] ? Exclude<Plant[Field], undefined> | null : Plant[Field] };

/**
 * A plant as answered from its id and stored fields: id, then the declared fields in their order, each
 * optional one left out when NULL. The server's rows and the admin page's live marks both pass here.
 */
export function toPlant(row: { id: bigint } & StoredFields): Plant {
  const plant: Record<string, unknown> = { id: row.id };
  // An indexed loop: every row of every list passes here, and for…of over the names cost 4× the hand-written
  // object (~0.3 ms per 1,000 rows; this loop is within the noise of it).
  for (let index = 0; index < PLANT_FIELD_NAMES.length; index++) {
    const field = PLANT_FIELD_NAMES[index]!;
    const value = row[field];
    if (value !== null) plant[field] = value;
  }
  return plant as Plant;
}
export type NewPlant = z.infer<typeof newPlantSchema>;
export type ListPlantsInput = z.infer<typeof listPlantsInput>;
export type PlantRow = z.infer<typeof plantRowSchema>;
export type PlantPatch = z.infer<typeof plantPatchSchema>;
