'use client';

import { useLayoutEffect, useState } from 'react';

/**
 * Which columns a table shows at its current width. Each column has a width in rem (ids and dates are sized
 * to their content: one line, the whole value in their title) or fills the rest with a minimum (the name,
 * which also gets the largest share); each has a priority. When the columns do not fit, the lowest-priority
 * one leaves (its value folds into the main cell's second line), then the next, before the filling column
 * would go under its minimum. Measured with a ResizeObserver, so a window resized in place refits.
 */
export type ColumnSpec = {
  id: string;
  /** rem, or 'fill' for the one column that takes what is left. */
  width: number | 'fill';
  /** rem, for the filling column. */
  min?: number;
  /** Higher stays longer; columns with `always` never leave. */
  priority: number;
  always?: boolean;
};

export type Fit = { shown: ReadonlySet<string>; width: number };

export function fitColumns(specs: readonly ColumnSpec[], availableRem: number): Set<string> {
  const shown = new Set(specs.map((spec) => spec.id));
  const need = () => specs.reduce((sum, spec) => (shown.has(spec.id) ? sum + (spec.width === 'fill' ? (spec.min ?? 8) : spec.width) : sum), 0);
  const leaving = specs.filter((spec) => !spec.always).sort((a, b) => a.priority - b.priority);
  for (const spec of leaving) {
    if (need() <= availableRem) break;
    shown.delete(spec.id);
  }
  return shown;
}

function rootRem(): number {
  return Number.parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
}

/** The second value is the ref for the table's frame (a callback ref: the frame may appear after the data does). */
export function useColumnFit(specs: readonly ColumnSpec[]): [Fit, (element: HTMLElement | null) => void] {
  const [element, ref] = useState<HTMLElement | null>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    if (!element) return;
    const measure = () => setWidth(element.clientWidth);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);
  // Before the first measurement every column counts as shown; the layout effect measures before paint.
  const shown = width === 0 ? new Set(specs.map((spec) => spec.id)) : fitColumns(specs, width / rootRem());
  return [{ shown, width }, ref];
}
