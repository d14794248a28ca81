'use client';

import { useIsFetching, useIsMutating } from '@tanstack/react-query';

/**
 * One indicator for the whole page, there while any tRPC query or mutation runs. It fades in only after
 * 150 ms (in CSS), so quick answers do not make it flicker.
 */
export function ActivityIndicator() {
  const busy = useIsFetching() + useIsMutating() > 0;
  if (!busy) return null;
  return (
    <div className="activity" role="progressbar" aria-label="Loading" data-testid="activity">
      <span className="activity__bar" aria-hidden="true" />
      <span className="activity__label">
        <span className="spinner" aria-hidden="true" /> Working…
      </span>
    </div>
  );
}
