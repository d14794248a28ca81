import type { IncomingMessage, ServerResponse } from 'node:http';

import type { BodyReader, ClientConnection, EdgeReply, EdgeRequest } from '@/server/rest/edge';

export type EdgeAnswer = (request: EdgeRequest, connection: ClientConnection) => Promise<EdgeReply>;

/**
 * A request body read only as fast as the edge asks, one chunk ahead: the flow control of the web stream
 * with the default strategy that this replaces (fetch's Request, Headers and streams cost more than the
 * rest of the edge). Cancelling it (the edge does at 64 KiB) stops reading without destroying the
 * socket, so the 413 can still be sent. Reading starts at once, as the stream's first pull did, so a
 * body the edge never reads is left on the wire exactly as before rather than drained by node:http.
 */
export class NodeBodyReader implements BodyReader {
  private readonly queued: Uint8Array[] = [];
  private ended = false;
  private cancelled = false;
  private failure: { error: unknown } | undefined;
  private waiting: { resolve: (result: ReadableStreamReadResult<Uint8Array>) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    private readonly request: IncomingMessage,
    private readonly onAbandoned: () => void,
  ) {
    request.pause();
    request.on('data', (chunk: Buffer) => {
      if (this.waiting) {
        this.settle().resolve({ done: false, value: chunk });
      } else {
        this.queued.push(chunk);
        request.pause();
      }
    });
    request.on('end', () => {
      this.ended = true;
      if (this.waiting && this.queued.length === 0) this.settle().resolve({ done: true, value: undefined });
    });
    request.on('error', (error) => {
      // A stream that has closed or been cancelled no longer reports errors.
      if (this.isClosed()) return;
      this.failure = { error };
      this.queued.length = 0;
      if (this.waiting) this.settle().reject(error);
    });
    request.resume();
  }

  read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    if (this.failure) return Promise.reject(this.failure.error);
    const value = this.queued.shift();
    if (value) {
      if (!this.ended) this.request.resume();
      return Promise.resolve({ done: false, value });
    }
    if (this.isClosed()) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  cancel(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    // Like a web stream, a body that has been read to its end is not abandoned by cancelling it.
    if (this.isClosed()) return Promise.resolve();
    this.cancelled = true;
    this.queued.length = 0;
    this.request.removeAllListeners('data');
    this.request.pause();
    this.onAbandoned();
    if (this.waiting) this.settle().resolve({ done: true, value: undefined });
    return Promise.resolve();
  }

  private isClosed(): boolean {
    return this.cancelled || (this.ended && this.queued.length === 0);
  }

  private settle() {
    const waiting = this.waiting!;
    this.waiting = undefined;
    return waiting;
  }
}

/** How long the rest of an abandoned body is read and thrown away before the connection is cut. */
const LINGER_MS = 2_000;

/**
 * The rest of an abandoned body (past 64 KiB, say) is still on its way, so the connection closes after
 * the answer. Closing a socket with unread data makes the kernel send a reset, which can erase the
 * answer before the client reads it (RFC 9112, 9.6); so the server half-closes, discards what still
 * arrives for a moment, and only then cuts the connection.
 */
function closeAfterAbandonedBody(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('Connection', 'close');
  const socket = request.socket;
  socket.destroySoon = function lingerThenDestroy() {
    this.end();
    request.removeAllListeners('data');
    request.resume();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}

/** Only HTTP's own white space, which fetch's Headers strips from the ends of a value (JS's trim takes more). */
const HTTP_WHITESPACE_AT_ENDS = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** A header as fetch's Headers.get gives it, from the fields as received: repeats joined with ", ". */
export function headerValue(rawHeaders: readonly string[], lowercaseName: string): string | null {
  let value: string | null = null;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length !== lowercaseName.length || name.toLowerCase() !== lowercaseName) continue;
    const field = rawHeaders[index + 1]!.replace(HTTP_WHITESPACE_AT_ENDS, '');
    value = value === null ? field : `${value}, ${field}`;
  }
  return value;
}

/** The reply's headers as a fetch Response listed them: names in lower case, sorted. */
export function wireHeaders(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers)
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Hands a node:http request to the edge and writes its reply, with the same bytes on the wire as when a
 * fetch Request and Response stood in between, and none of their cost.
 */
export async function serveEdge(answer: EdgeAnswer, request: IncomingMessage, response: ServerResponse): Promise<void> {
  // Built as the fetch Request's URL was. It cannot carry credentials (which a Request refuses): its
  // authority is the Host header, which the server has checked is a host name.
  const url = new URL(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`);
  let abandoned = false;
  const body = request.method !== 'GET' && request.method !== 'HEAD' ? new NodeBodyReader(request, () => (abandoned = true)) : null;
  const reply = await answer(
    { method: request.method!, url, header: (name) => headerValue(request.rawHeaders, name), openBody: () => body },
    { remoteAddress: request.socket.remoteAddress },
  );
  response.statusCode = reply.status;
  for (const [name, value] of wireHeaders(reply.headers)) response.appendHeader(name, value);
  if (abandoned) closeAfterAbandonedBody(request, response);
  response.end(reply.body ?? undefined);
}
