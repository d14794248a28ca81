import type { ReactNode } from 'react';

import { problemOf } from './problems';

type Query = { isPending: boolean; isError: boolean; data: unknown; error: unknown; refetch: () => unknown };

/**
 * What a section shows before its first data arrives: a progress line while loading, or why loading
 * failed with a way to try again. Null once there is data to show (even stale data after a failed refresh).
 */
export function queryFallback(query: Query, what: string): ReactNode | null {
  if (query.isPending) {
    return (
      <p className="placeholder" role="status">
        <span className="spinner" aria-hidden="true" /> Loading {what}…
      </p>
    );
  }
  if (query.isError && !query.data) {
    return (
      <div className="notice notice--error" role="alert">
        <p>
          The {what} could not be loaded: {problemOf(query.error).message}.
        </p>
        <button type="button" className="button" onClick={() => void query.refetch()}>
          Try again
        </button>
      </div>
    );
  }
  return null;
}

/**
 * Above data that is shown while a refresh failed (queryFallback keeps showing the stale data): why the
 * refresh failed. Null while the query is fine.
 */
export function refreshFailure(query: Pick<Query, 'isError' | 'error'>, what: string): ReactNode | null {
  return query.isError ? (
    <p className="notice notice--error" role="alert">
      The {what} could not be refreshed: {problemOf(query.error).message}.
    </p>
  ) : null;
}
