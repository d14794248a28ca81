'use client';

import { QueryClientProvider } from '@tanstack/react-query';
import { httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import { createTRPCReact } from '@trpc/react-query';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { type ReactNode, useEffect, useState } from 'react';
import superjson from 'superjson';

import type { AppRouter } from '@/server/app-router';

import { makeQueryClient } from './query-client';

/** The typed hooks of the one router: `trpc.plants.list.useQuery(…)`, `trpc.tokens.create.useMutation()`, … */
export const trpc = createTRPCReact<AppRouter>();

export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export const TRPC_ENDPOINT = '/api/trpc';

type ProviderProps = {
  /** Read on every request, so signing in or out needs no new client. Must be a stable function. */
  getToken: () => string | null;
  /** Called when any request is answered 401 (the token was revoked or expired). Must be stable. */
  onUnauthorized: () => void;
  /** Subscribes to token changes: every cached answer is dropped then, so no user sees another's data. */
  onTokenChange: (listener: () => void) => () => void;
  children: ReactNode;
};

export function TRPCReactProvider({ getToken, onUnauthorized, onTokenChange, children }: ProviderProps) {
  const [queryClient] = useState(() => makeQueryClient({ onUnauthorized }));
  const [trpcClient] = useState(() =>
    trpc.createClient({
      links: [
        splitLink({
          condition: (operation) => operation.type === 'subscription',
          // The live feed: tRPC's SSE subscription. The browser's own EventSource cannot send a header, and a
          // token in the address would land in logs; this one (the `eventsource` package) runs on fetch, so
          // each connection, reconnections included, carries the current token like every other call.
          true: httpSubscriptionLink({
            url: TRPC_ENDPOINT,
            transformer: superjson,
            EventSource,
            eventSourceOptions: () => ({
              fetch: (input, init) => {
                const token = getToken();
                return fetch(input, { ...init, headers: { ...init?.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
              },
            }),
          }),
          false: httpBatchLink({
            url: TRPC_ENDPOINT,
            // superjson carries bigint ids and Date values exactly, both ways.
            transformer: superjson,
            maxURLLength: 2000,
            headers() {
              const token = getToken();
              return token ? { authorization: `Bearer ${token}` } : {};
            },
          }),
        }),
      ],
    }),
  );

  useEffect(() => {
    let last = getToken();
    return onTokenChange(() => {
      const token = getToken();
      if (token !== last) queryClient.clear();
      last = token;
    });
  }, [getToken, onTokenChange, queryClient]);

  return (
    <trpc.Provider client={trpcClient} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </trpc.Provider>
  );
}
