/**
 * The decisions the contract left open and docs/api.md writes down ("Decisions the contract left open"):
 * HEAD and OPTIONS, caching, CORS, query parameters, the health check, the 500 message's request id.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, plantBody, setupServer } from '@test-support/api-fixture';

const server = setupServer();

beforeAll(async () => {
  for (const id of [1, 2, 3]) expectStatus(await server.admin.post('/api/plants', plantBody(id, `plant ${id}`)), 200);
});

describe('HEAD and OPTIONS', () => {
  it('answers HEAD /api/plants like GET, without a body', async () => {
    const get = await server.admin.get('/api/plants?limit=1');
    const head = await server.admin.request('HEAD', '/api/plants?limit=1');
    expectStatus(head, 200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('link')).toBe(get.headers.get('link'));
  });

  it('answers HEAD without a token with 401 and the challenge', async () => {
    const head = await server.anonymous.request('HEAD', '/api/plants');
    expectStatus(head, 401);
    expect(head.headers.get('www-authenticate')).toBe('Bearer realm="plants"');
  });

  it('answers OPTIONS /api/plants with 204 and Allow: GET, POST (and HEAD, OPTIONS)', async () => {
    const response = await server.anonymous.request('OPTIONS', '/api/plants');
    expectStatus(response, 204);
    const allow = (response.headers.get('allow') ?? '').split(',').map((method) => method.trim());
    expect(allow).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(allow).not.toContain('DELETE');
  });

  it('answers OPTIONS /api/plants/1 with 204 and Allow: DELETE', async () => {
    const response = await server.anonymous.request('OPTIONS', '/api/plants/1');
    expectStatus(response, 204);
    expect((response.headers.get('allow') ?? '').split(',').map((method) => method.trim())).toContain('DELETE');
  });
});

describe('caching and CORS', () => {
  it('marks plant responses Cache-Control: no-store (they depend on the token), the list private, no-cache (it is conditional)', async () => {
    for (const response of [
      await server.admin.post('/api/plants', plantBody(10, 'cached?')),
      await server.admin.delete('/api/plants/10'),
      await server.anonymous.get('/api/plants'),
    ]) {
      expect(response.headers.get('cache-control'), `${response.request.method} ${response.status}`).toBe('no-store');
    }
    // The list's 200 may be kept by the client only, and only after asking again (docs/contract.md, 1.2.0).
    expect((await server.admin.get('/api/plants')).headers.get('cache-control')).toBe('private, no-cache');
  });

  it('sends no CORS headers to another origin by default', async () => {
    const response = await server.admin.get('/api/plants', { headers: { Origin: 'https://evil.example' } });
    expectStatus(response, 200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('answers a CORS preflight from another origin without allowing it', async () => {
    const response = await server.anonymous.request('OPTIONS', '/api/plants', {
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('query parameters', () => {
  it('ignores unknown query parameters', async () => {
    const response = await server.admin.get('/api/plants?limit=2&color=green');
    expectStatus(response, 200);
    expect(response.json.map((plant: { id: bigint }) => plant.id)).toEqual([1n, 2n]);
  });

  it('rejects a repeated limit with 400, error 40007', async () => {
    expectError(await server.admin.get('/api/plants?limit=1&limit=2'), 'invalidQueryParameter');
  });

  it('rejects a repeated after with 400, error 40007', async () => {
    expectError(await server.admin.get('/api/plants?after=1&after=2'), 'invalidQueryParameter');
  });
});

describe('request ids and health', () => {
  it('gives every response its own X-Request-Id', async () => {
    const ids = [await server.admin.get('/api/plants'), await server.anonymous.get('/api/plants'), await server.admin.get('/api/nope')].map((response) =>
      response.headers.get('x-request-id'),
    );
    for (const id of ids) expect(id).toMatch(/^\S{8,}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers GET /api/health without a token: 200 {"status":"ok","database":"ok"} and nothing more (the webhook counts are the operator\'s)', async () => {
    const response = await server.anonymous.get('/api/health', { authorization: null });
    expectStatus(response, 200);
    expect(response.json).toEqual({ status: 'ok', database: 'ok' });
  });
});
