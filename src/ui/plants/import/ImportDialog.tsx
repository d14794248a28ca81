'use client';

import { Square, Upload } from 'lucide-react';
import { useRef } from 'react';

import type { PlantImport } from '@/shared/plant-import';
import { trpc } from '@/ui/trpc';

import { Modal } from '../../ConfirmDialog';
import { asSentence } from '../../problems';
import { UserText } from '../../UserText';
import type { ImportStep } from './useImport';

const count = new Intl.NumberFormat();
/** Refused rows the preview lists; the rest are counted (the REST API lists them all: listPlantImportRows). */
const REFUSED_SHOWN = 50;

const plural = (value: number, one: string, many: string) => `${count.format(value)} ${value === 1 ? one : many}`;
const toApply = (plantImport: PlantImport) => plantImport.preview.create + plantImport.preview.change + plantImport.preview.unchanged;

/** What the preview plans, in a sentence: what applying would do now. */
function planned(plantImport: PlantImport): string {
  const { create, change, unchanged, refused } = plantImport.preview;
  const parts = [`${plural(create, 'plant', 'plants')} to create`, `${count.format(change)} to rename or re-tag`, `${count.format(unchanged)} already as the file says`];
  return `${plural(plantImport.rows, 'row', 'rows')} read: ${parts.join(', ')}; ${plural(refused, 'row', 'rows')} refused.`;
}

/** What the apply did, in a sentence. */
function applied(plantImport: PlantImport): string {
  const { rows, created, changed, unchanged, refused } = plantImport.applied;
  const stopped = plantImport.state === 'stopped' ? `Stopped after ${count.format(rows)} of ${count.format(toApply(plantImport))} rows: what was applied stays. ` : '';
  const refusedNow = refused > 0 ? `; ${plural(refused, 'row was', 'rows were')} refused as they were applied (the id was taken or the plant deleted meanwhile)` : '';
  return `${stopped}${plural(created, 'plant', 'plants')} created, ${count.format(changed)} renamed or re-tagged, ${count.format(unchanged)} already so${refusedNow}.`;
}

function RefusedRows({ id, refused }: { id: number; refused: number }) {
  const rows = trpc.plants.imports.rows.useQuery({ id, plan: 'refused', limit: REFUSED_SHOWN }, { staleTime: Infinity });
  if (refused === 0) return null;
  return (
    // Scrolls when long: a tab stop of its own, so a keyboard can scroll it (axe: scrollable-region-focusable).
    <div className="import-refused" role="region" aria-labelledby="import-refused-title" tabIndex={0}>
      <h3 className="import-refused__title" id="import-refused-title">
        Refused rows
      </h3>
      {rows.data ? (
        <table className="import-refused__table">
          <caption className="sr-only">Rows that will not be imported, and why</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {rows.data.map((row) => (
              <tr key={row.line}>
                <td className="import-refused__line">{count.format(row.line)}</td>
                <td className="import-refused__id">{row.id !== null ? row.id.toString() : <UserText clamp>{row.cells.id ?? ''}</UserText>}</td>
                <td>
                  <UserText clamp>{row.cells.name ?? ''}</UserText>
                </td>
                <td>
                  <UserText>{asSentence(row.message ?? '')}</UserText>{' '}
                  {row.error !== null ? <span className="muted">(error {row.error})</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">Loading the refused rows…</p>
      )}
      {refused > REFUSED_SHOWN ? <p className="muted">The first {REFUSED_SHOWN} of {count.format(refused)} refused rows.</p> : null}
    </div>
  );
}

function Progress({ value, max, label }: { value: number; max: number; label: string }) {
  return <progress className="import-progress" value={value} max={Math.max(1, max)} aria-label={label} />;
}

/**
 * The import dialog: choose a CSV file, watch it being read, read the preview (and why rows are refused),
 * import, watch the progress, Stop, go on. Every step's sentence is one polite status line. The import runs on
 * the server: Close leaves an apply going, and the dialog shows it again when opened.
 */
export function ImportDialog({
  step,
  onChoose,
  onApply,
  onStop,
  onReset,
  onClose,
}: {
  step: ImportStep;
  onChoose: (file: File) => void;
  onApply: () => void;
  onStop: () => void;
  onReset: () => void;
  onClose: () => void;
}) {
  const fileRef = useRef<HTMLInputElement>(null);
  const busy = step.kind === 'uploading' || step.kind === 'applying';

  let status = '';
  if (step.kind === 'uploading') status = `Reading ${step.file}: ${plural(step.rows, 'row', 'rows')} checked (part ${step.sent + 1} of ${Math.max(step.parts, 1)}).`;
  else if (step.kind === 'preview') status = planned(step.import);
  else if (step.kind === 'applying') status = `Importing: ${count.format(step.import.applied.rows)} of ${count.format(toApply(step.import))} rows applied.`;
  else if (step.kind === 'finished') status = applied(step.import);
  else if (step.kind === 'failed') status = `The import failed: ${step.message}.`;

  return (
    <Modal title="Import plants from a CSV file" onCancel={onClose} initialFocus={step.kind === 'choosing' ? fileRef : undefined} className="dialog--wide import-dialog">
      {step.kind === 'choosing' ? (
        <>
          <p>
            A file as the export writes it: a first line <code>id,name,tag</code> (an admin&apos;s export adds <code>owner</code> and <code>created</code>, which are left as
            they are). New ids become your plants; plants you can change are renamed or re-tagged. Nothing changes until you have seen what will.
          </p>
          <div className="field">
            <label htmlFor="import-file">CSV file</label>
            <input
              id="import-file"
              ref={fileRef}
              type="file"
              accept=".csv,text/csv"
              onChange={(event) => {
                const file = event.target.files?.[0];
                if (file) onChoose(file);
              }}
            />
          </div>
        </>
      ) : null}

      <p className="import-status" role="status" aria-live="polite">
        {status}
      </p>
      {step.kind === 'uploading' ? <Progress value={step.sent} max={step.parts} label="Reading the file" /> : null}
      {step.kind === 'applying' ? <Progress value={step.import.applied.rows} max={toApply(step.import)} label="Importing" /> : null}
      {step.kind === 'preview' || step.kind === 'finished' ? <RefusedRows id={step.import.id} refused={step.import.preview.refused} /> : null}
      {step.kind === 'failed' && step.import?.problem ? <p className="muted">{asSentence(step.import.problem)}</p> : null}

      <div className="dialog__actions">
        {step.kind === 'applying' ? (
          <>
            <button type="button" className="button" onClick={onClose} title="The import goes on; open this dialog again to see it">
              Close
            </button>
            <button type="button" className="button button--danger" onClick={onStop}>
              <Square className="icon" aria-hidden="true" />
              Stop
            </button>
          </>
        ) : (
          <>
            {step.kind === 'finished' || step.kind === 'failed' ? (
              <button type="button" className="button" onClick={onReset}>
                Import another file
              </button>
            ) : null}
            <button type="button" className="button" onClick={onClose} aria-disabled={busy || undefined}>
              {step.kind === 'finished' ? 'Close' : 'Cancel'}
            </button>
            {step.kind === 'preview' ? (
              <button type="button" className="button button--primary" onClick={() => toApply(step.import) > 0 && onApply()} aria-disabled={toApply(step.import) === 0 || undefined}>
                <Upload className="icon" aria-hidden="true" />
                Import {plural(toApply(step.import), 'row', 'rows')}
              </button>
            ) : null}
            {step.kind === 'finished' && step.import.state === 'stopped' ? (
              <button type="button" className="button button--primary" onClick={onApply}>
                <Upload className="icon" aria-hidden="true" />
                Go on
              </button>
            ) : null}
          </>
        )}
      </div>
    </Modal>
  );
}
