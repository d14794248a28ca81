'use client';

import { Search, Square } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';

import type { PlantSortKey, WalkStop } from '@/shared/plant-table';

import { reachedText } from './walked-page';

/**
 * What a search whose walk stops per request is doing: searching on by itself (with how far it got, and Stop),
 * or stopped short of a full page (how far it got, and Search further). The sentence for screen readers changes
 * only when the state does; the ever-moving "how far" is beside it, outside the live region.
 *
 * The live region is always there (empty, and out of sight, while no search walks): a region that appears
 * already holding its text is often not announced, and one that disappears announces nothing. So the end of a
 * search is said too. The line's buttons come and go (Stop, Search further, none): when the one that had focus
 * goes, focus moves to the other, or with the line gone, to the pager after it, never to the page's body.
 */
export function WalkStatus(props: { sortKey: PlantSortKey; stop: WalkStop | null; searching: boolean; found: number; onHalt: () => void; onResume: () => void }) {
  const { stop, searching } = props;
  const plants = `${props.found} ${props.found === 1 ? 'plant' : 'plants'}`;
  const found = `${plants} found so far`;
  const region = useRef<HTMLDivElement>(null);
  // Whether focus was in the line: a button removed while focused fires no blur, so this outlives it.
  const focusInside = useRef(false);
  const state = stop ? (searching ? 'searching' : 'stopped') : null;
  // The end of a search, said once as it ends (and not again as later pages change the count).
  const [active, setActive] = useState(false);
  const [ended, setEnded] = useState('');
  if (active !== (stop !== null)) {
    setActive(stop !== null);
    setEnded(stop ? '' : `Search done: ${plants} found.`);
  }
  const sentence = stop ? (searching ? 'Searching further…' : `Search stopped: ${found}, more may match.`) : ended;
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (!focusInside.current || !lost) return;
    const here = region.current;
    // The line's button now, or the pager that follows the line (its first control that takes focus).
    const next =
      here?.querySelector<HTMLElement>('button') ??
      here?.nextElementSibling?.querySelector<HTMLElement>('button:not([disabled]), select:not([disabled]), a[href]') ??
      null;
    focusInside.current = next !== null && here?.contains(next) === true;
    next?.focus();
  }, [state, stop]);

  return (
    <div
      ref={region}
      className={stop ? 'walk-status' : undefined}
      data-testid={stop ? 'walk-status' : 'walk-status-idle'}
      data-state={state ?? undefined}
      onFocus={() => (focusInside.current = true)}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget)) focusInside.current = false;
      }}
    >
      <p className={stop ? 'walk-status__text' : 'sr-only'}>
        <span role="status">{sentence}</span>
        {stop ? (
          <>
            {' '}
            <span className="walk-status__reached">
              {searching ? `${found}; searched` : 'Searched'} {reachedText(props.sortKey, stop)}.
            </span>
          </>
        ) : null}
      </p>
      {stop ? (
        searching ? (
          <button type="button" className="button button--small" onClick={props.onHalt}>
            <Square className="icon" aria-hidden="true" />
            Stop
          </button>
        ) : (
          <button type="button" className="button button--small" onClick={props.onResume}>
            <Search className="icon" aria-hidden="true" />
            Search further
          </button>
        )
      ) : null}
    </div>
  );
}
