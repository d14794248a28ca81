import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';

/**
 * React Query's default key hash is `JSON.stringify`, which throws on bigint, and plant ids (and the
 * `after` cursor) are bigint on the client. This hash keeps React Query's sorted-object rule and writes a
 * bigint as a tagged string, so `{ after: 9223372036854775807n }` gets a key of its own, exactly.
 */
export function hashQueryKey(queryKey: readonly unknown[]): string {
  return JSON.stringify(queryKey, (_, value: unknown) => {
    if (typeof value === 'bigint') return { $bigint: value.toString() };
    if (isPlainObject(value)) return Object.fromEntries(Object.keys(value).sort().map((key) => [key, value[key]]));
    return value;
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** The HTTP status a tRPC error carries (our error formatter puts it in `data.httpStatus`). */
export function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = error.data as { httpStatus?: unknown } | undefined;
  return typeof data?.httpStatus === 'number' ? data.httpStatus : undefined;
}

export type QueryClientHandlers = {
  /** Any request answered 401: the token was revoked or expired while the page was open. */
  onUnauthorized: () => void;
};

export function makeQueryClient(handlers: QueryClientHandlers): QueryClient {
  const onError = (error: unknown) => {
    if (httpStatusOf(error) === 401) handlers.onUnauthorized();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        queryKeyHashFn: hashQueryKey,
        staleTime: 10_000,
        // A 4xx answer will not change on a retry; a network failure or a 5xx might.
        retry: (failureCount, error) => {
          const status = httpStatusOf(error);
          return (status === undefined || status >= 500) && failureCount < 2;
        },
      },
      mutations: { retry: false },
    },
  });
}
