/**
 * A webhook receiver for the tests: a real node:http server on loopback that records every request it
 * gets and answers as the test says (a status, a body, a redirect, or nothing at all).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceivedWebhook = { at: number; headers: http.IncomingHttpHeaders; body: string; path: string };

/** What to answer; `hang` keeps the request open until the receiver closes. */
export type Answer = { status: number; body?: string | Buffer; headers?: Record<string, string> } | { hang: true };

export type Receiver = {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The most requests that were open at one moment. */
  maxConcurrent: () => number;
  /** The requests open now. */
  openNow: () => number;
  answer: (respond: (request: ReceivedWebhook, index: number) => Answer) => void;
  /** Resolves when `count` requests have arrived (fails after `timeoutMs`). */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedWebhook[]>;
  close: () => Promise<void>;
};

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  let respond: (request: ReceivedWebhook, index: number) => Answer = () => ({ status: 204 });
  let open = 0;
  let maxOpen = 0;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    response.once('close', () => open--);
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const entry: ReceivedWebhook = { at: Date.now(), headers: request.headers, body: Buffer.concat(parts).toString('utf8'), path: request.url ?? '' };
      received.push(entry);
      const answer = respond(entry, received.length - 1);
      if ('hang' in answer) {
        hanging.add(response);
        return;
      }
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actualPort}/hook`,
    port: actualPort,
    received,
    maxConcurrent: () => maxOpen,
    openNow: () => open,
    answer: (next) => {
      respond = next;
    },
    waitFor: async (count, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} of ${count} webhooks within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
