/**
 * One server per test file, and the assertions every file shares. Every response a client from here
 * receives is checked against the server's own OpenAPI document.
 */
import http from 'node:http';

import { afterAll, beforeAll, expect } from 'vitest';

import { errorCatalog, type ErrorKind } from '@/shared/errors';

import { type Conformance, loadConformance } from './openapi-conformance';
import { api, type ApiClient, type ApiResponse, describeExchange } from './http-client';
import { type RunningServer, startServer } from './server-process';

export type TestServer = RunningServer & {
  conformance: Conformance;
  /** A client for `token` (none for null/undefined) whose every response is checked against the document. */
  client: (token?: string | null) => ApiClient;
  /** A client without the document check, for requests the document does not describe on purpose. */
  rawClient: (token?: string | null) => ApiClient;
  admin: ApiClient;
  anonymous: ApiClient;
};

/** Starts a server for the enclosing file or describe block (`env`: extra environment for it). */
export function setupServer(options: { env?: Record<string, string> } = {}): TestServer {
  const context = {} as TestServer;
  beforeAll(async () => {
    const server = await startServer({ env: options.env });
    try {
      const conformance = await loadConformance(server.baseUrl);
      const client = (token?: string | null) => api(server.baseUrl, token, (response) => conformance.expectConforms(response));
      Object.assign(context, server, {
        conformance,
        client,
        rawClient: (token?: string | null) => api(server.baseUrl, token),
        admin: client(server.adminToken),
        anonymous: client(null),
      });
    } catch (error) {
      await server.stop();
      throw error;
    }
  });
  afterAll(async () => {
    await context.stop?.();
  });
  return context;
}

/** A client for a server a file started itself, with the OpenAPI check every client from here applies. */
export async function checkedClient(running: RunningServer, token: string | null): Promise<ApiClient> {
  const conformance = await loadConformance(running.baseUrl);
  return api(running.baseUrl, token, (response) => conformance.expectConforms(response));
}

/** Ids unique within a file, spread so files and tests do not step on each other. */
export function idSource(start: bigint): () => bigint {
  let next = start;
  return () => next++;
}

/** What a client must never read in an error message. */
const LEAKS: [string, RegExp][] = [
  ['prisma', /prisma/i],
  ['sqlite', /sqlite/i],
  ['PostgreSQL', /postgres|\bpg_|relation "|violates .* constraint|\bSQLSTATE\b/i],
  ['SQL', /\bSELECT\b|\bINSERT\b|\bDELETE FROM\b|\bUPDATE\b.+\bSET\b/],
  ['a stack frame', /^[ \t]*at \S|\([^\s()]+:\d+:\d+\)|node_modules/m],
  ['tRPC', /trpc/i],
  ['zod', /zod/i],
  ['a JS type name', /\bbigint\b|undefined|\[object /i],
];

export function expectNoInternalDetail(message: string, context = ''): void {
  for (const [what, pattern] of LEAKS) {
    expect(pattern.test(message), `the message reveals ${what}: ${JSON.stringify(message)}${context ? `\n${context}` : ''}`).toBe(false);
  }
}

export function expectJsonContentType(response: ApiResponse): void {
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  expect(mediaType, `Content-Type of\n${describeExchange(response)}`).toBe('application/json');
}

/**
 * The contract's error shape: the status, `Content-Type: application/json`, a body of exactly
 * `{error, message}` with the expected value, and a message with no internal detail. The failure is named
 * by its kind in the error catalogue, which gives its status and value; a test about the wire numbers
 * themselves may still give them (status, value).
 */
export function expectError(response: ApiResponse, kind: ErrorKind, message?: RegExp | string): void;
export function expectError(response: ApiResponse, status: number, value: number, message?: RegExp | string): void;
export function expectError(response: ApiResponse, ...args: [ErrorKind, (RegExp | string)?] | [number, number, (RegExp | string)?]): void {
  const [status, value, message] =
    typeof args[0] === 'string' ? [errorCatalog[args[0]].status, errorCatalog[args[0]].value, args[1] as RegExp | string | undefined] : (args as [number, number, (RegExp | string)?]);
  const exchange = describeExchange(response);
  expect(response.status, `status of\n${exchange}`).toBe(status);
  expectJsonContentType(response);
  expect(response.json, `body of\n${exchange}`).toBeTypeOf('object');
  expect(Object.keys(response.json ?? {}).sort(), `keys of the error body of\n${exchange}`).toEqual(['error', 'message']);
  expect(response.json.error, `error value of\n${exchange}`).toBe(BigInt(value));
  expect(response.json.message, `message of\n${exchange}`).toBeTypeOf('string');
  expect(response.json.message.trim().length, `message of\n${exchange}`).toBeGreaterThan(0);
  expectNoInternalDetail(response.json.message, exchange);
  if (message !== undefined) {
    if (typeof message === 'string') expect(response.json.message, `message of\n${exchange}`).toContain(message);
    else expect(response.json.message, `message of\n${exchange}`).toMatch(message);
  }
}

export function expectStatus(response: ApiResponse, status: number): void {
  expect(response.status, describeExchange(response)).toBe(status);
}

/** `Link: <url>; rel="next"` → the URL, or undefined when there is no next link. */
export function nextLink(response: ApiResponse): string | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!match) continue;
    // The parameters one by one: a single pattern for `rel="… next …"` backtracked (regexp/no-super-linear-backtracking).
    const rel = match[2]!.split(';').find((parameter) => /^\s*rel\s*=/i.test(parameter));
    const relations = rel?.slice(rel.indexOf('=') + 1).replaceAll('"', '').trim().toLowerCase().split(/\s+/);
    if (relations?.includes('next')) return match[1];
  }
  return undefined;
}

export function plantBody(id: bigint | number | string, name: string, tag?: string): string {
  return `{"id": ${id}, "name": ${JSON.stringify(name)}${tag === undefined ? '' : `, "tag": ${JSON.stringify(tag)}`}}`;
}

/**
 * Polls with `client` until its token is refused (401, error 40101), failing if it is still accepted
 * `boundMs` after `since`; resolves to the milliseconds it took. For revokes made by another process,
 * which a server honours once its cached acceptance of the token lapses.
 */
export async function msUntilRefused(client: ApiClient, since: number, boundMs: number): Promise<number> {
  for (;;) {
    const response = await client.get('/api/plants?limit=1');
    const elapsed = Date.now() - since;
    if (response.status === 401) {
      expectError(response, 'invalidToken');
      return elapsed;
    }
    expectStatus(response, 200);
    expect(elapsed, `the token is still accepted ${elapsed} ms after its revoke (bound ${boundMs} ms)`).toBeLessThan(boundMs);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One create over a keep-alive agent, for writers that must not stop at a refused or cut connection (a
 * SIGKILL, a backup under way): the status, or null when no whole answer came.
 */
export function createOver(agent: http.Agent, baseUrl: string, token: string, id: bigint, options: { name: string; timeoutMs: number }): Promise<number | null> {
  return new Promise((resolve) => {
    const body = Buffer.from(plantBody(id, `${options.name} ${id}`));
    const request = http.request(
      `${baseUrl}/api/plants`,
      { method: 'POST', agent, timeout: options.timeoutMs, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': body.length } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.complete ? (response.statusCode ?? 0) : null));
        response.on('error', () => resolve(null));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(null));
    request.end(body);
  });
}
