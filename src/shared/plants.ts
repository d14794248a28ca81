import { z } from 'zod';

/**
 * The plant shapes: the single source of truth for the router's validation, the OpenAPI document and
 * the admin page's form. Every message names its field, because both doors show it to a person as is.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const NAME_MAX_LENGTH = 200;
export const TAG_MAX_LENGTH = 100;
export const PAGE_LIMIT_MAX = 1000;
export const PAGE_LIMIT_DEFAULT = 100;

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

/**
 * trpc-to-openapi switches on `coerce` for every top-level bigint or number field of an input object, in
 * place and so for the tRPC door too; that would turn `"7"` into 7n and `true` into 1n. It leaves pipes
 * alone, so a body field that must keep its JSON type is wrapped in one.
 */
const keepJsonType = <T extends z.ZodType>(schema: T) => schema.transform((value) => value);

/**
 * URL path and query values are text: accept decimal digits there, and the typed value from the tRPC
 * door. The declared input type says so, instead of the `unknown` a preprocess step would give callers.
 */
const fromDecimalText = <T extends z.ZodType>(parse: (digits: string) => unknown, schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? parse(value) : value), schema) as unknown as z.ZodType<
    z.output<T>,
    z.input<T> | string
  >;

const codePoints = (text: string) => [...text].length;

/** Lengths count characters (code points), as JSON Schema's maxLength does, not UTF-16 units. */
const text = (field: string, maxLength: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` })
    // A lone surrogate cannot be stored as UTF-8: SQLite would keep three other characters instead.
    .refine((value) => value.isWellFormed(), { error: `${field} must be well-formed Unicode (no lone surrogates)`, abort: true })
    .refine((value) => codePoints(value) <= maxLength, { error: `${field} must be at most ${maxLength} characters` })
    .regex(/^\P{Cc}*$/u, { error: `${field} must not contain control characters` })
    .meta({ maxLength });

export const plantName = text('name', NAME_MAX_LENGTH)
  .regex(/\S/u, { error: 'name must not be only white space' })
  .meta({ description: 'The name of the plant', example: 'Monstera deliciosa' });

export const plantTag = text('tag', TAG_MAX_LENGTH).meta({
  description: 'Tag that specifies the type',
  example: 'tropical',
});

export const plantId = int64('id').meta({ description: 'Identification number of the plant', example: 7 });

export const plantSchema = z
  .object({ id: plantId, name: plantName, tag: plantTag.optional() })
  .meta({ id: 'Plant', description: 'A plant. `tag` is left out when the plant has none.' });

export const newPlantSchema = z
  .strictObject(
    { id: keepJsonType(plantId), name: plantName, tag: plantTag.optional() },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}: a new plant has only id, name and tag`
          : 'a new plant must be a JSON object',
    },
  )
  .meta({ id: 'NewPlant', description: 'The body of a create: id, name and an optional tag. No other field.' });

// Query parameters carry their documentation on the inner schema: trpc-to-openapi unwraps `.optional()`
// (and its metadata with it) before it describes a parameter.
export const listPlantsInput = z.object({
  limit: fromDecimalText(
    Number,
    z
      .int({ error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` })
      .min(1, { error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` })
      .max(PAGE_LIMIT_MAX, { error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` }),
  )
    .meta({
      description: 'The most plants to return.',
      override: { type: 'integer', format: 'int32', minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT },
    })
    .optional(),
  after: fromDecimalText(BigInt, int64('after'))
    .meta({ description: 'Return only plants whose id is greater than this (the last id of the previous page).', override: int64Doc })
    .optional(),
});

export const plantIdParam = z.object({
  id: fromDecimalText(BigInt, int64('id')).meta({ description: 'The id of the plant to delete', override: int64Doc }),
});

export type Plant = z.infer<typeof plantSchema>;
export type NewPlant = z.infer<typeof newPlantSchema>;
export type ListPlantsInput = z.infer<typeof listPlantsInput>;
