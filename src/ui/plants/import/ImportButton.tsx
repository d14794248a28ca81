'use client';

import { FileUp } from 'lucide-react';
import { useState } from 'react';

import { ImportDialog } from './ImportDialog';
import { useImport } from './useImport';

/**
 * "Import CSV" beside the export, and its dialog. The import goes on while the dialog is closed (the button then
 * says how far it got, and opens the dialog again).
 */
export function ImportButton() {
  const { step, upload, apply, stop, reset } = useImport();
  const [open, setOpen] = useState(false);
  const working = step.kind === 'uploading' || step.kind === 'applying';
  const progress =
    step.kind === 'applying'
      ? `Importing ${Math.floor((100 * step.import.applied.rows) / Math.max(1, step.import.preview.create + step.import.preview.change + step.import.preview.unchanged))}%`
      : step.kind === 'uploading'
        ? 'Reading…'
        : null;
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)} title="Add or change plants from a CSV file, after a preview">
        {working ? <span className="spinner" aria-hidden="true" /> : <FileUp className="icon" aria-hidden="true" />}
        <span className="collapse-label">{progress ?? 'Import CSV'}</span>
        <span className="sr-only">{progress ? '' : ' of plants'}</span>
      </button>
      {open ? (
        <ImportDialog
          step={step}
          onChoose={(file) => void upload(file)}
          onApply={() => void apply()}
          onStop={() => void stop()}
          onReset={reset}
          onClose={() => {
            setOpen(false);
            // A file chosen but not imported is let go; an import reading or applying goes on.
            if (!working && step.kind !== 'finished') reset();
          }}
        />
      ) : null}
    </>
  );
}
