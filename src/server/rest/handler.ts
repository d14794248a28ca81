import 'server-only';

import { appRouter } from '@/trpc/routers/_app';
import { createContext } from '@/trpc/init';

import { createRestEdge } from './edge';

/** The REST door of this app: the edge over the app's router. */
export const handleRestRequest = createRestEdge({
  router: appRouter,
  createContext,
  logError: ({ requestId, method, path, error }) => {
    console.error(
      JSON.stringify({ level: 'error', requestId, method, path, error: error instanceof Error ? error.stack : String(error) }),
    );
  },
});
