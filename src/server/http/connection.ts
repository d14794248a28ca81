import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * After an answer that leaves a request body unread, the rest of that body may still be on its way. Closing
 * a socket with unread data makes the kernel send a reset, which can erase the answer before the client
 * reads it (RFC 9112, 9.6); so the server half-closes, discards what still arrives for a moment, and only
 * then cuts the connection. Both bounds count: a client on a fast link cannot make the server read
 * gigabytes within the moment (without the bound: 4.8 GB in 8 s after a 401), nor hold the socket past it.
 */
export const LINGER_MS = 2_000;
/**
 * Enough for the rest of a body already on its way: on loopback a client writes 1 MiB in about a
 * millisecond, before a busy client has read the answer, and then the reset erased it (floods.test.ts,
 * a 10 MB body). Reading what the client pays to send is no asymmetric cost.
 */
export const LINGER_BYTES = 16 * 1024 * 1024;

/** A body the request announced (Content-Length over 0, or Transfer-Encoding) that has not all arrived. */
function bodyStillArriving(request: IncomingMessage): boolean {
  if (request.complete) return false;
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

function lingerThenDestroy(request: IncomingMessage, socket: Socket): void {
  socket.destroySoon = function destroySoon(this: Socket) {
    this.end();
    // Counted on the socket: once the answer is out, Node's parser drops the body's bytes unseen.
    let discarded = 0;
    this.on('data', (chunk: Buffer) => {
      discarded += chunk.byteLength;
      if (discarded > LINGER_BYTES) this.destroy();
    });
    request.removeAllListeners('data');
    request.resume();
    this.resume();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}

/**
 * Every answer of the server goes through here as its status line is written, whoever writes it (the
 * front, the tRPC adapter, Node for a request it ends itself). An answer sent before the request's body has
 * arrived — a refusal (401, 413, 415, …) that never reads it — closes the connection: otherwise Node would
 * read and throw away the whole body to reach the next request, however large its Content-Length.
 */
export class GuardedResponse extends ServerResponse {
  override writeHead(statusCode: number, reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (bodyStillArriving(this.req)) {
      this.setHeader('Connection', 'close');
      this.req.pause();
      lingerThenDestroy(this.req, this.req.socket);
    }
    return typeof reasonOrHeaders === 'string' ? super.writeHead(statusCode, reasonOrHeaders, headers) : super.writeHead(statusCode, reasonOrHeaders);
  }
}

/**
 * One request at a time on each connection, and nothing after the server decides to close it. Node hands
 * pipelined requests over as soon as it parses them, in parallel; but a request behind one whose answer
 * closes the connection (two Host fields, a 413, a shutdown) gets no answer, so it must not run either:
 * a pipelining proxy would otherwise be desynchronised, and a `DELETE` behind a refused request carried
 * out unseen. RFC 9112 (9.3.2) allows parallel work on pipelined requests only when all are
 * safe; one at a time is what a server owes the rest.
 */
export function oneRequestAtATime() {
  /** Settles when the last request handed over on a connection has been answered (or its answer given up). */
  const lastAnswered = new WeakMap<Socket, Promise<void>>();

  /** `serve` as a listener of the server's request events (every one that answers must take its turn here). */
  return function inTurn(serve: (request: IncomingMessage, response: ServerResponse) => void) {
    return function onRequest(request: IncomingMessage, response: ServerResponse): void {
      const socket = request.socket;
      const previous = lastAnswered.get(socket);
      lastAnswered.set(socket, new Promise((resolve) => response.once('close', resolve)));
      if (!previous) return serve(request, response);
      void previous.then(() => {
        // Node has ended (or destroyed) the socket after the previous answer: the server chose to close.
        if (socket.destroyed || socket.writableEnded) return;
        serve(request, response);
      });
    };
  };
}
