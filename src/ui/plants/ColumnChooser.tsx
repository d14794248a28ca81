'use client';

import { Columns3 } from 'lucide-react';
import { useEffect, useId, useRef, useState } from 'react';

import { COLUMN_LABELS, type OptionalColumn } from './columns';

/**
 * Which columns show, remembered by this browser (column-prefs.ts). A disclosure: a button that opens a
 * small panel of checkboxes; Escape or a click elsewhere closes it and the button takes the focus back.
 */
export function ColumnChooser({ available, hidden, onChange }: { available: readonly OptionalColumn[]; hidden: ReadonlySet<OptionalColumn>; onChange: (column: OptionalColumn, hidden: boolean) => void }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    return () => document.removeEventListener('pointerdown', onPointer);
  }, [open]);
  return (
    <div
      className="disclosure"
      ref={rootRef}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && open) {
          event.stopPropagation();
          setOpen(false);
          buttonRef.current?.focus();
        }
      }}
    >
      <button ref={buttonRef} type="button" className="button" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen((value) => !value)}>
        <Columns3 className="icon" aria-hidden="true" />
        <span className="collapse-label">Columns</span>
        <span className="sr-only"> shown in the table</span>
      </button>
      <fieldset id={panelId} className="disclosure__panel" hidden={!open}>
        <legend>Columns</legend>
        <label className="check check--fixed">
          <input type="checkbox" checked disabled />
          Name (always)
        </label>
        {available.map((column) => (
          <label key={column} className="check">
            <input type="checkbox" checked={!hidden.has(column)} onChange={(event) => onChange(column, !event.target.checked)} />
            {COLUMN_LABELS[column]}
          </label>
        ))}
      </fieldset>
    </div>
  );
}
