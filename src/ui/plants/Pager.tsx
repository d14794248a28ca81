'use client';

import { ChevronFirst, ChevronLast, ChevronLeft, ChevronRight } from 'lucide-react';

import { PAGE_SIZES } from '@/shared/plants';

import { PagerButton } from '../PagerButton';
import type { Cursor, PageSize } from './url-state';

const count = new Intl.NumberFormat();

/** "26–50 of 186", the page size, and first, previous, next, last (keyset: by the rows at the page's ends). */
export function Pager(props: {
  from: number;
  to: number;
  total: number;
  loading: boolean;
  size: PageSize;
  firstId: bigint | undefined;
  lastId: bigint | undefined;
  onSize: (size: PageSize) => void;
  onTurn: (cursor: Cursor | undefined) => void;
}) {
  const { from, to, total, firstId, lastId, onTurn } = props;
  const atStart = from <= 1;
  const atEnd = to >= total;
  return (
    <nav className={to - from >= 25 ? 'pager pager--sticky' : 'pager'} aria-label="Plant pages">
      <p className="pager__range" aria-live="polite" data-testid="plants-range">
        <strong>
          {count.format(from)}–{count.format(to)}
        </strong>{' '}
        of <strong>{count.format(total)}</strong>
        {props.loading ? ' (loading…)' : ''}
      </p>
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
