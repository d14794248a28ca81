/**
 * The webhook receiver of every suite (unit, API, browser) and the bench: a real node:http server on
 * loopback that records every request it gets and answers as the test says (a status, a body, a redirect,
 * or nothing at all). The server under test may send here because the suites run it with
 * WEBHOOKS_ALLOW_HTTP=1 (the unit tests hand the worker that policy).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhook } from 'standardwebhooks';

export type ReceivedWebhook = { at: number; headers: http.IncomingHttpHeaders; body: string; path: string };

/** What to answer (after `delayMs`, if given); `hang` keeps the request open until the receiver closes. */
export type Answer = { status: number; body?: string | Buffer; headers?: Record<string, string>; delayMs?: number } | { hang: true };

export type Receiver = {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The most requests that were open at one moment. */
  maxConcurrent: () => number;
  /** The requests open now. */
  openNow: () => number;
  /** How to answer from now on (204 until a test says otherwise); `index` counts the requests from 0. */
  answer: (respond: (request: ReceivedWebhook, index: number) => Answer) => void;
  /** Resolves to the first `count` requests once they have arrived (fails after `timeoutMs`). */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedWebhook[]>;
  /** Resolves to the first request `match` accepts, once it has arrived (fails after `timeoutMs`). */
  waitForMatch: (match: (request: ReceivedWebhook) => boolean, timeoutMs?: number) => Promise<ReceivedWebhook>;
  close: () => Promise<void>;
};

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  let respond: (request: ReceivedWebhook, index: number) => Answer = () => ({ status: 204 });
  let open = 0;
  let maxOpen = 0;
  const hanging = new Set<http.ServerResponse>();
  // Woken at each arrival, so a wait ends when its request comes and not at the next tick of a clock.
  const waiters = new Set<() => void>();
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
      if ('hang' in answer) hanging.add(response);
      else if (answer.delayMs) {
        hanging.add(response);
        setTimeout(() => {
          hanging.delete(response);
          if (!response.destroyed) response.writeHead(answer.status, answer.headers).end(answer.body);
        }, answer.delayMs);
      } else {
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
      }
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;

  async function until<T>(found: () => T | undefined, timeoutMs: number, failure: () => string): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = found();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(failure());
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
  }

  return {
    url: `http://127.0.0.1:${actualPort}/hook`,
    port: actualPort,
    received,
    maxConcurrent: () => maxOpen,
    openNow: () => open,
    answer: (next) => {
      respond = next;
    },
    waitFor: (count, timeoutMs = 10_000) =>
      until(
        () => (received.length >= count ? received.slice(0, count) : undefined),
        timeoutMs,
        () => `the receiver got ${received.length} of ${count} webhooks within ${timeoutMs} ms`,
      ),
    waitForMatch: (match, timeoutMs = 15_000) =>
      until(
        () => received.find(match),
        timeoutMs,
        () => `the receiver got no matching request within ${timeoutMs} ms (it got ${received.length})`,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The event in a webhook body: its type and plant id (as its digits, exactly). */
export function eventOf(request: ReceivedWebhook): { type: string; plantId: string | null } {
  const type = /^\{"type":"([^"]+)"/.exec(request.body)?.[1] ?? '';
  return { type, plantId: /"data":\{"id":(-?\d+)/.exec(request.body)?.[1] ?? null };
}

/** Whether the delivery verifies with `secret`, as a receiver using the Standard Webhooks library checks it. */
export function verifies(request: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
