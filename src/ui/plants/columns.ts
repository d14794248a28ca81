import { INT64_MIN, type PlantFieldName } from '@/shared/plants';
import { type PlantSortKey } from '@/shared/plant-table';

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

/** A sort in words, ascending and descending: the sort menu's choices. */
export const SORT_WORDS: Record<PlantSortKey, { asc: string; desc: string }> = {
  id: { asc: 'Id, lowest first', desc: 'Id, highest first' },
  name: { asc: 'Name, A to Z', desc: 'Name, Z to A' },
  tag: { asc: 'Tag, A to Z (untagged last)', desc: 'Tag, Z to A (untagged first)' },
  owner: { asc: 'Owner, A to Z', desc: 'Owner, Z to A' },
  created: { asc: 'Created, oldest first', desc: 'Created, newest first' },
};

/** Width classes for the id column: one per number of characters, up to an int64 with its sign (20). */
/** The characters of the widest id: an int64 with its sign. */
const WIDEST_ID = INT64_MIN.toString().length;
export const ID_WIDTHS = [4, 7, 10, 13, 16, 20] as const;
export function idWidthFor(ids: readonly bigint[]): (typeof ID_WIDTHS)[number] {
  const longest = Math.max(2, ...ids.map((id) => id.toString().length));
  return ID_WIDTHS.find((width) => width >= longest) ?? 20;
}
/** rem per character of the ids' monospace face at its size (0.8125rem), plus the cell's padding. */
const idRem = (characters: number) => characters * 0.5 + 1.1;

/**
 * The columns' widths and priorities, for deciding which columns a width shows. The id column counts as wide as
 * the widest id there can be (an int64 with its sign), whatever the page holds: which columns show depends on
 * the width alone, not on the page's data (a page of short ids drawn its id column narrower gives the name the
 * rest, but never a column that another page of the same view would fold).
 */
export function plantColumnSpecs(columns: readonly PlantColumn[]): ColumnSpec[] {
  const all: Record<PlantColumn, ColumnSpec> = {
    select: { id: 'select', width: 2.25, priority: 100, always: true },
    actions: { id: 'actions', width: 4.5, priority: 100, always: true },
    id: { id: 'id', width: idRem(WIDEST_ID), priority: 4 },
    ...(Object.fromEntries(Object.entries(PLANT_FIELD_UI).map(([field, ui]) => [field, { id: field, ...ui.column }])) as Record<PlantFieldName, ColumnSpec>),
    owner: { id: 'owner', width: 7.5, priority: 2 },
    created: { id: 'created', width: 9.5, priority: 1 },
  };
  return columns.map((column) => all[column]);
}
