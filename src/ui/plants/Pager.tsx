'use client';

import { ChevronFirst, ChevronLast, ChevronLeft, ChevronRight } from 'lucide-react';

import { PAGE_SIZES } from '@/shared/plant-table';

import { PagerButton } from '../PagerButton';
import type { Cursor, PageSize } from './url-state';

const count = new Intl.NumberFormat();

/**
 * Where a page stands: "26–50 of 186", or past what a name search counted, "25 plants past the first 1,000 of at
 * least 1,000 matches": a total that is not exact is a search's, counted up to a cap, and says so in words.
 */
export function rangeText(place: { shown: number; offset: number; offsetExact: boolean; total: number; totalExact: boolean }): string {
  const of = totalText(place.total, place.totalExact);
  if (!place.offsetExact) return `${count.format(place.shown)} ${place.shown === 1 ? 'plant' : 'plants'} past the first ${count.format(place.offset)} of ${of}`;
  return `${count.format(place.shown === 0 ? 0 : place.offset + 1)}–${count.format(place.offset + place.shown)} of ${of}`;
}

/** The total as the range says it: exact, or "at least 1,000 matches" where the count stopped. */
const totalText = (total: number, exact: boolean) => (exact ? count.format(total) : `at least ${count.format(total)} matches`);

/** "page 4,001 of 4,001", when both the place and the total are exact; else null. */
export function pageNumberText(place: { offset: number; offsetExact: boolean; total: number; totalExact: boolean; size: number }): string | null {
  if (!place.offsetExact || !place.totalExact) return null;
  const pages = Math.max(1, Math.ceil(place.total / place.size));
  return `page ${count.format(Math.min(pages, Math.floor(place.offset / place.size) + 1))} of ${count.format(pages)}`;
}

/** Where the page stands, the page size, and first, previous, next, last (keyset: by the rows at the page's ends). */
export function Pager(props: {
  shown: number;
  offset: number;
  offsetExact: boolean;
  total: number;
  totalExact: boolean;
  hasNext: boolean;
  loading: boolean;
  size: PageSize;
  firstId: bigint | undefined;
  lastId: bigint | undefined;
  onSize: (size: PageSize) => void;
  onTurn: (cursor: Cursor | undefined) => void;
}) {
  const { shown, firstId, lastId, onTurn } = props;
  const atStart = props.offsetExact && props.offset === 0;
  const atEnd = !props.hasNext;
  const pageNumber = pageNumberText(props);
  return (
    <nav className={shown > 25 ? 'pager pager--sticky' : 'pager'} aria-label="Plant pages">
      <p className="pager__range" aria-live="polite" data-testid="plants-range">
        {props.offsetExact ? (
          <strong>
            {count.format(shown === 0 ? 0 : props.offset + 1)}–{count.format(props.offset + shown)}
          </strong>
        ) : (
          <>
            <strong>
              {count.format(shown)} {shown === 1 ? 'plant' : 'plants'}
            </strong>{' '}
            past the first {count.format(props.offset)}
          </>
        )}{' '}
        of <strong>{props.totalExact ? count.format(props.total) : `at least ${count.format(props.total)}`}</strong>
        {props.totalExact ? '' : ' matches'}
        {props.loading ? ' (loading…)' : ''}
      </p>
      {pageNumber ? (
        <p className="pager__page" data-testid="plants-page-number">
          {pageNumber}
        </p>
      ) : null}
      <div className="pager__buttons">
        <label htmlFor="page-size" className="sr-only">
          Plants per page
        </label>
        <select id="page-size" value={props.size} onChange={(event) => props.onSize(Number(event.target.value) as PageSize)}>
          {PAGE_SIZES.map((option) => (
            <option key={option} value={option}>
              {option} per page
            </option>
          ))}
        </select>
        <PagerButton label="First page" disabled={atStart} onClick={() => onTurn(undefined)} icon={ChevronFirst} />
        <PagerButton label="Previous page" disabled={atStart || firstId === undefined} onClick={() => firstId !== undefined && onTurn({ kind: 'before', id: firstId })} icon={ChevronLeft} />
        <PagerButton label="Next page" disabled={atEnd || lastId === undefined} onClick={() => lastId !== undefined && onTurn({ kind: 'after', id: lastId })} icon={ChevronRight} />
        <PagerButton label="Last page" disabled={atEnd} onClick={() => onTurn({ kind: 'last' })} icon={ChevronLast} />
      </div>
    </nav>
  );
}
