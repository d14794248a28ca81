import type { IncomingMessage, ServerResponse } from 'node:http';

export type FetchHandler = (request: Request, connection: { remoteAddress?: string }) => Promise<Response>;

/**
 * A request body as a web stream that reads only as fast as the handler asks. Cancelling it (the edge
 * does at 64 KiB) stops reading without destroying the socket, so the 413 can still be sent.
 */
function bodyStream(request: IncomingMessage, onAbandoned: () => void): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      request.pause();
      request.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) request.pause();
      });
      request.on('end', () => controller.close());
      request.on('error', (error) => controller.error(error));
    },
    pull() {
      request.resume();
    },
    cancel() {
      request.removeAllListeners('data');
      request.pause();
      onAbandoned();
    },
  });
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

/** Hands a node:http request to a fetch-style handler and writes its Response back. */
export async function serveFetch(handler: FetchHandler, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    headers.append(request.rawHeaders[index]!, request.rawHeaders[index + 1]!);
  }
  let abandoned = false;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  const fetchRequest = new Request(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`, {
    method: request.method,
    headers,
    body: hasBody ? bodyStream(request, () => (abandoned = true)) : undefined,
    duplex: 'half',
  } as RequestInit);
  const fetchResponse = await handler(fetchRequest, { remoteAddress: request.socket.remoteAddress });
  response.statusCode = fetchResponse.status;
  for (const [name, value] of fetchResponse.headers) response.appendHeader(name, value);
  if (abandoned) closeAfterAbandonedBody(request, response);
  response.end(fetchResponse.body ? Buffer.from(await fetchResponse.arrayBuffer()) : undefined);
}
