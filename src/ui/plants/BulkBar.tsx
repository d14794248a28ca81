'use client';

import { CheckCheck, OctagonX, Tags, Trash2, X } from 'lucide-react';

import type { BulkProgress } from './useBulk';

import { countText } from './counts';

const count = new Intl.NumberFormat();

/**
 * What is selected and what can be done with it. It sticks to the bottom of the window while anything is
 * selected, so on a phone it stays in reach however far the list scrolls; "Select all N matching" takes the
 * selection past this page.
 */
export function BulkBar(props: {
  selected: number;
  /** Of a "select all matching": how many matched, of which `selected` are still ticked. */
  matching: number | null;
  /** Whether `matching` (and so `selected`) is exact, or at least that many ("10,000+"). */
  matchingExact: boolean;
  pageAllSelected: boolean;
  total: number;
  totalExact: boolean;
  progress: BulkProgress | null;
  /** Stops a change under way after the call in flight: what was done stays done (and can be undone). */
  onStop: () => void;
  onSelectAll: () => void;
  onDelete: () => void;
  onRetag: () => void;
  onClear: () => void;
}) {
  const { selected, matching, matchingExact, pageAllSelected, total, progress } = props;
  const allMatching = matching !== null;
  if (selected === 0 && !progress) return null;
  return (
    <div className="bulkbar" role="region" aria-label="Selected plants">
      <p aria-live="polite">
        {progress
          ? `${progress.stopping ? 'Stopping…' : 'Working…'} ${count.format(progress.done)} of ${countText(progress.of, progress.ofExact)}`
          : matching !== null
            ? `${countText(selected, matchingExact)} ${selected === 1 && matchingExact ? 'plant' : 'plants'} selected: all ${countText(matching, matchingExact)} matching${matching > selected ? ` but ${count.format(matching - selected)}` : ''}`
            : selected === 1
              ? '1 plant selected'
              : `${count.format(selected)} plants selected`}
      </p>
      {!progress && !allMatching && pageAllSelected && (total > selected || !props.totalExact) ? (
        <button type="button" className="button button--small" onClick={props.onSelectAll}>
          <CheckCheck className="icon" aria-hidden="true" />
          Select all {countText(total, props.totalExact)} matching
        </button>
      ) : null}
      {progress ? (
        <progress className="bulkbar__progress" max={progress.of} value={progress.done} aria-label="Done so far">
          {count.format(progress.done)}
        </progress>
      ) : null}
      <div className="bulkbar__actions">
        {progress ? (
          <button type="button" className="button button--small button--danger-quiet button--outlined" onClick={props.onStop} aria-disabled={progress.stopping || undefined}>
            <OctagonX className="icon" aria-hidden="true" />
            Stop
          </button>
        ) : null}
        <button type="button" className="button button--small" onClick={props.onRetag} aria-disabled={Boolean(progress) || undefined}>
          <Tags className="icon" aria-hidden="true" />
          Re-tag
        </button>
        <button type="button" className="button button--small button--danger-quiet button--outlined" onClick={props.onDelete} aria-disabled={Boolean(progress) || undefined}>
          <Trash2 className="icon" aria-hidden="true" />
          Delete selected
        </button>
        <button type="button" className="button button--small button--quiet" onClick={props.onClear} aria-disabled={Boolean(progress) || undefined}>
          <X className="icon" aria-hidden="true" />
          Clear selection
        </button>
      </div>
    </div>
  );
}
