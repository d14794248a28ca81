import './zod-browser';

import { isOptionalPlantField, newPlantSchema, type NewPlant, PLANT_FIELD_NAMES, type PlantFieldName } from '@/shared/plants';

import { asSentence } from './problems';

/** The add form's text of each field: the id and the plant's declared fields (shared/plants.ts). */
export type PlantFormValues = { id: string } & Record<PlantFieldName, string>;
export type PlantField = keyof PlantFormValues;
export type PlantFormErrors = Partial<Record<PlantField, string>>;

export const PLANT_FIELDS: readonly PlantField[] = ['id', ...PLANT_FIELD_NAMES];
export const EMPTY_PLANT_FORM = Object.fromEntries(PLANT_FIELDS.map((field) => [field, ''])) as PlantFormValues;

/**
 * The id field's text as an exact integer. Only an optional minus and decimal digits are read, and they
 * are read with BigInt, never Number, so 9223372036854775807 stays 9223372036854775807. The range is left
 * to the schema, so its messages are the ones the server would give.
 */
export function parseIdText(text: string): { ok: true; id: bigint } | { ok: false; message: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, message: 'id is required' };
  if (!/^-?\d+$/.test(trimmed)) return { ok: false, message: 'id must be an integer' };
  return { ok: true, id: BigInt(trimmed) };
}

/**
 * Checks the form with the router's own schema (`newPlantSchema`), so the page and both doors of the API
 * agree on every rule and word. An optional field left empty means "none". Returns the first message of each field.
 */
export function validatePlantForm(values: PlantFormValues): { ok: true; plant: NewPlant } | { ok: false; errors: PlantFormErrors } {
  const errors: PlantFormErrors = {};
  const id = parseIdText(values.id);
  if (!id.ok) errors.id = asSentence(id.message);
  const candidate = {
    // A stand-in that passes the id rules, so a bad id text does not hide the other fields' messages.
    id: id.ok ? id.id : 0n,
    ...Object.fromEntries(PLANT_FIELD_NAMES.filter((field) => !(isOptionalPlantField(field) && values[field] === '')).map((field) => [field, values[field]])),
  };
  const result = newPlantSchema.safeParse(candidate);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const field = issue.path[0];
      if (typeof field === 'string' && (PLANT_FIELDS as readonly string[]).includes(field) && !errors[field as PlantField]) {
        errors[field as PlantField] = asSentence(issue.message);
      }
    }
  }
  if (Object.keys(errors).length > 0 || !result.success) return { ok: false, errors };
  return { ok: true, plant: result.data };
}
