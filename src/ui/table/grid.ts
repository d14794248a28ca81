'use client';

import { type KeyboardEvent, type RefObject, useCallback, useLayoutEffect, useRef } from 'react';

/**
 * A table that moves like a grid (WAI-ARIA's grid pattern): one tab stop for the whole table (roving
 * tabindex), arrow keys between cells and rows, Home/End in a row, Ctrl+Home/End to the first and last
 * row, Page Up/Down by ten rows, Enter (or F2) on an editable cell to edit it. A cell's widget (a checkbox,
 * a button) takes the focus itself; other cells are focusable. Targets are the elements marked
 * `data-grid-target` inside rows marked `data-grid-row`, in document order. A render that takes the focused
 * target away (its row refreshed away, replaced) gives the focus to the same row, or the row now in its place,
 * instead of leaving it to <body>.
 */
export type GridOptions = {
  /** Enter or F2 on a target marked `data-grid-edit`: its row's key and the target's column. */
  onEdit?: (rowKey: string, column: string) => void;
};

const ROW = '[data-grid-row]';
const TARGET = '[data-grid-target]';

export function useGrid(tableRef: RefObject<HTMLTableElement | null>, options: GridOptions = {}) {
  const active = useRef<{ row: string | null; index: number }>({ row: null, index: 0 });
  /** The target that has the focus, and its row's place: a render that removes it hands the focus on from there. */
  const holder = useRef<{ element: HTMLElement; rowIndex: number } | null>(null);
  const optionsRef = useRef(options);
  useLayoutEffect(() => {
    optionsRef.current = options;
  });

  const rows = useCallback(() => [...(tableRef.current?.querySelectorAll<HTMLElement>(`tbody ${ROW}`) ?? [])], [tableRef]);
  const targetsOf = (row: Element) => [...row.querySelectorAll<HTMLElement>(TARGET)];

  /** Exactly one target is in the tab order: the active one, or the first of the first row. */
  const syncTabStops = useCallback(() => {
    const all = rows();
    if (all.length === 0) return;
    let row = all.find((each) => each.dataset.gridRow === active.current.row);
    if (!row) {
      row = all[0]!;
      active.current = { row: row.dataset.gridRow ?? null, index: 0 };
    }
    for (const target of tableRef.current?.querySelectorAll<HTMLElement>(`tbody ${TARGET}`) ?? []) target.tabIndex = -1;
    const targets = targetsOf(row);
    const target = targets[Math.min(active.current.index, targets.length - 1)];
    if (target) target.tabIndex = 0;
  }, [rows, tableRef]);

  // After every render: rows come and go with pages, edits and live changes.
  useLayoutEffect(() => syncTabStops());

  const focusAt = useCallback(
    (rowIndex: number, index: number) => {
      const all = rows();
      const row = all[Math.max(0, Math.min(rowIndex, all.length - 1))];
      if (!row) return;
      const targets = targetsOf(row);
      const target = targets[Math.max(0, Math.min(index, targets.length - 1))];
      if (!target) return;
      active.current = { row: row.dataset.gridRow ?? null, index: targets.indexOf(target) };
      syncTabStops();
      target.focus();
    },
    [rows, syncTabStops],
  );

  /** Puts the cursor back on a row (after an edit is saved or cancelled), on the given column or where it was. */
  const focusRow = useCallback(
    (rowKey: string, column?: string) => {
      const all = rows();
      const index = all.findIndex((row) => row.dataset.gridRow === rowKey);
      if (index < 0) return false;
      const targets = targetsOf(all[index]!);
      const byColumn = column ? targets.findIndex((target) => target.dataset.gridTarget === column) : -1;
      focusAt(index, byColumn >= 0 ? byColumn : active.current.index);
      return true;
    },
    [rows, focusAt],
  );

  // After every render, too: a render that removed the focused target hands the focus on from its place.
  useLayoutEffect(() => {
    const held = holder.current;
    if (!held || held.element.isConnected) return;
    holder.current = null;
    // Only when nothing else took the focus (an editor's field, a dialog): it fell to <body> with its element.
    if (document.activeElement && document.activeElement !== document.body) return;
    const row = active.current.row;
    if (row === null || !focusRow(row)) focusAt(held.rowIndex, active.current.index);
  });

  const onFocus = useCallback(
    (event: React.FocusEvent) => {
      const target = (event.target as HTMLElement).closest<HTMLElement>(TARGET);
      const row = target?.closest<HTMLElement>(ROW);
      if (!target || !row) return;
      active.current = { row: row.dataset.gridRow ?? null, index: targetsOf(row).indexOf(target) };
      holder.current = { element: target, rowIndex: rows().indexOf(row) };
    },
    [rows],
  );

  /** Focus moved on by the person (to another element, or a click on the page's background): nothing to give back. */
  const onBlur = useCallback((event: React.FocusEvent) => {
    if (event.relatedTarget) {
      holder.current = null;
      return;
    }
    // No next element: a click on the background, the window left, or the element removed (then the render's
    // layout effect above has already handed the focus on). Still in the document, it was the person's move.
    const element = event.target;
    setTimeout(() => {
      if (holder.current?.element === element && element.isConnected && document.activeElement !== element) holder.current = null;
    });
  }, []);

  const onKeyDown = useCallback(
    (event: KeyboardEvent) => {
      const element = event.target as HTMLElement;
      // Typing in an editor is typing: its arrow keys move the caret.
      if (element.matches('input:not([type="checkbox"]), select, textarea')) return;
      const target = element.closest<HTMLElement>(TARGET);
      const row = target?.closest<HTMLElement>(ROW);
      if (!target || !row) return;
      const all = rows();
      const rowIndex = all.indexOf(row);
      const index = targetsOf(row).indexOf(target);
      const move = (nextRow: number, nextIndex: number) => {
        event.preventDefault();
        focusAt(nextRow, nextIndex);
      };
      switch (event.key) {
        case 'ArrowDown':
          return move(rowIndex + 1, index);
        case 'ArrowUp':
          return move(rowIndex - 1, index);
        case 'ArrowRight':
          return move(rowIndex, index + 1);
        case 'ArrowLeft':
          return move(rowIndex, index - 1);
        case 'Home':
          return move(event.ctrlKey ? 0 : rowIndex, 0);
        case 'End':
          return move(event.ctrlKey ? all.length - 1 : rowIndex, event.ctrlKey ? index : Number.MAX_SAFE_INTEGER);
        case 'PageDown':
          return move(rowIndex + 10, index);
        case 'PageUp':
          return move(rowIndex - 10, index);
        case 'Enter':
        case 'F2':
          if (target.dataset.gridEdit !== undefined && row.dataset.gridRow) {
            event.preventDefault();
            optionsRef.current.onEdit?.(row.dataset.gridRow, target.dataset.gridTarget ?? '');
          }
          return;
        default:
      }
    },
    [rows, focusAt],
  );

  return { onKeyDown, onFocus, onBlur, focusRow };
}
