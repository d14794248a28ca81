import { once } from 'node:events';
import type { ServerResponse } from 'node:http';

import type { Reply } from './reply';

/**
 * Cuts a streamed answer (a CSV export, a live feed) whose client stops taking it: once a write has filled the
 * socket's buffer, the client must take it (the response's `drain`) within `stallMs`, or the connection is
 * destroyed. So a client that reads a few bytes a minute cannot hold what the stream holds (its place among the
 * exports or feeds, a batch in memory, a connection) for long: it must read at least one buffer's worth (the
 * socket's buffers plus one chunk) every `stallMs` (STREAM_STALL_TIMEOUT_MS, docs/configuration.md). A client
 * that keeps up never waits that long; one whose buffers never fill (a quiet feed) is never cut.
 */
export function cutOffWhenStalled(response: ServerResponse, stallMs: number): void {
  let timer: NodeJS.Timeout | undefined;
  const write = response.write.bind(response) as (...args: unknown[]) => boolean;
  response.write = ((...args: unknown[]) => {
    const taken = write(...args);
    if (!taken && timer === undefined) {
      timer = setTimeout(() => response.destroy(new Error(`the client took nothing for ${stallMs} ms`)), stallMs);
      timer.unref();
    }
    return taken;
  }) as ServerResponse['write'];
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  response.on('drain', stop);
  response.once('close', stop);
}

/**
 * Sends a streamed reply (`Reply.stream`): its head, then its chunks as the client takes them (the socket's
 * backpressure), cut off when the client stalls (above). A failure after the first byte can only cut the body
 * short, so the connection is reset rather than ended, and a client cannot take a partial body for a whole one.
 * However it ends, the stream is closed (`return`), so what it holds is given back.
 */
export async function writeStream(response: ServerResponse, reply: Reply, stallMs: number): Promise<void> {
  const { first, rest } = reply.stream!;
  response.writeHead(reply.status, reply.headers);
  cutOffWhenStalled(response, stallMs);
  try {
    for (let next = first; !next.done; next = await rest.next()) {
      if (response.destroyed) break;
      if (!response.write(next.value)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
    }
    response.end();
  } catch (error) {
    response.destroy(error instanceof Error ? error : undefined);
  } finally {
    await rest.return?.();
  }
}
