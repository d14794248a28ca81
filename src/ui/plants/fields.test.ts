import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { OPTIONAL_PLANT_FIELDS, PLANT_FIELD_NAMES, plantFields, type PlantFieldName } from '@/shared/plants';

import { EMPTY_PLANT_FORM, PLANT_FIELDS, validatePlantForm } from '../plant-form';
import { COLUMN_LABELS, OPTIONAL_COLUMNS, PLANT_COLUMNS, plantColumnSpecs } from './columns';
import { patchBackTo, PLANT_FIELD_UI } from './fields';

/** The admin page's side of the declared plant fields (shared/plants.ts): the form and the table carry each one. */

const exampleOf = (field: PlantFieldName) => {
  const declared: z.ZodType = plantFields[field];
  return z.globalRegistry.get(declared instanceof z.ZodOptional ? (declared.unwrap() as z.ZodType) : declared)?.example as string;
};

describe('the admin page and the declared plant fields', () => {
  it('has an input for each in the add form, and sends what was typed in each', () => {
    expect(PLANT_FIELDS).toEqual(['id', ...PLANT_FIELD_NAMES]);
    expect(Object.keys(EMPTY_PLANT_FORM)).toEqual(PLANT_FIELDS);
    const typed = { id: '7', ...Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, exampleOf(field)])) } as typeof EMPTY_PLANT_FORM;
    expect(validatePlantForm(typed)).toEqual({ ok: true, plant: { id: 7n, ...Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, exampleOf(field)])) } });
  });

  it('shows each as a column with a label and a width, and lets each but the name be hidden', () => {
    for (const field of PLANT_FIELD_NAMES) {
      expect(PLANT_COLUMNS).toContain(field);
      expect(COLUMN_LABELS[field]).toBe(PLANT_FIELD_UI[field].label);
      if (field !== 'name') expect(OPTIONAL_COLUMNS).toContain(field);
    }
    expect(plantColumnSpecs(PLANT_COLUMNS).map((spec) => spec.id)).toEqual(PLANT_COLUMNS);
  });

  it("undoes an edit of any of them: the patch back sets each, and removes an optional one the plant lacked", () => {
    const full = Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, exampleOf(field)]));
    expect(patchBackTo({ id: 1n, ...full } as never)).toEqual(full);
    const bare = Object.fromEntries(PLANT_FIELD_NAMES.filter((field) => !OPTIONAL_PLANT_FIELDS.includes(field)).map((field) => [field, exampleOf(field)]));
    expect(patchBackTo({ id: 1n, ...bare } as never)).toEqual({ ...bare, ...Object.fromEntries(OPTIONAL_PLANT_FIELDS.map((field) => [field, null])) });
  });
});
