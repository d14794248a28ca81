import type { PlantFieldName } from '@/shared/plants';

import type { ColumnSpec } from '../table/fit';
import { OTHER_PLANT_FIELDS, PLANT_FIELD_UI } from './fields';

/**
 * The plants table's columns: which exist for whom, how wide each is, and which leaves first when the
 * window is narrow (the lowest priority; its value then folds into the name cell's second line). The name
 * always stays, with a minimum and everything that is left; ids and dates are as wide as their content on
 * one line.
 */
export type PlantColumn = 'select' | 'id' | PlantFieldName | 'owner' | 'created' | 'actions';
/** The columns in the table's order: the plant's declared fields (shared/plants.ts) after the id. */
export const PLANT_COLUMNS: readonly PlantColumn[] = ['select', 'id', 'name', ...OTHER_PLANT_FIELDS, 'owner', 'created', 'actions'];
/** The columns a person may hide (column chooser); the name, the checkboxes and the actions always show. */
export type OptionalColumn = Exclude<PlantColumn, 'select' | 'name' | 'actions'>;
export const OPTIONAL_COLUMNS: readonly OptionalColumn[] = ['id', ...OTHER_PLANT_FIELDS, 'owner', 'created'];
export const COLUMN_LABELS: Record<PlantColumn, string> = {
  select: 'Select',
  id: 'Id',
  ...(Object.fromEntries(Object.entries(PLANT_FIELD_UI).map(([field, ui]) => [field, ui.label])) as Record<PlantFieldName, string>),
  owner: 'Owner',
  created: 'Created',
  actions: 'Actions',
};

/** Width classes for the id column: one per number of characters, up to an int64 with its sign (20). */
export const ID_WIDTHS = [4, 7, 10, 13, 16, 20] as const;
export function idWidthFor(ids: readonly bigint[]): (typeof ID_WIDTHS)[number] {
  const longest = Math.max(2, ...ids.map((id) => id.toString().length));
  return ID_WIDTHS.find((width) => width >= longest) ?? 20;
}
/** rem per character of the ids' monospace face at its size (0.8125rem), plus the cell's padding. */
const idRem = (characters: number) => characters * 0.5 + 1.1;

export function plantColumnSpecs(columns: readonly PlantColumn[], idWidth: number): ColumnSpec[] {
  const all: Record<PlantColumn, ColumnSpec> = {
    select: { id: 'select', width: 2.25, priority: 100, always: true },
    actions: { id: 'actions', width: 4.5, priority: 100, always: true },
    id: { id: 'id', width: idRem(idWidth), priority: 4 },
    ...(Object.fromEntries(Object.entries(PLANT_FIELD_UI).map(([field, ui]) => [field, { id: field, ...ui.column }])) as Record<PlantFieldName, ColumnSpec>),
    owner: { id: 'owner', width: 7.5, priority: 2 },
    created: { id: 'created', width: 9.5, priority: 1 },
  };
  return columns.map((column) => all[column]);
}
