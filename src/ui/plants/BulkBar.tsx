'use client';

import { CheckCheck, Tags, Trash2, X } from 'lucide-react';

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
  pageAllSelected: boolean;
  total: number;
  progress: { done: number; of: number } | null;
  onSelectAll: () => void;
  onDelete: () => void;
  onRetag: () => void;
  onClear: () => void;
}) {
  const { selected, matching, pageAllSelected, total, progress } = props;
  const allMatching = matching !== null;
  if (selected === 0 && !progress) return null;
  return (
    <div className="bulkbar" role="region" aria-label="Selected plants">
      <p aria-live="polite">
        {progress
          ? `Working… ${count.format(progress.done)} of ${count.format(progress.of)}`
          : matching !== null
            ? `${count.format(selected)} ${selected === 1 ? 'plant' : 'plants'} selected: all ${count.format(matching)} matching${matching > selected ? ` but ${count.format(matching - selected)}` : ''}`
            : selected === 1
              ? '1 plant selected'
              : `${count.format(selected)} plants selected`}
      </p>
      {!progress && !allMatching && pageAllSelected && total > selected ? (
        <button type="button" className="button button--small" onClick={props.onSelectAll}>
          <CheckCheck className="icon" aria-hidden="true" />
          Select all {count.format(total)} matching
        </button>
      ) : null}
      <div className="bulkbar__actions">
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
