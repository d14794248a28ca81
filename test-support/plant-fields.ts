import { z } from 'zod';

import { type Plant, PLANT_FIELD_NAMES, plantFields, type PlantFieldName } from '@/shared/plants';

/**
 * Plants with every declared field set (shared/plants.ts, `plantFields`), for the tests that carry the fields
 * through a path whatever they are: a field declared and dropped on the way fails them.
 */

/** Each field's documented example (its `.meta({ example })`): a valid value of it. */
export function exampleOf(field: PlantFieldName): string {
  const declared: z.ZodType = plantFields[field];
  const example = z.globalRegistry.get(declared instanceof z.ZodOptional ? (declared.unwrap() as z.ZodType) : declared)?.example;
  if (typeof example !== 'string') throw new Error(`the plant field ${field} needs a text example in its .meta() (the document shows it; the tests write it)`);
  return example;
}

/** A plant with every declared field set to its example, `suffix` after each (another valid value). */
export const withEveryField = (id: bigint, suffix = ''): Plant => ({ id, ...Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, `${exampleOf(field)}${suffix}`])) }) as Plant;

/** A declared field as plain data: what the bench's floors and the fuzz oracle read of the declaration. */
export type PlantFieldFacts = { name: PlantFieldName; optional: boolean; maxLength: number };

/**
 * Each declared field's name, whether a plant may lack it and its most characters, in the declaration's order, for
 * what must not or need not take its zod schemas: the bench's bare floors (bench/lib/build.ts writes these into
 * their bundle) and the fuzz oracle (e2e/api/fuzz/), which judges with the contract's own text rule.
 */
export function plantFieldFacts(): PlantFieldFacts[] {
  return PLANT_FIELD_NAMES.map((field) => {
    const declared: z.ZodType = plantFields[field];
    const inner = declared instanceof z.ZodOptional ? (declared.unwrap() as z.ZodType) : declared;
    const maxLength = z.globalRegistry.get(inner)?.maxLength;
    if (!(inner instanceof z.ZodString) || typeof maxLength !== 'number') {
      throw new Error(`the plant field ${field} is not text with a maxLength: the bench's floors and the fuzz oracle need a rule for it (test-support/plant-fields.ts)`);
    }
    return { name: field, optional: declared instanceof z.ZodOptional, maxLength };
  });
}

/**
 * The CSV export's first line: `id`, each declared field in order, then `extra` (an admin's `owner` and `created`).
 */
export const exportHeader = (...extra: string[]): string => ['id', ...PLANT_FIELD_NAMES, ...extra].join(',');

/**
 * A plant's line of the CSV export: the id, then each declared field's cell in order, empty where `cells` has none.
 * `cells` are written as the file writes them (quoted, with the apostrophe before a formula character): what a test
 * checks is the escaping, the order of the columns follows the declaration.
 */
export const exportLine = (id: bigint | string, cells: Partial<Record<PlantFieldName, string>>): string =>
  [String(id), ...PLANT_FIELD_NAMES.map((field) => cells[field] ?? '')].join(',');

/** A plant's fields as the live feed carries a create or an update: every declared field, null where the plant has none. */
export const changedFields = (fields: Partial<Record<PlantFieldName, string | null>>): Record<PlantFieldName, string | null> =>
  Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, fields[field] ?? null])) as Record<PlantFieldName, string | null>;
