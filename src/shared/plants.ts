import { z } from 'zod';

import { NO_CONTROL_CHARACTERS } from './control-characters';
import { NAME_MAX_LENGTH, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, QUERY_MAX_LENGTH, TAG_MAX_LENGTH } from './limits';
import { listed, unknownFields } from './messages';
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
export const int64 = (field: string) =>
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
export const filterText = (field: string, maxLength: number) =>
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
export type PlantPatch = z.infer<typeof plantPatchSchema>;
