'use client';

import { type ColumnDef, getCoreRowModel, useReactTable, type VisibilityState } from '@tanstack/react-table';
import { ArrowDown, ArrowUp, ArrowUpDown, Pencil, Trash2 } from 'lucide-react';
import { useLayoutEffect, useMemo, useRef } from 'react';

import { type PlantFieldName } from '@/shared/plants';
import { type PlantRow, type PlantSort, PLANT_SORT_KEYS, type PlantSortKey } from '@/shared/plant-table';

import { useColumnFit } from '../table/fit';
import { useGrid } from '../table/grid';
import { UserText } from '../UserText';
import { When } from '../When';
import { COLUMN_LABELS, idWidthFor, PLANT_COLUMNS, type PlantColumn, plantColumnSpecs, SORT_WORDS } from './columns';
import { EditRow, type EditOutcome } from './EditRow';
import { isPlantField, OTHER_PLANT_FIELDS, PLANT_FIELD_UI } from './fields';
import { type LiveMark, MARK_LABEL } from './useLiveMarks';

export type Editing = { id: bigint; column: PlantFieldName };

export type SelectionView = {
  isSelected: (id: bigint) => boolean;
  toggle: (row: PlantRow) => void;
  /** The header checkbox: every row of this page selected, some, or none. */
  page: 'all' | 'some' | 'none';
  togglePage: () => void;
};

type Props = {
  rows: PlantRow[];
  /** The columns this person sees (their role, their column choice); the window's width may fold some. */
  columns: readonly PlantColumn[];
  sort: PlantSort;
  onSort: (sort: PlantSort) => void;
  /** The orders this person can sort by (their role's columns, whether shown or not). */
  sortKeys: readonly PlantSortKey[];
  selection: SelectionView;
  editing: Editing | null;
  onEdit: (id: bigint, column: PlantFieldName) => void;
  onEditDone: (outcome: EditOutcome) => void;
  onEditDirty: (dirty: boolean) => void;
  onSaving: (id: bigint) => void;
  onDelete: (row: PlantRow) => void;
  marks: ReadonlyMap<string, LiveMark>;
  caption: string;
  busy: boolean;
  /** Set when an edit ends: after the next render the cursor goes back to that row's cell. */
  restoreFocus: React.RefObject<{ row: string; column: string } | null>;
};

/** The columns the table sorts by: those named as a sort key (the server's orders, shared/plants.ts). */
const SORTABLE: Partial<Record<PlantColumn, PlantSortKey>> = Object.fromEntries(
  PLANT_COLUMNS.filter((column): column is PlantSortKey => (PLANT_SORT_KEYS as readonly string[]).includes(column)).map((key) => [key, key]),
);

function SortHeader({ column, sort, onSort }: { column: PlantColumn; sort: PlantSort; onSort: (sort: PlantSort) => void }) {
  const key = SORTABLE[column]!;
  const active = sort.key === key;
  const next: PlantSort = { key, dir: active && sort.dir === 'asc' ? 'desc' : 'asc' };
  const Icon = !active ? ArrowUpDown : sort.dir === 'asc' ? ArrowUp : ArrowDown;
  return (
    <button
      type="button"
      className="sort-button"
      onClick={() => onSort(next)}
      title={`Sort by ${COLUMN_LABELS[column].toLowerCase()}, ${next.dir === 'asc' ? 'ascending' : 'descending'}`}
    >
      {COLUMN_LABELS[column]}
      <Icon className={active ? 'icon' : 'icon icon--faint'} aria-hidden="true" />
    </button>
  );
}

/**
 * Every sort this person has, as a menu: shown whenever one of them has no header to click (a narrow window
 * folded its column, or the person hid it), so every sort is in reach at every width and the active one is
 * always in view (in its header's arrow, or here).
 */
function SortMenu({ sortKeys, sort, onSort }: { sortKeys: readonly PlantSortKey[]; sort: PlantSort; onSort: (sort: PlantSort) => void }) {
  const keys = sortKeys.includes(sort.key) ? sortKeys : [...sortKeys, sort.key];
  return (
    <div className="sort-menu field--inline">
      <label htmlFor="plants-sort">Sort</label>
      <select
        id="plants-sort"
        value={`${sort.key} ${sort.dir}`}
        onChange={(event) => {
          const [key, dir] = event.target.value.split(' ') as [PlantSortKey, PlantSort['dir']];
          onSort({ key, dir });
        }}
      >
        {keys.flatMap((key) =>
          (['asc', 'desc'] as const).map((dir) => (
            <option key={`${key} ${dir}`} value={`${key} ${dir}`}>
              {SORT_WORDS[key][dir]}
            </option>
          )),
        )}
      </select>
    </div>
  );
}

/**
 * A header's or cell's content, called as a function. TanStack's flexRender renders a function as a component,
 * and the definitions below are new functions whenever what they read changes (a live mark, the selection): a
 * new component type, so React would unmount every cell and header and mount them again, and a cell or sort
 * button that had the keyboard focus would hand it to <body>. Called, they are plain elements that React updates in place.
 */
function content<Context>(definition: ((context: Context) => React.ReactNode) | string | undefined, context: Context): React.ReactNode {
  return typeof definition === 'function' ? definition(context) : (definition ?? null);
}

/**
 * What a folded column still says, on the name cell's second line: the column the rows are sorted by first (so
 * the order's values are in view however narrow the window), then the others in the table's order.
 */
function Folded({ row, folded, sortedBy }: { row: PlantRow; folded: PlantColumn[]; sortedBy: PlantColumn }) {
  if (folded.length === 0) return null;
  const part = (column: PlantColumn) => {
    if (column === 'id') return <span key={column} className="folded__id">{row.id.toString()}</span>;
    if (column === 'owner') return row.owner ? <span key={column}><UserText>{row.owner}</UserText></span> : null;
    if (column === 'created') return row.createdAt ? <When key={column} date={row.createdAt} /> : null;
    if (!isPlantField(column) || column === 'name' || row[column] === undefined) return null;
    return (
      <span key={column} className={PLANT_FIELD_UI[column].chip ? 'tag-chip tag-chip--small' : undefined}>
        <UserText>{row[column]}</UserText>
      </span>
    );
  };
  const order = folded.includes(sortedBy) ? [sortedBy, ...folded.filter((column) => column !== sortedBy)] : folded;
  return <span className="folded">{order.map(part)}</span>;
}

/**
 * A declared field's column is as wide as its words say (fields.ts: the same width table/fit.ts counts with), set
 * on the DOM element: the page's Content-Security-Policy allows no style attribute, and a stylesheet rule would be
 * a second copy of the width. The name's column fills the rest.
 */
function fieldColumnWidth(column: PlantColumn) {
  if (!isPlantField(column)) return undefined;
  const { width } = PLANT_FIELD_UI[column].column;
  return width === 'fill' ? undefined : (col: HTMLTableColElement | null) => col?.style.setProperty('width', `${width}rem`);
}

/**
 * The plants table: sortable headers, a checkbox per row (selection lives above, across pages), the row
 * actions, in-place editing, and the marks of the live feed. Columns fit the width (table/fit.ts); the
 * table moves like a grid (table/grid.ts). Compact: one line per row where the width allows.
 */
export function PlantsTable(props: Props) {
  const { rows, columns, sort, onSort, selection, editing, marks } = props;
  const tableRef = useRef<HTMLTableElement>(null);
  const idWidth = idWidthFor(rows.map((row) => row.id));
  const [fit, frameRef] = useColumnFit(plantColumnSpecs(columns));
  const shown = columns.filter((column) => fit.shown.has(column));
  const folded = columns.filter((column) => !fit.shown.has(column));
  const headed = new Set(shown.map((column) => SORTABLE[column]));
  const needsMenu = props.sortKeys.some((key) => !headed.has(key)) || !headed.has(sort.key);
  const grid = useGrid(tableRef, { onEdit: (key, column) => props.onEdit(BigInt(key), isPlantField(column) ? column : 'name') });
  const { restoreFocus } = props;
  useLayoutEffect(() => {
    const target = restoreFocus.current;
    if (!target || editing) return;
    if (grid.focusRow(target.row, target.column)) restoreFocus.current = null;
  });

  const definitions = useMemo<ColumnDef<PlantRow>[]>(
    () => [
      {
        id: 'select',
        header: () => (
          <input
            type="checkbox"
            aria-label="Select every plant on this page"
            checked={selection.page === 'all'}
            ref={(element) => {
              if (element) element.indeterminate = selection.page === 'some';
            }}
            onChange={selection.togglePage}
          />
        ),
        cell: ({ row }) => (
          <input
            type="checkbox"
            data-grid-target="select"
            aria-label={`Select plant ${row.original.name} (id ${row.original.id})`}
            checked={selection.isSelected(row.original.id)}
            disabled={marks.get(row.original.id.toString())?.kind === 'deleted'}
            onChange={() => selection.toggle(row.original)}
          />
        ),
      },
      {
        id: 'id',
        header: () => <SortHeader column="id" sort={sort} onSort={onSort} />,
        cell: ({ row }) => (
          <span data-grid-target="id" title={row.original.id.toString()}>
            {row.original.id.toString()}
          </span>
        ),
      },
      {
        id: 'name',
        header: () => <SortHeader column="name" sort={sort} onSort={onSort} />,
        cell: ({ row }) => {
          const mark = marks.get(row.original.id.toString());
          return (
            <span className="name-cell" data-grid-target="name" data-grid-edit="" title={row.original.name}>
              <UserText className="one-line">{row.original.name}</UserText>
              {mark ? <span className={`live-mark live-mark--${mark.kind}`}>{MARK_LABEL[mark.kind]}</span> : null}
              <Folded row={row.original} folded={folded} sortedBy={sort.key} />
            </span>
          );
        },
      },
      ...OTHER_PLANT_FIELDS.map(
        (field): ColumnDef<PlantRow> => ({
          id: field,
          header: () => (SORTABLE[field] ? <SortHeader column={field} sort={sort} onSort={onSort} /> : COLUMN_LABELS[field]),
          cell: ({ row }) => {
            const value = row.original[field];
            return (
              <span data-grid-target={field} data-grid-edit="" title={value ?? PLANT_FIELD_UI[field].none}>
                {value === undefined ? (
                  <span className="muted">—</span>
                ) : (
                  <span className={PLANT_FIELD_UI[field].chip ? 'tag-chip' : undefined}>
                    <UserText className="one-line">{value}</UserText>
                  </span>
                )}
              </span>
            );
          },
        }),
      ),
      {
        id: 'owner',
        header: () => <SortHeader column="owner" sort={sort} onSort={onSort} />,
        cell: ({ row }) => (
          <span data-grid-target="owner" title={row.original.owner}>
            <UserText className="one-line">{row.original.owner ?? ''}</UserText>
          </span>
        ),
      },
      {
        id: 'created',
        header: () => <SortHeader column="created" sort={sort} onSort={onSort} />,
        cell: ({ row }) => <span data-grid-target="created">{row.original.createdAt ? <When date={row.original.createdAt} /> : null}</span>,
      },
      {
        id: 'actions',
        header: () => <span className="sr-only">Actions</span>,
        cell: ({ row }) => {
          const plant = row.original;
          const what = `${plant.name} (id ${plant.id.toString()})`;
          const gone = marks.get(plant.id.toString())?.kind === 'deleted';
          return (
            <div className="row-actions">
              <button
                type="button"
                data-grid-target="edit"
                className="button button--small button--quiet icon-button"
                aria-label={`Edit plant ${what}`}
                title="Rename or re-tag (Enter)"
                aria-disabled={gone || undefined}
                onClick={() => !gone && props.onEdit(plant.id, 'name')}
              >
                <Pencil className="icon" aria-hidden="true" />
              </button>
              <button
                type="button"
                data-grid-target="delete"
                id={`delete-plant-${plant.id.toString()}`}
                className="button button--small button--danger-quiet icon-button"
                aria-label={`Delete plant ${what}`}
                title="Delete"
                aria-disabled={gone || undefined}
                onClick={() => !gone && props.onDelete(plant)}
              >
                <Trash2 className="icon" aria-hidden="true" />
              </button>
            </div>
          );
        },
      },
    ],
    // The cells read the selection, marks and fold through these; the table is cheap to re-describe.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [selection, sort, onSort, marks, folded.join(), props.onEdit, props.onDelete],
  );

  const visibility: VisibilityState = Object.fromEntries(PLANT_COLUMNS.map((column) => [column, shown.includes(column)]));
  // TanStack Table hands out functions whose results change without new identities; the React Compiler
  // therefore leaves this component alone, which is what this line acknowledges.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({
    data: rows,
    columns: definitions,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (row) => row.id.toString(),
    state: { columnVisibility: visibility },
  });

  const ariaSort = (column: PlantColumn) => (SORTABLE[column] === sort.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined);

  return (
    <div className="table-wrap" ref={frameRef}>
      {needsMenu ? <SortMenu sortKeys={props.sortKeys} sort={sort} onSort={onSort} /> : null}
      <table
        ref={tableRef}
        className="table table--compact plants-table"
        role="grid"
        aria-busy={props.busy}
        aria-labelledby="plants-caption"
        data-fit-width={fit.width}
        data-columns={shown.join(' ')}
        onKeyDown={grid.onKeyDown}
        onFocus={grid.onFocus}
        onBlur={grid.onBlur}
      >
        <caption id="plants-caption" className="sr-only">
          {props.caption}
        </caption>
        <colgroup>
          {shown.map((column) => (
            <col key={column} className={column === 'id' ? `col-id col-id--${idWidth}` : `col-${column}`} ref={fieldColumnWidth(column)} />
          ))}
        </colgroup>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => (
                <th key={header.id} scope="col" className={`th-${header.column.id}`} aria-sort={ariaSort(header.column.id as PlantColumn)}>
                  {content(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => {
            const mark = marks.get(row.id);
            if (editing && editing.id === row.original.id) {
              return (
                <EditRow
                  key={row.id}
                  plant={row.original}
                  mark={mark?.kind ?? null}
                  columns={shown}
                  focusColumn={editing.column}
                  onDone={props.onEditDone}
                  onDirtyChange={props.onEditDirty}
                  onSaving={props.onSaving}
                />
              );
            }
            return (
              <tr
                key={row.id}
                data-plant-id={row.id}
                data-grid-row={row.id}
                aria-selected={selection.isSelected(row.original.id)}
                className={mark ? `row--marked row--${mark.kind}` : undefined}
              >
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id} className={cell.column.id === 'select' ? 'cell-select' : cell.column.id === 'actions' ? 'cell-actions' : cell.column.id}>
                    {content(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
