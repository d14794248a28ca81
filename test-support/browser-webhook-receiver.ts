/**
 * A webhook receiver for the browser tests: a real node:http server on 127.0.0.1 and a free port that keeps
 * every request it gets and answers as the test says (200 by default; 500 with a body, for one plant only,
 * and so on). The server under test may send here because the suite runs it with WEBHOOKS_ALLOW_HTTP=1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhook } from 'standardwebhooks';

export type Received = { headers: Record<string, string>; body: string };
export type Answer = { status: number; body?: string; contentType?: string };

export type Receiver = {
  url: string;
  received: Received[];
  /** How to answer each request; by default 200 "ok". */
  answer: (request: Received) => Answer;
  /** Resolves to the first request `match` accepts, waiting for it up to `timeoutMs`. */
  waitFor: (match: (request: Received) => boolean, timeoutMs?: number) => Promise<Received>;
  close: () => Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
      const entry = { headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      const answer = receiver.answer(entry);
      response.writeHead(answer.status, { 'content-type': answer.contentType ?? 'text/plain; charset=utf-8' });
      response.end(answer.body ?? 'ok');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks/plants`,
    received,
    answer: () => ({ status: 200 }),
    async waitFor(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the receiver got no matching request within ${timeoutMs} ms (it got ${received.length})`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, left);
          waiters.add(wake);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** The event in a webhook body: its type and plant id (as its digits, exactly). */
export function eventOf(request: Received): { type: string; plantId: string | null } {
  const type = /^\{"type":"([^"]+)"/.exec(request.body)?.[1] ?? '';
  return { type, plantId: /"data":\{"id":(-?\d+)/.exec(request.body)?.[1] ?? null };
}

/** Whether the delivery verifies with `secret`, as a receiver using the Standard Webhooks library checks it. */
export function verifies(request: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
}
