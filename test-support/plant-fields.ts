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
