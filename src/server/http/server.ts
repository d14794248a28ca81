import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import next from 'next';

import { errorCatalog } from '@/server/errors';
import { logger } from '@/server/log';

import { serveFetch } from './fetch-bridge';

/** The REST door's paths; tRPC and the docs page stay with Next.js. */
function isRestRequest(url: string | undefined): boolean {
  return url !== undefined && (url === '/api' || url.startsWith('/api/') || url.startsWith('/api?')) && !url.startsWith('/api/trpc/') && !url.startsWith('/api/docs');
}

export type RunningServer = { close: () => Promise<void> };

/** How long a shutdown waits for requests in flight before it cuts their connections. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Next.js behind a plain node:http server, for two things `next start` does not do: a shutdown that lets
 * requests in flight finish, and REST requests that go straight to the edge, skipping Next.js's routing,
 * which costs more than the whole request otherwise. Pages and the tRPC endpoint go to Next.js; the route
 * handler under src/app/api serves REST wherever this server is not used (`next dev`, `next start`).
 */
export async function startHttpServer(options: { projectRoot: string; dev: boolean; port: number; hostname: string }): Promise<RunningServer> {
  const app = next({ dev: options.dev, dir: options.projectRoot, hostname: options.hostname, port: options.port });
  await app.prepare();
  const handleNext = app.getRequestHandler();
  // In development Next.js's route handler serves REST too, so edits to the edge reload like the rest.
  const handleRest = options.dev ? undefined : (await import('@/server/rest/handler')).handleRestRequest;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const handled =
      handleRest && isRestRequest(request.url) ? serveFetch(handleRest, request, response) : handleNext(request, response);
    handled.catch((error: unknown) => {
      logger.error({ err: error, path: request.url }, 'unhandled request failure');
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: errorCatalog.internal.value, message: 'the server failed to handle this request' }));
    });
  });
  // Backstops behind the edge's own body timeout: a client that never finishes its headers or its request
  // is cut off instead of holding a connection for Node's five-minute default.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port, options.hostname, resolve));

  return {
    /** Stops accepting connections and waits for the requests in flight to be answered. */
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
      }),
  };
}
