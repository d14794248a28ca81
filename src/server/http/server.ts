import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import next from 'next';

import { errorCatalog, type ErrorKind } from '@/shared/errors';
import { logger } from '@/server/log';

import { serveEdge } from './node-bridge';

/** The REST door's paths, on the normalised path (`/api/docs/../plants` is `/api/plants`). */
function isRestPath(pathname: string): boolean {
  return (pathname === '/api' || pathname.startsWith('/api/')) && !pathname.startsWith('/api/trpc/') && !pathname.startsWith('/api/docs');
}

/** A host name, IPv4 or [IPv6] literal, with an optional port: anything else in Host is refused. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function isHostName(host: string | undefined): boolean {
  if (!host || !HOST.test(host)) return false;
  try {
    return new URL(`http://${host}/`).host !== '';
  } catch {
    return false; // e.g. a port past 65535
  }
}

/** Methods the fetch API cannot even represent; no part of this app serves them. */
const UNSERVED_METHODS = new Set(['TRACE', 'TRACK', 'CONNECT']);

function problemBody(kind: ErrorKind, message: string): string {
  return JSON.stringify({ error: errorCatalog[kind].value, message });
}

function refuse(response: ServerResponse, kind: ErrorKind, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(errorCatalog[kind].status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers });
  response.end(problemBody(kind, message));
}

/** Node's own refusals (bad HTTP, headers over 16 KiB) in the contract's shape instead of a bare status line. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const kind: ErrorKind = tooLarge ? 'headersTooLarge' : 'malformedRequest';
  const body = problemBody(kind, tooLarge ? 'the request headers are larger than 16 KiB' : 'the request is not valid HTTP');
  const status = errorCatalog[kind].status;
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
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
  const answerRest = options.dev ? undefined : (await import('@/server/rest/handler')).handleRestRequest.answer;

  // Once shutdown starts, every answer says `Connection: close`, so keep-alive clients stop sending on
  // connections that are about to go; otherwise a busy keep-alive connection is never idle, and the drain
  // would wait for its timeout while the server kept accepting requests on it.
  let draining = false;
  const unanswered = new Map<ServerResponse, IncomingMessage>();
  const closeAfterAnswer = (request: IncomingMessage, response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
    else response.once('finish', () => request.socket.end());
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (draining) closeAfterAnswer(request, response);
    unanswered.set(response, request);
    response.once('close', () => unanswered.delete(response));
    // The request URL is built from Host, so a Host that is not a host name could rewrite the path.
    if (!isHostName(request.headers.host)) return refuse(response, 'malformedRequest', 'the Host header is not a host name');
    if (UNSERVED_METHODS.has(request.method ?? '')) {
      return refuse(response, 'methodNotAllowed', `${request.method} is not served here`, { Allow: 'GET, HEAD, POST, DELETE, OPTIONS' });
    }
    const { pathname } = new URL(request.url ?? '/', 'http://localhost');
    const handled = answerRest && isRestPath(pathname) ? serveEdge(answerRest, request, response) : handleNext(request, response);
    handled.catch((error: unknown) => {
      logger.error({ err: error, path: pathname }, 'unhandled request failure');
      if (!response.headersSent) refuse(response, 'internal', 'the server failed to handle this request');
      else response.end();
    });
  });
  server.on('clientError', answerClientError);
  // CONNECT never reaches the request handler: Node hands over the raw socket, or drops it when unheard.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    const body = problemBody('methodNotAllowed', 'CONNECT is not served here');
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, POST, DELETE, OPTIONS\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    refuse(response, 'expectationFailed', `Expect: ${request.headers.expect} is not supported; only 100-continue is`),
  );
  // Backstops behind the edge's own body timeout: a client that never finishes its headers or its request
  // is cut off instead of holding a connection for Node's five-minute default.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port, options.hostname, resolve));

  return {
    /** Stops accepting connections and waits for the requests in flight to be answered. */
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        for (const [response, request] of unanswered) closeAfterAnswer(request, response);
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
      }),
  };
}
