'use client';

import { useCallback, useMemo, useState } from 'react';

import type { PlantFilters } from '@/shared/plants';
import type { BulkSelection, PlantRow } from '@/shared/plant-table';

/**
 * What is ticked, across pages: some plants (by id, with their rows for the confirmation), or every plant
 * that matched the filters when "select all" was chosen, minus the ones unticked since. A new search or
 * filter starts over (the view that was selected is gone).
 */
export type Selected =
  | { kind: 'ids'; rows: ReadonlyMap<string, PlantRow> }
  | { kind: 'matching'; filters: PlantFilters; asOf: Date; total: number; totalExact: boolean; except: ReadonlyMap<string, PlantRow> };

const NONE: Selected = { kind: 'ids', rows: new Map() };

export function selectedCount(selected: Selected): number {
  return selected.kind === 'ids' ? selected.rows.size : Math.max(0, selected.total - selected.except.size);
}

/** Whether selectedCount is exact: a "select all" of a view whose count stopped at the cap is "at least". */
export const selectedCountExact = (selected: Selected) => selected.kind === 'ids' || selected.totalExact;

/** The selection as the bulk procedures take it (ids in calls of at most BULK_MAX are cut by the runner). */
export function asBulkSelection(selected: Selected): BulkSelection {
  if (selected.kind === 'ids') return { kind: 'ids', ids: [...selected.rows.values()].map((row) => row.id) };
  return { kind: 'matching', filters: selected.filters, asOf: selected.asOf, except: [...selected.except.values()].map((row) => row.id) };
}

export function useSelection(filtersKey: string) {
  const [state, setState] = useState<{ key: string; selected: Selected }>({ key: filtersKey, selected: NONE });
  const selected = state.key === filtersKey ? state.selected : NONE;
  const set = useCallback((next: Selected) => setState({ key: filtersKey, selected: next }), [filtersKey]);

  const isSelected = useCallback((id: bigint) => (selected.kind === 'ids' ? selected.rows.has(id.toString()) : !selected.except.has(id.toString())), [selected]);

  const toggle = useCallback(
    (row: PlantRow) => {
      const key = row.id.toString();
      if (selected.kind === 'ids') {
        const rows = new Map(selected.rows);
        if (rows.has(key)) rows.delete(key);
        else rows.set(key, row);
        set({ kind: 'ids', rows });
      } else {
        const except = new Map(selected.except);
        if (except.has(key)) except.delete(key);
        else except.set(key, row);
        set({ ...selected, except });
      }
    },
    [selected, set],
  );

  const setPage = useCallback(
    (rows: readonly PlantRow[], on: boolean) => {
      if (selected.kind === 'ids') {
        const next = new Map(selected.rows);
        for (const row of rows) {
          if (on) next.set(row.id.toString(), row);
          else next.delete(row.id.toString());
        }
        set({ kind: 'ids', rows: next });
      } else {
        const except = new Map(selected.except);
        for (const row of rows) {
          if (on) except.delete(row.id.toString());
          else except.set(row.id.toString(), row);
        }
        set({ ...selected, except });
      }
    },
    [selected, set],
  );

  const selectAllMatching = useCallback(
    (filters: PlantFilters, asOf: Date, total: number, totalExact: boolean) => set({ kind: 'matching', filters, asOf, total, totalExact, except: new Map() }),
    [set],
  );
  const clear = useCallback(() => set(NONE), [set]);

  return useMemo(
    () => ({ selected, count: selectedCount(selected), countExact: selectedCountExact(selected), isSelected, toggle, setPage, selectAllMatching, clear }),
    [selected, isSelected, toggle, setPage, selectAllMatching, clear],
  );
}
