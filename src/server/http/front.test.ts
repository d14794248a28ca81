import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import type { Logger } from '@/server/log';
import { appRouter } from '@/server/app-router';
import type { Context } from '@/server/trpc/init';
import { BODY_LIMIT_BYTES, JSON_MAX_DEPTH, kib } from '@/shared/limits';
import { signIn } from '@test-support/actors';

import { createFront, type FrontOptions } from './front';
import type { PagesDoor } from './pages';
import { startHttpServer } from './server';
import { errorCatalog } from '@/shared/errors';

/**
 * The front over real HTTP, in this process: a node:http server on a free port, the unit database behind
 * it. The end-to-end suites (e2e/api) run the built server as a process; these tests reach inside (a
 * failing router, a recorded log) where that would be awkward.
 */
const logged: Record<string, unknown>[] = [];
const log: Logger = { info: () => {}, warn: () => {}, error: (entry) => logged.push(entry) };
const noPages: PagesDoor = async (_request, response) => {
  response.statusCode = 404;
  response.end();
};
const servers: { close: () => Promise<void> }[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

async function serve(options: Partial<Omit<FrontOptions, 'config'>> & { config?: Partial<FrontOptions['config']> } = {}): Promise<string> {
  const front = createFront({
    router: appRouter,
    log,
    checkHealth: async () => {},
    pages: noPages,
    ...options,
    config: {
      RATE_LIMIT_PER_TOKEN: null,
      RATE_LIMIT_AUTH_FAILURES: null,
      TRUST_PROXY: null,
      CORS_ALLOWED_ORIGINS: null,
      PUBLIC_URL: undefined,
      ...options.config,
    },
  });
  const running = await startHttpServer(front, { port: 0, hostname: '127.0.0.1', maxConnections: 100, maxConnectionsPerAddress: 1000, trustProxy: null, log });
  servers.push(running);
  return `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
}

const base = await serve();

function post(path: string, body: BodyInit, headers: Record<string, string>, at = base) {
  return fetch(`${at}${path}`, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

/** A request body that never ends. */
function endlessBody() {
  const chunk = new Uint8Array(1024).fill(0x20);
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(chunk);
    },
  });
}

describe('the REST chain', () => {
  it(`stops reading a body at ${kib(BODY_LIMIT_BYTES)} and answers 413, closing the connection`, async () => {
    const { token } = await signIn('front-streamer');
    const response = await post('/api/plants', endlessBody(), { authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toEqual({ error: errorCatalog.bodyTooLarge.value, message: `the body must be at most ${BODY_LIMIT_BYTES} bytes` });
  });

  it('answers an anonymous caller 401 before reading its body', async () => {
    const response = await post('/api/plants', endlessBody(), { 'content-type': 'application/json' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plants"');
  });

  it('takes a charset parameter that says UTF-8 and refuses any other', async () => {
    const { token } = await signIn('front-charset');
    const body = '{"id": 601, "name": "Fern"}';
    const ok = await post('/api/plants', body, { authorization: `Bearer ${token}`, 'content-type': 'Application/JSON; charset=UTF-8' });
    expect(ok.status).toBe(200);
    const latin = await post('/api/plants', body, { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=latin1' });
    expect(latin.status).toBe(415);
    expect((await latin.json()).error).toBe(errorCatalog.unsupportedMediaType.value);
  });

  it('refuses a body that is not UTF-8', async () => {
    const { token } = await signIn('front-bytes');
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    const response = await post('/api/plants', bytes, { authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: errorCatalog.invalidJson.value, message: 'the body is not valid UTF-8' });
  });

  it('percent-decodes path parameters', async () => {
    const { token, caller } = await signIn('front-decoder');
    await caller.plants.create({ id: 701n, name: 'Encoded' });
    const response = await fetch(`${base}/api/plants/%37%301`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('answers HEAD like GET without a body, and OPTIONS with the allowed methods', async () => {
    const { token } = await signIn('front-head');
    const head = await fetch(`${base}/api/plants`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(await head.text()).toBe('');
    const options = await fetch(`${base}/api/plants/1`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('PATCH, DELETE, OPTIONS');
  });

  it('gives every answer a request id', async () => {
    const response = await fetch(`${base}/api/nowhere`);
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers out-of-range ids in body, query and path with 400', async () => {
    const { token } = await signIn('front-bounds');
    const headers = { authorization: `Bearer ${token}` };
    const tooBig = '9223372036854775808';
    const responses = await Promise.all([
      post('/api/plants', `{"id": ${tooBig}, "name": "x"}`, { ...headers, 'content-type': 'application/json' }),
      fetch(`${base}/api/plants?after=-9223372036854775809`, { headers }),
      fetch(`${base}/api/plants/${tooBig}`, { method: 'DELETE', headers }),
    ]);
    expect(await Promise.all(responses.map(async (response) => [response.status, (await response.json()).error]))).toEqual([
      [400, 40004],
      [400, 40007],
      [400, 40008],
    ]);
  });

  it('ignores undeclared query parameters, even ones named like Object properties, and refuses repeated ones', async () => {
    const { token, caller } = await signIn('front-query');
    for (const id of [11n, 12n, 13n]) await caller.plants.create({ id, name: `Q${id}` });
    const headers = { authorization: `Bearer ${token}` };
    for (const query of ['constructor=1', '__proto__=1', 'toString=x&hasOwnProperty=y', 'unknown=1']) {
      expect((await fetch(`${base}/api/plants?${query}`, { headers })).status, query).toBe(200);
    }
    const page = await fetch(`${base}/api/plants?limit=1&after=11&other=x`, { headers });
    expect(await page.text()).toBe('[{"id":12,"name":"Q12"}]');
    expect(page.headers.get('link')).toBe('</api/plants?limit=1&after=12>; rel="next"');
    const repeated = await fetch(`${base}/api/plants?limit=1&limit=2`, { headers });
    expect(repeated.status).toBe(400);
    expect((await repeated.json()).error).toBe(errorCatalog.invalidQueryParameter.value);
  });

  it('answers a body nested too deeply for the parser with 400, not an internal message', async () => {
    const { token } = await signIn('front-nesting');
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
    const response = await post('/api/plants', deep, { authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: errorCatalog.jsonTooDeep.value, message: `the body nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep` });
  });

  it('keeps concurrent calls apart: each request gets its own outcome', async () => {
    const users = await Promise.all(['front-a', 'front-b', 'front-c'].map((name) => signIn(name)));
    const answers = await Promise.all(
      users.map(async ({ token }, index) => {
        const body = index === 1 ? '{"id": 1, "name": ""}' : `{"id": ${9007199254740995n + BigInt(index) * 2n}, "name": "P${index}"}`;
        const response = await post('/api/plants', body, { authorization: `Bearer ${token}`, 'content-type': 'application/json' });
        return [response.status, await response.text()];
      }),
    );
    expect(answers[0]).toEqual([200, '{"id":9007199254740995,"name":"P0"}']);
    expect(answers[1]![0]).toBe(400);
    expect(answers[2]).toEqual([200, '{"id":9007199254740999,"name":"P2"}']);
  });

  it('builds the Link from PUBLIC_URL when it is set, never from Host', async () => {
    const at = await serve({ config: { PUBLIC_URL: 'https://plants.example.com' } });
    const { token, caller } = await signIn('front-public-url');
    for (const id of [21n, 22n]) await caller.plants.create({ id, name: `L${id}` });
    const page = await fetch(`${at}/api/plants?limit=1&after=20`, { headers: { authorization: `Bearer ${token}`, host: 'evil.example' } });
    expect(page.headers.get('link')).toBe('<https://plants.example.com/api/plants?limit=1&after=21>; rel="next"');
  });
});

describe('the headers of an answer', () => {
  /** The raw header names of an answer, lower-cased, as they came on the wire (fetch would join repeats). */
  function rawHeaderNames(path: string, options: { method?: string; headers?: Record<string, string> } = {}) {
    return new Promise<{ status: number; names: string[]; requestId: string | undefined }>((resolve, reject) => {
      const request = http.request(`${base}${path}`, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
        response.resume();
        const names = response.rawHeaders.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
        resolve({ status: response.statusCode!, names, requestId: response.headers['x-request-id'] as string | undefined });
      });
      request.on('error', reject);
      request.end();
    });
  }

  it('carries each header once, the request id and the API headers included, whoever wrote the answer', async () => {
    const { token } = await signIn('front-headers');
    const authorization = { Authorization: `Bearer ${token}` };
    const answers = await Promise.all([
      // A conditional list: its Cache-Control replaces the API headers' no-store.
      rawHeaderNames('/api/plants?limit=1', { headers: authorization }),
      rawHeaderNames('/api/plants/1', { headers: authorization }),
      rawHeaderNames('/api/plants', { method: 'OPTIONS' }),
      rawHeaderNames('/api/no-such-route'),
      rawHeaderNames('/api/health'),
      rawHeaderNames('/api/trpc/plants.list', { headers: authorization }),
      rawHeaderNames('/'),
    ]);
    for (const { status, names, requestId } of answers) {
      expect(requestId, `status ${status}`).toMatch(/^[0-9a-f-]{36}$/);
      expect(names.filter((name, index) => names.indexOf(name) !== index), `status ${status}: ${names.join(', ')}`).toEqual([]);
    }
    const [list] = answers;
    expect(list!.names).toEqual(expect.arrayContaining(['x-request-id', 'x-content-type-options', 'cache-control', 'etag', 'content-length']));
  });
});

describe('the front on a failing procedure', () => {
  const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();
  const failingRouter = t.router({
    explode: t.procedure
      .meta({ openapi: { method: 'GET', path: '/explode', protect: false } })
      .input(z.object({}))
      .output(z.object({}))
      .query(() => {
        throw new Error('SQLITE_CORRUPT: secret table "Plant" at /var/lib/secret.db');
      }),
  });

  it('answers 500 with a generic message and logs the cause under the request id', async () => {
    const at = await serve({ router: failingRouter });
    const response = await fetch(`${at}/api/explode`);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: number; message: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe(errorCatalog.internal.value);
    expect(body.message).not.toMatch(/SQLITE|secret|Plant/);
    const requestId = response.headers.get('x-request-id')!;
    expect(body.message).toContain(requestId);
    const entry = logged.find((candidate) => candidate.requestId === requestId);
    expect(String((entry?.err as Error | undefined)?.message)).toContain('SQLITE_CORRUPT');
  });
});

describe('the shared guards', () => {
  it('answers 429 with Retry-After and RateLimit headers once a token spends its burst, on either door', async () => {
    const at = await serve({ config: { RATE_LIMIT_PER_TOKEN: { burst: 3, perSecond: 0.01 } } });
    const { token } = await signIn('front-hasty');
    const headers = { authorization: `Bearer ${token}` };
    expect((await fetch(`${at}/api/plants`, { headers })).status).toBe(200);
    // A batch of two calls costs two.
    expect((await fetch(`${at}/api/trpc/me,me?batch=1&input=%7B%7D`, { headers })).status).toBe(200);
    for (const path of ['/api/plants', '/api/trpc/me']) {
      const refused = await fetch(`${at}${path}`, { headers });
      expect(refused.status, path).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit-limit')).toBe('3');
    }
  });

  it('limits failed authentications per client address, on either door', async () => {
    const at = await serve({ config: { RATE_LIMIT_AUTH_FAILURES: { burst: 2, perSecond: 0.01 } } });
    const guess = (path: string) => fetch(`${at}${path}`, { headers: { authorization: `Bearer pst_${'x'.repeat(43)}` } });
    expect((await guess('/api/plants')).status).toBe(401);
    expect((await guess('/api/trpc/me')).status).toBe(401);
    expect((await guess('/api/plants')).status).toBe(429);
    expect((await guess('/api/trpc/me')).status).toBe(429);
  });

  it('sends no CORS headers unless origins are configured, and the configured ones when they are', async () => {
    const preflight = (at: string, origin: string) => fetch(`${at}/api/plants`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect((await preflight(base, 'https://app.example')).headers.get('access-control-allow-origin')).toBeNull();
    const open = await serve({ config: { CORS_ALLOWED_ORIGINS: ['https://app.example'] } });
    const allowed = await preflight(open, 'https://app.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Idempotency-Key');
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect((await preflight(open, 'https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reports health without a token, and 503 when the database is unreachable', async () => {
    const healthy = await fetch(`${base}/api/health`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: 'ok', database: 'ok' });
    const broken = await serve({ checkHealth: () => Promise.reject(new Error('disk gone')) });
    const unhealthy = await fetch(`${broken}/api/health`);
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toEqual({ error: errorCatalog.unavailable.value, message: 'the database cannot be reached' });
    const post = await fetch(`${base}/api/health`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it("shows the operator's figures to the METRICS_TOKEN holder only, never to an anonymous caller", async () => {
    const token = 'o'.repeat(40);
    const at = await serve({ config: { METRICS_TOKEN: token }, operatorHealth: async () => ({ webhooks: { pending: 3, failing: 1, failed: 2 } }) });
    expect(await (await fetch(`${at}/api/health`)).json()).toEqual({ status: 'ok', database: 'ok' });
    expect(await (await fetch(`${at}/api/health`, { headers: { authorization: `Bearer ${token}x` } })).json()).toEqual({ status: 'ok', database: 'ok' });
    expect(await (await fetch(`${at}/api/health`, { headers: { authorization: `Bearer ${token}` } })).json()).toEqual({
      status: 'ok',
      database: 'ok',
      webhooks: { pending: 3, failing: 1, failed: 2 },
    });
    // Without METRICS_TOKEN nobody holds it.
    const closed = await serve({ operatorHealth: async () => ({ webhooks: { pending: 3, failing: 1, failed: 2 } }) });
    expect(await (await fetch(`${closed}/api/health`, { headers: { authorization: 'Bearer ' } })).json()).toEqual({ status: 'ok', database: 'ok' });
  });

  it('answers health 503 (draining) once a shutdown began, and every other request as before', async () => {
    let draining = false;
    const at = await serve({ isDraining: () => draining });
    expect((await fetch(`${at}/api/health`)).status).toBe(200);
    draining = true;
    const health = await fetch(`${at}/api/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ error: errorCatalog.draining.value, message: 'this instance is shutting down: send new requests to another one' });
    expect((await fetch(`${at}/api/openapi.json`)).status).toBe(200);
  });
});
