import { isOptionalPlantField, type Plant, PLANT_FIELD_NAMES, type PlantFieldName, type PlantPatch } from '@/shared/plants';
import { NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '@/shared/limits';

import type { ColumnSpec } from '../table/fit';

/**
 * What the admin page says of each declared plant field (shared/plants.ts, `plantFields`): the words and the
 * column are the page's own, so they live here; the form, the row editor and the table loop over the
 * declaration and read them. A Record over the declared names: a new field does not compile until it has
 * its words here. The name is the page's handle on a plant (the column that fills the width and carries the
 * folded ones, the dialogs' "“Fern” (id 7)"); every other field is a column of its own, built alike.
 */
export type PlantFieldUi = {
  /** The form's label, and the column's header ("(optional)" is added for an optional field). */
  label: string;
  /** The add form's hint under the label. */
  hint: string;
  /** The row editor's label (read by screen readers) and its placeholder when empty. */
  editLabel: string;
  placeholder?: string;
  /** What the table says when the plant has none (an optional field's cell title). */
  none?: string;
  /** How the table shows the value: as a chip (tags) or as text. */
  chip?: boolean;
  /** The table column's width and fold priority (table/fit.ts). */
  column: Omit<ColumnSpec, 'id'>;
};

export const PLANT_FIELD_UI: Record<PlantFieldName, PlantFieldUi> = {
  name: { label: 'Name', hint: `Up to ${NAME_MAX_LENGTH} characters.`, editLabel: 'Name', column: { width: 'fill', min: 10, priority: 100, always: true } },
  tag: {
    label: 'Tag',
    hint: `Up to ${TAG_MAX_LENGTH} characters, such as “tropical”. Leave empty for none.`,
    editLabel: 'Tag (empty for none)',
    placeholder: 'No tag',
    none: 'No tag',
    chip: true,
    column: { width: 8, priority: 3 },
  },
};

/** The fields besides the name: each a column of the table and an input of the row editor, built alike. */
export type OtherPlantField = Exclude<PlantFieldName, 'name'>;
export const OTHER_PLANT_FIELDS = PLANT_FIELD_NAMES.filter((field): field is OtherPlantField => field !== 'name');
export const isPlantField = (column: string): column is PlantFieldName => (PLANT_FIELD_NAMES as readonly string[]).includes(column);

/**
 * The merge patch that puts the declared fields back as they were in `plant` (an optional one it lacked: removed):
 * every field, or only `fields` (what a save wrote, so an undo leaves what others changed since alone).
 */
export function patchBackTo(plant: Plant, fields: readonly PlantFieldName[] = PLANT_FIELD_NAMES): PlantPatch {
  return Object.fromEntries(fields.map((field) => [field, plant[field] ?? (isOptionalPlantField(field) ? null : undefined)])) as PlantPatch;
}
