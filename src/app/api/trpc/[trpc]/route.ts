import { fetchRequestHandler } from '@trpc/server/adapters/fetch';

import { logger } from '@/server/log';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

const handler = (request: Request) =>
  fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: appRouter,
    createContext: () => createContext({ authorization: request.headers.get('authorization') }),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') {
        logger.error({ door: 'trpc', path, err: error.cause ?? error }, 'request failed');
      }
    },
  });

export { handler as GET, handler as POST };
