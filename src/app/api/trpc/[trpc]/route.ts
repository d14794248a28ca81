import { fetchRequestHandler } from '@trpc/server/adapters/fetch';

import { createContext } from '@/trpc/init';
import { appRouter } from '@/trpc/routers/_app';

const handler = (request: Request) =>
  fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: () => createContext({ authorization: request.headers.get('authorization') }),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') {
        console.error(JSON.stringify({ level: 'error', door: 'trpc', path, error: error.cause?.stack ?? error.stack }));
      }
    },
  });

export { handler as GET, handler as POST };
