import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BODY_LIMIT_BYTES, createRestEdge } from '@/server/rest/edge';
import { signIn } from '@/test/actors';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

import { headerValue, NodeBodyReader, serveEdge, wireHeaders } from './node-bridge';

const log = { info: () => {}, error: () => {} };
const edge = createRestEdge({
  router: appRouter,
  createContext,
  log,
  checkHealth: async () => true,
  cors: { allowedOrigins: ['https://app.example'] },
});

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((request, response) => {
    serveEdge(edge.answer, request, response).catch((error: unknown) => {
      response.statusCode = 599;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Exchange = { status: number; rawHeaders: string[]; body: string };

/** One request over node:http, answered with the headers exactly as they came on the wire. */
function exchange(method: string, path: string, headers: Record<string, string | string[]> = {}, body?: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers: { host: 'plants.test', ...headers }, agent: false }, (incoming: IncomingMessage) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode!, rawHeaders: incoming.rawHeaders, body: text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The headers of an exchange as name/value pairs, without what node:http adds or what differs per request. */
function appHeaders(rawHeaders: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) pairs.push([rawHeaders[index]!, rawHeaders[index + 1]!]);
  return pairs.filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'x-request-id'].includes(name.toLowerCase()));
}

describe('the node:http bridge to the REST edge', () => {
  it('answers every kind of request exactly as the fetch handler does: status, headers, body', async () => {
    const { token } = await signIn('bridge-same');
    const auth = { authorization: `Bearer ${token}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const create = (body: string) => async () => {
      const response = await edge(new Request('http://plants.test/api/plants', { method: 'POST', headers: json, body }));
      expect(response.status).toBe(200);
    };
    const remove = (id: string) => async () => {
      const response = await edge(new Request(`http://plants.test/api/plants/${id}`, { method: 'DELETE', headers: auth }));
      expect(response.status).toBe(204);
    };
    const max = '{"id": 9223372036854775807, "name": "Max"}';
    const tagged = '{"id": 9223372036854775806, "name": "Tagged", "tag": "edge"}';
    // Each case runs over node:http first, then through the fetch handler; `undo` puts the store back
    // in between, so both see the same state.
    const cases: { method: string; path: string; headers: Record<string, string>; body?: string; undo?: () => Promise<void> }[] = [
      { method: 'POST', path: '/api/plants', headers: json, body: max, undo: remove('9223372036854775807') },
      { method: 'POST', path: '/api/plants', headers: json, body: tagged, undo: remove('9223372036854775806') },
      { method: 'GET', path: '/api/plants?limit=1', headers: auth },
      { method: 'HEAD', path: '/api/plants?limit=1', headers: auth },
      { method: 'GET', path: '/api/plants?limit=1&after=9223372036854775806', headers: { ...auth, origin: 'https://app.example' } },
      { method: 'OPTIONS', path: '/api/plants', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } },
      { method: 'DELETE', path: '/api/plants/9223372036854775806', headers: auth, undo: create(tagged) },
      { method: 'DELETE', path: '/api/plants/9223372036854775807', headers: auth, undo: create(max) },
      { method: 'GET', path: '/api/plants', headers: {} },
      { method: 'GET', path: '/api/plants', headers: { authorization: 'Bearer nope' } },
      { method: 'PUT', path: '/api/plants', headers: auth, body: '{}' },
      { method: 'GET', path: '/api/nowhere', headers: {} },
      { method: 'POST', path: '/api/plants', headers: json, body: '{"id": 1, "id": 1, "name": "x"}' },
      { method: 'POST', path: '/api/plants', headers: json, body: '{"id": 9223372036854775808, "name": "x"}' },
      { method: 'POST', path: '/api/plants', headers: { ...auth, 'content-type': 'text/plain' }, body: 'hello' },
      { method: 'GET', path: '/api/health', headers: {} },
      { method: 'GET', path: '/api/openapi.json', headers: {} },
    ];
    for (const { method, path, headers, body, undo } of cases) {
      const label = `${method} ${path} ${body ?? ''}`;
      const viaNode = await exchange(method, path, headers, body);
      await undo?.();
      const viaFetch = await edge(new Request(`http://plants.test${path}`, { method, headers, body }));
      expect(viaNode.status, label).toBe(viaFetch.status);
      expect(appHeaders(viaNode.rawHeaders), label).toEqual([...viaFetch.headers].filter(([name]) => name !== 'x-request-id'));
      expect(viaNode.body, label).toBe(await viaFetch.text());
    }
  });

  it('writes the headers in lower case and sorted, as a fetch Response listed them, then node:http its own', async () => {
    const { rawHeaders } = await exchange('GET', '/api/nowhere');
    const names = rawHeaders.filter((_, index) => index % 2 === 0);
    expect(names).toEqual(['cache-control', 'content-type', 'x-request-id', 'Date', 'Connection', 'Content-Length']);
  });

  it('reads a repeated Authorization as fetch does, joined, so two tokens are not a valid one', async () => {
    const { token } = await signIn('bridge-twice');
    const once = await exchange('GET', '/api/plants', { authorization: `Bearer ${token}` });
    expect(once.status).toBe(200);
    const twice = await exchange('GET', '/api/plants', { authorization: [`Bearer ${token}`, `Bearer ${token}`] });
    expect(twice.status).toBe(401);
  });

  it('answers a huge body 413 after 64 KiB, closes the connection, and lets the client read the answer', { timeout: 20_000 }, async () => {
    const { token } = await signIn('bridge-flood');
    const answer = await new Promise<{ text: string; reset: boolean; sent: number }>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      let sent = 0;
      let reset = false;
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      socket.write(`POST /api/plants HTTP/1.1\r\nHost: plants.test\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const pump = () => {
        while (sent < 4 * 1024 * 1024 && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`)) return void socket.once('drain', pump);
        }
      };
      pump();
      socket.on('data', (data) => (text += data));
      socket.on('error', () => (reset = true));
      socket.on('close', () => resolve({ text, reset, sent }));
    });
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.text.toLowerCase()).toContain('connection: close');
    expect(answer.text).toContain(`{"error":41300,"message":"the body must be at most ${BODY_LIMIT_BYTES} bytes"}`);
  });
});

describe('headerValue', () => {
  it('finds a header in any case, joins repeats with ", " and strips only HTTP white space at the ends', () => {
    const raw = ['Content-Type', ' application/json\t', 'X-Many', 'a', 'x-many', 'b', 'Origin', '\u000bvalue\u00a0'];
    expect(headerValue(raw, 'content-type')).toBe('application/json');
    expect(headerValue(raw, 'x-many')).toBe('a, b');
    expect(headerValue(raw, 'origin')).toBe('\u000bvalue\u00a0');
    expect(headerValue(raw, 'authorization')).toBeNull();
  });
});

describe('wireHeaders', () => {
  it('lists names in lower case, sorted', () => {
    expect(wireHeaders({ 'X-Request-Id': '1', 'Content-Type': 'application/json', Allow: 'GET' })).toEqual([
      ['allow', 'GET'],
      ['content-type', 'application/json'],
      ['x-request-id', '1'],
    ]);
  });
});

/** A stand-in for an IncomingMessage: a stream the test writes the body into. */
function fakeRequest() {
  return new PassThrough() as unknown as IncomingMessage & PassThrough;
}

describe('NodeBodyReader', () => {
  it('reads the chunks in order, then the end', async () => {
    const request = fakeRequest();
    let abandoned = false;
    const reader = new NodeBodyReader(request, () => (abandoned = true));
    request.write('ab');
    request.end('cd');
    const chunks: string[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) chunks.push(Buffer.from(chunk.value).toString());
    expect(chunks.join('')).toBe('abcd');
    await reader.cancel();
    expect(abandoned).toBe(false);
  });

  it('reads one chunk ahead and no further until asked', async () => {
    const request = fakeRequest();
    const reader = new NodeBodyReader(request, () => {});
    for (let index = 0; index < 5; index++) request.write(Buffer.alloc(1024, 0x20));
    await new Promise((resolve) => setImmediate(resolve));
    expect(request.isPaused()).toBe(true);
    expect(request.readableLength).toBeGreaterThanOrEqual(3 * 1024);
    expect((await reader.read()).value?.byteLength).toBe(1024);
  });

  it('stops reading when cancelled mid-body and reports the body abandoned', async () => {
    const request = fakeRequest();
    let abandoned = false;
    const reader = new NodeBodyReader(request, () => (abandoned = true));
    request.write('first');
    const pending = (await reader.read(), reader.read());
    await reader.cancel();
    expect(abandoned).toBe(true);
    expect(await pending).toEqual({ done: true, value: undefined });
    request.write('more');
    await new Promise((resolve) => setImmediate(resolve));
    expect(request.listenerCount('data')).toBe(0);
    expect(request.isPaused()).toBe(true);
  });

  it('rejects reads once the request fails', async () => {
    const request = fakeRequest();
    const reader = new NodeBodyReader(request, () => {});
    const pending = reader.read();
    request.destroy(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    await expect(reader.read()).rejects.toThrow('client went away');
  });
});
