import { createServer, type IncomingMessage, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { Config } from '@/server/config';
import type { Logger } from '@/server/log';
import { errorCatalog, type ErrorKind } from '@/shared/errors';
import { HEADERS_MAX_BYTES, kib, REQUEST_TIMEOUT_MS } from '@/shared/limits';

import { GuardedResponse, oneRequestAtATime } from './connection';
import { addressGroup, createClientAddresses } from './guards/client-address';

/**
 * Connection limits: what a client can hold without sending a request. Partial headers are dropped within
 * HEADERS_TIMEOUT_MS (Node checks every CHECK_INTERVAL_MS), idle keep-alive connections after
 * KEEP_ALIVE_TIMEOUT_MS, a connection whose request (headers and body) takes longer than REQUEST_TIMEOUT_MS
 * is answered 408 and closed, and a socket that neither sends nor reads for SOCKET_IDLE_TIMEOUT_MS is
 * closed. The body guard answers stalls long before the last two.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
const CHECK_INTERVAL_MS = 1_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const SOCKET_IDLE_TIMEOUT_MS = 120_000;
/** How long a shutdown waits for requests in flight before it cuts their connections. */
const DRAIN_TIMEOUT_MS = 10_000;

function rawAnswer(kind: ErrorKind, message: string, extra = ''): string {
  const { status, value } = errorCatalog[kind];
  const body = JSON.stringify({ error: value, message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Node's own refusals, before any request reaches the front, in the contract's shape instead of a bare
 * status line: headers over HEADERS_MAX_BYTES (431), a request that took too long (408), anything its parser refuses (400).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? rawAnswer('headersTooLarge', `the request headers are larger than ${kib(HEADERS_MAX_BYTES)}`)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawAnswer('bodyTimeout', 'the request did not arrive in time')
        : rawAnswer('malformedRequest', 'the request is not valid HTTP');
  socket.end(answer);
}

export type HttpServerOptions = {
  port: number;
  hostname: string;
  maxConnections: number;
  /** Connections one client address (an IPv6 address: its /64) may hold at once. */
  maxConnectionsPerAddress: number;
  /** TRUST_PROXY: the per-address limit leaves trusted proxies alone, as their connections carry many clients'. */
  trustProxy: Config['TRUST_PROXY'];
  log: Logger;
};

export type RunningServer = {
  server: Server;
  /**
   * From now on every answer says `Connection: close`, and the connection closes once it is written: a client
   * learns from the answer itself that the connection is going, so none sends a request on a connection the
   * server is closing. Still accepting (the drain window of a shutdown: main.ts).
   */
  closeAfterEachAnswer: () => void;
  /** Stops accepting connections, closes the idle ones, and waits for the requests in flight to be answered. */
  close: () => Promise<void>;
};

/**
 * The node:http server under the front: connection limits and a shutdown in two steps. First every answer
 * closes its connection while the server still accepts (`closeAfterEachAnswer`), so a load balancer that
 * stops sending finds no kept-alive connection it could send on at the moment it closes; then `close`: stop
 * accepting, close the idle connections, answer what was accepted with `Connection: close`, then close.
 */
export async function startHttpServer(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: HttpServerOptions,
): Promise<RunningServer> {
  // Once shutdown starts, every answer says `Connection: close`, so keep-alive clients stop sending on
  // connections that are about to go; a busy keep-alive connection is otherwise never idle.
  let draining = false;
  const unanswered = new Map<ServerResponse, IncomingMessage>();
  const closeAfterAnswer = (request: IncomingMessage, response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
    else response.once('finish', () => request.socket.end());
  };

  const inTurn = oneRequestAtATime();
  const onRequest = inTurn((request, response) => {
    if (draining) closeAfterAnswer(request, response);
    unanswered.set(response, request);
    response.once('close', () => unanswered.delete(response));
    handle(request, response).catch((error: unknown) => {
      options.log.error({ err: error }, 'unhandled request failure');
      response.destroy();
    });
  });
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      maxHeaderSize: HEADERS_MAX_BYTES,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
      // The front answers a request without Host itself, in the contract's shape.
      requireHostHeader: false,
      ServerResponse: GuardedResponse,
    },
    onRequest,
  );
  // `Expect: 100-continue` reaches the front like any request; the body guard sends 100 Continue when it
  // starts reading the body, so a request refused before (401, 413, 415, …) gets its final status at once
  // and is never invited to send its body. Without this listener Node would send 100 Continue first.
  server.on('checkContinue', onRequest);
  server.maxConnections = options.maxConnections;
  server.timeout = SOCKET_IDLE_TIMEOUT_MS;

  const perAddress = new Map<string, number>();
  const { isTrustedProxy } = createClientAddresses(options.trustProxy);
  server.on('connection', (socket) => {
    const limit = options.maxConnectionsPerAddress;
    const peer = socket.remoteAddress ?? 'unknown';
    if (isTrustedProxy(peer)) return;
    const address = addressGroup(peer);
    const open = (perAddress.get(address) ?? 0) + 1;
    if (open > limit) {
      socket.destroy();
      return;
    }
    perAddress.set(address, open);
    socket.once('close', () => {
      const left = perAddress.get(address)! - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  server.on('clientError', answerClientError);
  // CONNECT never reaches the request handler: Node hands over the raw socket, or drops it when unheard.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(rawAnswer('methodNotAllowed', 'CONNECT is not served here', 'Allow: GET, HEAD, POST, PATCH, DELETE, OPTIONS\r\n'));
  });
  server.on(
    'checkExpectation',
    inTurn((request: IncomingMessage, response: ServerResponse) => {
      const body = JSON.stringify({ error: errorCatalog.expectationFailed.value, message: `Expect: ${String(request.headers.expect).slice(0, 100)} is not supported; only 100-continue is` });
      response.writeHead(417, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
      response.end(body);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    server,
    closeAfterEachAnswer: () => {
      draining = true;
      // An answer already under way (a stream) keeps its connection, which is idle once it ends and closed with
      // the idle ones by `close`, after the window, when no balancer sends to this instance any more.
      for (const response of unanswered.keys()) if (!response.headersSent) response.setHeader('Connection', 'close');
    },
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        for (const [response, request] of unanswered) {
          // A stream of events (the live feed) has no end to wait for: it ends now, and its client reconnects,
          // through a balancer to another instance, from the last event it read.
          if (String(response.getHeader('content-type')).startsWith('text/event-stream')) request.socket.destroy();
          else closeAfterAnswer(request, response);
        }
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
      }),
  };
}
