'use client';

import { Search, Square } from 'lucide-react';

import type { PlantSortKey, WalkStop } from '@/shared/plants';

import { reachedText } from './walked-page';

/**
 * What a search whose walk stops per request is doing: searching on by itself (with how far it got, and Stop),
 * or stopped short of a full page (how far it got, and Search further). The sentence for screen readers changes
 * only when the state does; the ever-moving "how far" is beside it, outside the live region.
 */
export function WalkStatus(props: { sortKey: PlantSortKey; stop: WalkStop | null; searching: boolean; found: number; onHalt: () => void; onResume: () => void }) {
  const { stop, searching } = props;
  if (!stop || props.sortKey === 'id') return null;
  const found = `${props.found} ${props.found === 1 ? 'plant' : 'plants'} found so far`;
  return (
    <div className="walk-status" data-testid="walk-status" data-state={searching ? 'searching' : 'stopped'}>
      <p className="walk-status__text">
        <span role="status">{searching ? 'Searching further…' : `Search stopped: ${found}, more may match.`}</span>{' '}
        <span className="walk-status__reached">
          {searching ? `${found}; searched` : 'Searched'} {reachedText(props.sortKey, stop)}.
        </span>
      </p>
      {searching ? (
        <button type="button" className="button button--small" onClick={props.onHalt}>
          <Square className="icon" aria-hidden="true" />
          Stop
        </button>
      ) : (
        <button type="button" className="button button--small" onClick={props.onResume}>
          <Search className="icon" aria-hidden="true" />
          Search further
        </button>
      )}
    </div>
  );
}
