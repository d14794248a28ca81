import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { signIn } from '@/test/actors';
import { type Context, createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

import { BODY_LIMIT_BYTES, createRestEdge } from './edge';

const logged: Record<string, unknown>[] = [];
const log = { info: () => {}, error: (entry: Record<string, unknown>) => logged.push(entry) };
const checkHealth = async () => true;
const edge = createRestEdge({ router: appRouter, createContext, log, checkHealth });
const base = 'http://plants.test/api';

/** A request body that never ends, counting how much of it the server pulled. */
function endlessBody() {
  const state = { bytesPulled: 0, cancelled: false };
  const chunk = new Uint8Array(1024).fill(0x20);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.bytesPulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

function post(path: string, body: BodyInit, headers: Record<string, string>) {
  return new Request(`${base}${path}`, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

describe('REST edge', () => {
  it('stops reading a body at 64 KiB and answers 413', async () => {
    const { token } = await signIn('edge-streamer');
    const { stream, state } = endlessBody();
    const response = await edge(post('/plants', stream, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }));
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 41300, message: `the body must be at most ${BODY_LIMIT_BYTES} bytes` });
    expect(state.cancelled).toBe(true);
    expect(state.bytesPulled).toBeLessThan(BODY_LIMIT_BYTES + 64 * 1024);
  });

  it('refuses a declared Content-Length over the limit without reading a byte', async () => {
    const { token } = await signIn('edge-declarer');
    const { stream, state } = endlessBody();
    const response = await edge(
      post('/plants', stream, {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(BODY_LIMIT_BYTES + 1),
      }),
    );
    expect(response.status).toBe(413);
    expect(state.bytesPulled).toBeLessThanOrEqual(1024 * 2);
  });

  it('answers an anonymous caller 401 before reading its body', async () => {
    const { stream, state } = endlessBody();
    const response = await edge(post('/plants', stream, { 'content-type': 'application/json' }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plants"');
    expect(state.bytesPulled).toBeLessThanOrEqual(1024 * 2);
  });

  it('takes a charset parameter that says UTF-8 and refuses any other', async () => {
    const { token } = await signIn('edge-charset');
    const body = '{"id": 601, "name": "Fern"}';
    const ok = await edge(post('/plants', body, { authorization: `Bearer ${token}`, 'content-type': 'Application/JSON; charset=UTF-8' }));
    expect(ok.status).toBe(200);
    const latin = await edge(post('/plants', body, { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=latin1' }));
    expect(latin.status).toBe(415);
    expect((await latin.json()).error).toBe(41500);
  });

  it('refuses a body that is not UTF-8', async () => {
    const { token } = await signIn('edge-bytes');
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    const response = await edge(post('/plants', bytes, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 40000, message: 'the body is not valid UTF-8' });
  });

  it('percent-decodes path parameters', async () => {
    const { token, caller } = await signIn('edge-decoder');
    await caller.plants.create({ id: 701n, name: 'Encoded' });
    const response = await edge(new Request(`${base}/plants/%37%301`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('answers HEAD like GET without a body, and OPTIONS with the allowed methods', async () => {
    const { token } = await signIn('edge-head');
    const head = await edge(new Request(`${base}/plants`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } }));
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(await head.text()).toBe('');
    const options = await edge(new Request(`${base}/plants/1`, { method: 'OPTIONS' }));
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('DELETE, OPTIONS');
  });

  it('gives every response a request id', async () => {
    const response = await edge(new Request(`${base}/nowhere`));
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('REST edge on a failing procedure', () => {
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
  const failingEdge = createRestEdge({ router: failingRouter, createContext, log, checkHealth });

  it('answers 500 with a generic message and logs the cause under the request id', async () => {
    const response = await failingEdge(new Request(`${base}/explode`));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: number; message: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe(50000);
    expect(body.message).not.toMatch(/SQLITE|secret|Plant/);
    const requestId = response.headers.get('x-request-id')!;
    expect(body.message).toContain(requestId);
    const entry = logged.find((candidate) => candidate.requestId === requestId);
    expect(String((entry?.err as Error | undefined)?.message)).toContain('SQLITE_CORRUPT');
  });
});

describe('REST edge limits, CORS and health', () => {
  it('answers 429 with Retry-After and RateLimit headers once a token spends its burst', async () => {
    const limited = createRestEdge({
      router: appRouter,
      createContext,
      log,
      checkHealth,
      rateLimits: { perToken: { burst: 2, perSecond: 0.01 }, authFailuresPerAddress: null },
    });
    const { token } = await signIn('edge-hasty');
    const list = () => limited(new Request(`${base}/plants`, { headers: { authorization: `Bearer ${token}` } }));
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    const refused = await list();
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toBe(42900);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('limits failed authentications per client address, not per token', async () => {
    const limited = createRestEdge({
      router: appRouter,
      createContext,
      log,
      checkHealth,
      rateLimits: { perToken: null, authFailuresPerAddress: { burst: 2, perSecond: 0.01 } },
    });
    const guess = (address: string) =>
      limited(new Request(`${base}/plants`, { headers: { authorization: `Bearer pst_${'x'.repeat(43)}` } }), { remoteAddress: address });
    expect((await guess('10.0.0.1')).status).toBe(401);
    expect((await guess('10.0.0.1')).status).toBe(401);
    expect((await guess('10.0.0.1')).status).toBe(429);
    expect((await guess('10.0.0.2')).status).toBe(401);
  });

  it('sends no CORS headers unless origins are configured, and the configured ones when they are', async () => {
    const preflight = (handler: typeof edge, origin: string) =>
      handler(new Request(`${base}/plants`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } }));
    const closed = await preflight(edge, 'https://app.example');
    expect(closed.headers.get('access-control-allow-origin')).toBeNull();

    const open = createRestEdge({ router: appRouter, createContext, log, checkHealth, cors: { allowedOrigins: ['https://app.example'] } });
    const allowed = await preflight(open, 'https://app.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect((await preflight(open, 'https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reports health without a token, and 503 when the database is unreachable', async () => {
    const healthy = await edge(new Request(`${base}/health`));
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: 'ok', database: 'ok' });
    const broken = createRestEdge({ router: appRouter, createContext, log, checkHealth: () => Promise.reject(new Error('disk gone')) });
    const unhealthy = await broken(new Request(`${base}/health`));
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toEqual({ error: 50300, message: 'the database cannot be reached' });
    expect((await edge(new Request(`${base}/health`, { method: 'POST' }))).status).toBe(405);
  });
});

describe('REST edge on int64 bounds', () => {
  it('answers out-of-range ids in body, query and path with 400 instead of hanging', async () => {
    const { token } = await signIn('edge-bounds');
    const headers = { authorization: `Bearer ${token}` };
    const tooBig = '9223372036854775808';
    const responses = await Promise.all([
      edge(post('/plants', `{"id": ${tooBig}, "name": "x"}`, { ...headers, 'content-type': 'application/json' })),
      edge(new Request(`${base}/plants?after=-9223372036854775809`, { headers })),
      edge(new Request(`${base}/plants/${tooBig}`, { method: 'DELETE', headers })),
    ]);
    expect(await Promise.all(responses.map(async (response) => [response.status, (await response.json()).error]))).toEqual([
      [400, 40004],
      [400, 40007],
      [400, 40008],
    ]);
  });
});

describe('REST edge on a stalled body', () => {
  it('gives up on a body that stops arriving, with 408', { timeout: 20_000 }, async () => {
    const { token } = await signIn('edge-slowpoke');
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id": 1'));
      },
    });
    const started = Date.now();
    const response = await edge(post('/plants', stalled, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }));
    expect(response.status).toBe(408);
    expect((await response.json()).error).toBe(40800);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
  });
});

describe('REST edge on odd query parameters', () => {
  it('ignores undeclared parameters, even ones named like Object properties', async () => {
    const { token } = await signIn('edge-query');
    for (const query of ['constructor=1', '__proto__=1', 'toString=x&hasOwnProperty=y', 'unknown=1']) {
      const response = await edge(new Request(`${base}/plants?${query}`, { headers: { authorization: `Bearer ${token}` } }));
      expect(response.status, query).toBe(200);
    }
  });

  it('answers a body nested too deeply for the parser with 400, not an internal message', async () => {
    const { token } = await signIn('edge-nesting');
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
    const response = await edge(post('/plants', deep, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 40000, message: 'the body is not valid JSON: it nests too deeply' });
  });
});
