import type { ColumnSpec } from '../table/fit';

/**
 * The plants table's columns: which exist for whom, how wide each is, and which leaves first when the
 * window is narrow (the lowest priority; its value then folds into the name cell's second line). The name
 * always stays, with a minimum and everything that is left; ids and dates are as wide as their content on
 * one line.
 */
export type PlantColumn = 'select' | 'id' | 'name' | 'tag' | 'owner' | 'created' | 'actions';
/** The columns a person may hide (column chooser); the name, the checkboxes and the actions always show. */
export const OPTIONAL_COLUMNS = ['id', 'tag', 'owner', 'created'] as const;
export type OptionalColumn = (typeof OPTIONAL_COLUMNS)[number];
export const COLUMN_LABELS: Record<PlantColumn, string> = { select: 'Select', id: 'Id', name: 'Name', tag: 'Tag', owner: 'Owner', created: 'Created', actions: 'Actions' };

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
    name: { id: 'name', width: 'fill', min: 10, priority: 100, always: true },
    actions: { id: 'actions', width: 4.5, priority: 100, always: true },
    id: { id: 'id', width: idRem(idWidth), priority: 4 },
    tag: { id: 'tag', width: 8, priority: 3 },
    owner: { id: 'owner', width: 7.5, priority: 2 },
    created: { id: 'created', width: 9.5, priority: 1 },
  };
  return columns.map((column) => all[column]);
}
